"""device-intrinsics: calls of CUDA device intrinsics that HIP does not declare.

The names are CUDA's own (every function its device-intrinsic headers declare) and the verdict is
the compiler's (tools/gen_device_functions.py: a `using ::NAME;` compiled against HIP 5.2's
hipcc and the ROCm 6.4 ... 7.2 device headers), kept in data/device_functions.tsv; a name a
release lacks fails there with "use of undeclared identifier". A name a later release added is
reported only while `rocm-version` reaches back before it. A name the project defines for HIP
itself (context.device_functions) is ported. Names other rules own (the `*_sync` shuffles and
votes, `__activemask`, `__syncwarp`: warp-mask-32bit; the cache-operator accesses: cache-hints)
are theirs.
"""

from __future__ import annotations

import functools
import re
import sys
from importlib import resources

from cuda2rocm import facts
from cuda2rocm.compat_header import CACHE_HINTS
from cuda2rocm.context.device_functions import DeviceFunction, definition_offsets, table
from cuda2rocm.frontends.cpp import CppRule, hip_excluded
from cuda2rocm.targets import show

from .warp_mask_32bit import SYNC

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

#: owned by other rules
OWNED = frozenset({*SYNC, *CACHE_HINTS, "__activemask", "__syncwarp"})
#: the warp-sync family from ROCm 7.0: declared from 6.2 where the build defines
#: HIP_ENABLE_WARP_SYNC_BUILTINS (data/facts.toml warp-sync-builtins), which torch's
#: extension build does
_WARP_SYNC = re.compile(r"__(match|reduce)_\w+_sync")


@functools.cache
def _classes() -> list[tuple[re.Pattern[str], str, str]]:
    text = resources.files("cuda2rocm.data").joinpath("device_function_classes.toml")
    raw = tomllib.loads(text.read_text("utf-8"))["class"]
    return [(re.compile(c["pattern"]), c["what"], c["instead"]) for c in raw]


def _class_of(name: str) -> tuple[str, str]:
    for pattern, what, instead in _classes():
        if pattern.fullmatch(name):
            return what, instead
    return "a CUDA device intrinsic", "a HIP equivalent or a C++ fallback under a HIP test"


class Rule(CppRule):
    def check(self) -> None:
        view = self.view
        names = table()
        own = {  # the file's own definitions a HIP pass compiles (the run's: the engine's)
            name
            for name, at in definition_offsets(view.source.text)
            if not hip_excluded(view, (at, at))
        }
        for call in view.calls:
            fn = call.child_by_field_name("function")
            if fn is None or fn.type != "identifier":
                continue
            name = view.text(fn)
            entry = names.get(name)
            if entry is None or name in OWNED or name in own:
                continue
            if name in view.provided_device_functions:
                continue
            if entry.host_declared and not view.in_device_code(call):
                continue  # the host's own declaration (glibc's `__tanhf`)
            where = self._missing(entry)
            if where is None:
                continue
            what, instead = _class_of(name)
            release = (
                f"before ROCm {show(entry.since)}" if entry.since else "in any ROCm through 7.2"
            )
            self.report(
                fn,
                f"`{name}` ({what}) is not declared by HIP {release}{facts.said(where)} "
                f"(hipcc: use of undeclared identifier '{name}'); use {instead}",
                data={"cuda_name": name},
            )

    def _missing(self, entry: DeviceFunction) -> str | None:
        """None where every target release declares it; else the verdict's words."""
        targets = self.ctx.targets
        if entry.since is None:
            return ""
        if _WARP_SYNC.fullmatch(entry.name) and self.view.torch_built:
            opt_in = facts.fact("warp-sync-builtins").opt_in_since
            return targets.before(opt_in) if opt_in else targets.before(entry.since)
        return targets.before(entry.since)
