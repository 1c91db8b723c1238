"""Where this build's facts come from: the version and when its ROCm facts were checked.

The date is recorded by hand in cuda2rocm/data/provenance.toml (the day the facts were looked up),
never computed at run time: a build made today from old facts must not claim to be current.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from cuda2rocm import __version__

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

FACTS_FILE = Path(__file__).parent / "data" / "provenance.toml"


@dataclass(frozen=True)
class Facts:
    checked: str  # ISO date the facts were last checked
    rocm: str  # the ROCm releases they were checked against
    torch: str  # the torch release whose cpp_extension/hipify they describe


def facts(path: Path = FACTS_FILE) -> Facts:
    """The recorded provenance; a missing or malformed file is a packaging bug, said plainly."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        return Facts(str(data["checked"]), str(data["rocm"]), str(data["torch"]))
    except (OSError, tomllib.TOMLDecodeError, KeyError) as exc:
        raise RuntimeError(f"{path}: cannot read the facts' provenance ({exc})") from exc


def version_line() -> str:
    """What `cuda2rocm --version` prints."""
    f = facts()
    return (
        f"cuda2rocm {__version__} (ROCm facts checked {f.checked} against ROCm {f.rocm}, "
        f"torch {f.torch})"
    )
