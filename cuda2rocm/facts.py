"""Release- and wavefront-dependent facts (data/facts.toml), judged for a port's targets.

A fact has a range: `since` (an API that exists from that ROCm release: missing before it),
`until` (a behaviour that ends at that release: a breakage from it on), or `wavefront` (true on
GPUs of that wavefront size only), and the source it was checked in. `verdict` answers for one
set of targets: None (the fact never bites them: do not report), "" (it bites all of them), or
the words that say which ("on ROCm < 7.0", "on wave64 GPUs only (gfx90a)").
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass
from importlib import resources

from cuda2rocm.targets import DEFAULT, Release, Targets, parse_release

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

KEYS = {"what", "since", "until", "wavefront", "source", "checked", "opt-in-since"}


@dataclass(frozen=True)
class Fact:
    id: str
    what: str
    source: str
    since: Release | None = None
    until: Release | None = None
    wavefront: int = 0
    #: From this release the API exists only where the build defines an opt-in macro.
    opt_in_since: Release | None = None
    checked: tuple[str, ...] = ()

    def verdict(self, targets: Targets | None = None) -> str | None:
        """None: does not hold for any target; "": holds for all; else which ones."""
        targets = targets or DEFAULT
        words = []
        for bound, judge in (
            (self.since, targets.before),
            (self.until, targets.from_release),
            (self.wavefront, targets.on_wave),
        ):
            if bound:
                said = judge(bound)
                if said is None:
                    return None
                words.append(said)
        return " ".join(w for w in words if w)


@functools.cache
def load() -> dict[str, Fact]:
    text = resources.files("cuda2rocm.data").joinpath("facts.toml").read_text("utf-8")
    out = {}
    for key, raw in tomllib.loads(text).items():
        unknown = set(raw) - KEYS
        if unknown:
            raise ValueError(f"data/facts.toml [{key}]: unknown keys {sorted(unknown)}")
        out[key] = Fact(
            id=key,
            what=raw.get("what", ""),
            source=raw.get("source", ""),
            since=parse_release(raw["since"]) if "since" in raw else None,
            until=parse_release(raw["until"]) if "until" in raw else None,
            wavefront=int(raw.get("wavefront", 0)),
            opt_in_since=parse_release(raw["opt-in-since"]) if "opt-in-since" in raw else None,
            checked=tuple(raw.get("checked", ())),
        )
    return out


def fact(key: str) -> Fact:
    return load()[key]


def verdict(key: str, targets: Targets | None = None) -> str | None:
    return fact(key).verdict(targets)


def said(verdict_words: str | None) -> str:
    """` (on ROCm < 7.0)` for a verdict that names some targets, else ""."""
    return f" ({verdict_words})" if verdict_words else ""
