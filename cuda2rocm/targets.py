"""What a port targets: the ROCm releases it must build on and the GPUs it runs on.

`rocm-version` names the oldest ROCm release the port must support ("6.2"); the port must
also build on every later release, so a breakage that a later release brings applies too.
`"6.2..6.4"` closes the range where a project pins its newest release. `offload-arch` lists
the gfx targets; their wavefront sizes (64 on GCN/CDNA, 32 on RDNA) decide which lane-count
facts apply. Defaults and the wavefront table are data (data/targets.toml), with sources.
"""

from __future__ import annotations

import functools
import re
import sys
from dataclasses import dataclass
from importlib import resources

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

Release = tuple[int, int]
_VERSION = re.compile(r"^(\d+)\.(\d+)$")
_ARCH = re.compile(r"^gfx(\d{1,2})[0-9a-f]{2}(?::[\w+-]+)*$")


class TargetError(ValueError):
    """A `rocm-version` or `offload-arch` value that cannot be read."""


@functools.cache
def _data() -> dict:
    text = resources.files("cuda2rocm.data").joinpath("targets.toml").read_text("utf-8")
    return tomllib.loads(text)


def parse_release(text: str) -> Release:
    """`"6.2"` -> (6, 2); a release is major.minor, as ROCm's own version macros count it."""
    m = _VERSION.match(text.strip())
    if not m:
        raise TargetError(f"'{text}' is not a ROCm release of the form MAJOR.MINOR (e.g. 6.2)")
    return int(m[1]), int(m[2])


def show(release: Release) -> str:
    return f"{release[0]}.{release[1]}"


def wavefront(arch: str) -> int:
    """The wavefront size HIP compiles `arch` for (data/targets.toml [wavefront]).

    The family is the version digits before the last two (gfx90a -> gfx9, gfx1030 -> gfx10);
    a feature suffix (`gfx90a:xnack+`) does not change it."""
    table = {k: v for k, v in _data()["wavefront"].items() if k != "source"}
    m = _ARCH.match(arch.strip().lower())
    family = f"gfx{m[1]}" if m else ""
    if family not in table:
        known = ", ".join(sorted(table))
        raise TargetError(f"'{arch}' is not a gfx target of a known family ({known})")
    return table[family]


@dataclass(frozen=True)
class Targets:
    """The releases (oldest, newest or None for every later one) and the gfx targets."""

    oldest: Release
    newest: Release | None
    arches: tuple[str, ...]

    @classmethod
    def default(cls) -> Targets:
        data = _data()["defaults"]
        return cls(parse_release(data["rocm-version"]), None, tuple(data["offload-arch"]))

    @classmethod
    def parse(cls, rocm_version: str | None, offload_arch: list[str] | None) -> Targets:
        """From the settings' text; None takes the default. Raises TargetError."""
        base = cls.default()
        oldest, newest = base.oldest, None
        if rocm_version is not None:
            low, sep, high = rocm_version.partition("..")
            oldest = parse_release(low)
            newest = parse_release(high) if sep else None
            if newest is not None and newest < oldest:
                raise TargetError(f"'{rocm_version}': the newest release is before the oldest")
        arches = base.arches
        if offload_arch is not None:
            if not offload_arch:
                raise TargetError("offload-arch must name at least one gfx target")
            for arch in offload_arch:
                wavefront(arch)
            arches = tuple(a.strip().lower() for a in offload_arch)
        return cls(oldest, newest, arches)

    @property
    def rocm_version(self) -> str:
        return show(self.oldest) + (f"..{show(self.newest)}" if self.newest else "")

    @property
    def wave_sizes(self) -> frozenset[int]:
        return frozenset(wavefront(a) for a in self.arches)

    def arches_of(self, size: int) -> tuple[str, ...]:
        return tuple(a for a in self.arches if wavefront(a) == size)

    # -- verdicts: None = the fact does not bite these targets; "" = it bites all of them;
    # otherwise the words that say which ("on ROCm < 6.2").
    def before(self, since: Release) -> str | None:
        """An API that exists from `since` is missing on some supported release."""
        if self.oldest >= since:
            return None
        if self.newest is not None and self.newest < since:
            return ""
        return f"on ROCm < {show(since)}"

    def from_release(self, until: Release) -> str | None:
        """A behaviour that ends at `until` (a breakage from that release on) is met."""
        if self.newest is not None and self.newest < until:
            return None
        if self.oldest >= until:
            return ""
        return f"on ROCm >= {show(until)}"

    def on_wave(self, size: int) -> str | None:
        """A fact of `size`-lane wavefronts holds for some target."""
        hit = self.arches_of(size)
        if not hit:
            return None
        if len(hit) == len(self.arches):
            return ""
        return f"on wave{size} GPUs only ({', '.join(hit)})"

    def settings(self) -> dict[str, object]:
        return {"rocm-version": self.rocm_version, "offload-arch": list(self.arches)}


DEFAULT = Targets.default()
