"""CUDA device intrinsics HIP does not declare, by ROCm release, and the ones a project defines.

The table (data/device_functions.tsv, tools/gen_device_functions.py) holds every function CUDA's
device-intrinsic headers declare, with the HIP releases whose headers the compiler found it in.
A port often supplies a missing one itself (`static __device__ __forceinline__ int
__dp4a(int a, int b, int c)` under `#ifdef __HIP_PLATFORM_AMD__`): a name the project defines
or `#define`s where some HIP pass may compile it is provided, and calls of it are ported.
"""

from __future__ import annotations

import csv
import functools
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from importlib import resources

from cuda2rocm.targets import Release, parse_release

#: the releases whose headers the table's columns were compiled against
CHECKED = ("5.2", "6.4", "7.0", "7.1", "7.2")


@dataclass(frozen=True)
class DeviceFunction:
    name: str
    cuda_header: str
    #: the first checked release that declares it; None: none through 7.2
    since: Release | None
    #: HIP 5.2 finds a host declaration of the name (glibc's `__tanhf`) that later releases'
    #: device headers do not: only device code is wrong
    host_declared: bool


@functools.cache
def table() -> dict[str, DeviceFunction]:
    """Names HIP lacks in some checked release: kept only where the name is CUDA's (`__x` or
    `atomicX`), never a plain word a project may use for its own function."""
    text = resources.files("cuda2rocm.data").joinpath("device_functions.tsv").read_text("utf-8")
    lines = (ln for ln in text.splitlines() if not ln.startswith("#"))
    rows = csv.DictReader(lines, delimiter="\t")
    out = {}
    for row in rows:
        name = row["cuda_name"]
        if not (name.startswith("__") or name.startswith("atomic")):
            continue
        have = [row[f"rocm_{r}"] == "yes" for r in CHECKED]
        if all(have):
            continue
        since = None if row["since"] == "-" else parse_release(row["since"])
        out[name] = DeviceFunction(name, row["cuda_header"], since, have[0] and not have[1])
    return out


_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)", re.M)
#: `... __device__ ... NAME(` on one line: a declaration or definition of a device function
_DECLARED = re.compile(
    r"^[^\n;=(){}]*\b(?:__device__|__forceinline__|inline)\b[^\n;=(){}]*?\b(\w+)\s*\(", re.M
)


def definition_offsets(text: str) -> list[tuple[str, int]]:
    """(name, byte offset) of each table name the text `#define`s or declares as a device
    function."""
    names = table()
    if "__" not in text and "atomic" not in text:
        return []
    return [
        (m[1], m.start(1))
        for pattern in (_DEFINE, _DECLARED)
        for m in pattern.finditer(text)
        if m[1] in names
    ]


def definitions(text: str) -> tuple[tuple[str, int], ...]:
    """(name, line) of each table name the text `#define`s or declares as a device function."""
    return tuple((n, text.count("\n", 0, at) + 1) for n, at in definition_offsets(text))


def provided(
    texts: Mapping[str, str],
    reachable: Callable[[str, int], bool],
    defs: Callable[[str, str], Iterable[tuple[str, int]]] | None = None,
) -> dict[str, str]:
    """Table names the project defines at a line some HIP pass may compile: name -> site."""
    defs = defs or (lambda _path, text: definitions(text))
    out: dict[str, str] = {}
    for path, text in texts.items():
        for name, line in defs(path, text):
            if name not in out and reachable(path, line):
                out[name] = f"{path}:{line}"
    return out
