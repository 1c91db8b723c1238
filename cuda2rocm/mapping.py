"""`cuda2rocm map NAME`: what a CUDA name becomes on ROCm, read from the tables the tool ships.

Porting engineers ask this all day ("what is cudaStreamCreate on HIP, since when, does torch's
hipify rename it, will the linter flag it?"). Every answer comes from data the rules already
use, never from a second copy: the CUDA -> HIP name tables (data/cuda_names*.tsv,
blas_rocm6_names.tsv, blas_names.tsv), torch's hipify mappings (data/torch_hipify.tsv), the
macros the ROCm compilers define (data/hip_macros.toml), the compatibility header's portable
spellings (compat_header.py), and the rules' own tables (nvcc flags, libcu++ names, HCC macros,
command-line tools). The TSVs are read by column name, so a column added later (a `since` /
`until` range) shows up without a change here.
"""

from __future__ import annotations

import csv
import difflib
import functools
import sys
from dataclasses import dataclass, field
from pathlib import Path

from cuda2rocm import names
from cuda2rocm.catalogue import RuleSpec, load_catalogue

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

_DATA = Path(__file__).resolve().parent / "data"
#: The name tables, in the order names.table() layers them (later rows replace earlier ones).
NAME_TABLES = ("cuda_names.tsv", "cuda_names_overrides.tsv", "blas_rocm6_names.tsv")
#: Columns every answer has; any other column of a name table is passed on in `extra`.
_KNOWN = {"cuda_name", "hip_name", "kind", "library", "status", "hip_name_in_hip622", "since"}
COMPAT_INCLUDE = '#include "cuda2rocm_compat.h"'
#: Libraries vendor-blas-dnn reports by name (checks/vendor_blas_dnn.py) where hip-stream maps
#: no rename: cuDNN always, cuBLAS / cuBLASLt otherwise.
VENDOR_LIBRARIES = ("dnn", "blas", "blaslt")


@dataclass
class Mapping:
    """One CUDA name's ROCm counterpart, from every table that knows it."""

    name: str
    kind: str = ""
    library: str = ""
    hip: str = ""
    status: str = ""
    #: The first ROCm release with the HIP spelling ("" when every supported release has it).
    since: str = ""
    #: What torch's hipify (cpp_extension's build-time pass) writes for it; "" if it maps none.
    torch_hipify: str = ""
    #: The rules that report the name.
    rules: list[str] = field(default_factory=list)
    #: How to write it once for both vendors (with the compatibility header), if any.
    portable: str = ""
    notes: list[str] = field(default_factory=list)
    #: The tables the answer was read from.
    sources: list[str] = field(default_factory=list)
    #: Columns of the name tables this reader does not know by name (a `until` range, ...).
    extra: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "kind": self.kind,
            "library": self.library,
            "hip": self.hip,
            "status": self.status,
            "since": self.since,
            "torch_hipify": self.torch_hipify,
            "rules": self.rules,
            "portable": self.portable,
            "notes": self.notes,
            "sources": self.sources,
            **({"extra": self.extra} if self.extra else {}),
        }


def _tsv(file: str) -> list[dict[str, str]]:
    """A data TSV by its header row (comment lines before it skipped)."""
    with (_DATA / file).open(encoding="utf-8", newline="") as fh:
        lines = [line for line in fh if not line.startswith("#") and line.strip()]
    rows = list(csv.DictReader(lines, delimiter="\t", quoting=csv.QUOTE_NONE))
    for row in rows:  # a stray space in a source table must not hide the name
        row["cuda_name"] = row["cuda_name"].strip()
    return rows


@functools.lru_cache(maxsize=1)
def _name_rows() -> dict[str, dict[str, str]]:
    rows: dict[str, dict[str, str]] = {}
    for file in NAME_TABLES:
        for row in _tsv(file):
            rows[row["cuda_name"]] = {**row, "_source": file}
    return rows


@functools.lru_cache(maxsize=1)
def _torch_rows() -> dict[str, dict[str, str]]:
    return {row["cuda_name"]: row for row in _tsv("torch_hipify.tsv")}


@functools.lru_cache(maxsize=1)
def _blas_unsupported() -> dict[str, dict[str, str]]:
    return {row["cuda_name"]: row for row in _tsv("blas_names.tsv")}


@functools.lru_cache(maxsize=1)
def _hip_macros() -> dict[str, dict]:
    with (_DATA / "hip_macros.toml").open("rb") as fh:
        return {m["name"]: m for m in tomllib.load(fh).get("macro", [])}


@functools.lru_cache(maxsize=1)
def _rules() -> dict[str, RuleSpec]:
    return {r.id: r for r in load_catalogue()}


def _table(rule: str, *keys: str) -> dict:
    spec = _rules().get(rule)
    table = spec.tables if spec is not None else {}
    for key in keys:
        table = table.get(key, {}) if isinstance(table, dict) else {}
    return table if isinstance(table, dict) else {}


@functools.lru_cache(maxsize=1)
def _rule_names() -> dict[str, tuple[str, dict]]:
    """name -> (rule, its table row) for the names the rules' own tables hold."""
    out: dict[str, tuple[str, dict]] = {}
    for flag, row in _table("nvcc-flags", "flags").items():
        out[flag] = ("nvcc-flags", {"kind": "nvcc-flag", **row})
    for flag in _table("nvcc-flags", "portable").get("exact", []) or ():
        out.setdefault(flag, ("nvcc-flags", {"kind": "nvcc-flag", "portable": True}))
    for macro, row in _table("hip-platform-hcc", "macros").items():
        out[macro] = ("hip-platform-hcc", {"kind": "macro", **row})
    for name, advice in _table("libcudacxx-names", "names").items():
        out[f"cuda::{name}"] = ("libcudacxx-names", {"kind": "namespace", "advice": advice})
    for tool, row in _table("nv-cli-tools", "tools").items():
        out[tool] = ("nv-cli-tools", {"kind": "tool", **row})
    return out


@functools.lru_cache(maxsize=1)
def _token_rules() -> dict[str, list[str]]:
    """token -> rules whose prefilter lists it exactly (a rule that fires on that name)."""
    out: dict[str, list[str]] = {}
    for spec in _rules().values():
        for token in spec.tokens:
            out.setdefault(token, []).append(spec.id)
    return out


@functools.lru_cache(maxsize=1)
def known_names() -> tuple[str, ...]:
    """Every name `map` answers for, sorted (for tests and for "did you mean")."""
    pool = set(_name_rows()) | set(_torch_rows()) | set(_blas_unsupported())
    pool |= set(_hip_macros()) | set(_rule_names())
    return tuple(sorted(pool))


def _from_names(m: Mapping, row: dict[str, str]) -> None:
    m.sources.append(row["_source"])
    m.kind, m.library, m.status = row["kind"], row["library"], row["status"]
    m.hip = row["hip_name"]
    if row.get("hip_name_in_hip622") == "no":
        m.notes.append(f"{m.hip} is not declared in the HIP 6.2.2 headers")
        m.status = "unsupported"
    since = row.get("since", "")
    m.since = since if since and since != "5.2" else ""
    m.extra = {k: v for k, v in row.items() if k not in _KNOWN and not k.startswith("_") and v}
    if m.kind == "header":
        m.rules.append("hip-include")
        if names.compat_covers(m.name):
            m.portable = f"{COMPAT_INCLUDE} (stands in for <{m.name}> under both compilers)"
        elif m.hip:
            m.portable = f"#include <{m.hip}> under a HIP test, <{m.name}> otherwise"
        return
    api = names.api_name(m.name)
    if api is None:
        return
    m.rules.append("hip-stream")
    if api.supported:
        release = f", from ROCm {api.since} (under a version test)" if api.since else ""
        m.portable = f"{m.name} with {COMPAT_INCLUDE}, which maps it to {api.hip}{release}"


def _from_torch(m: Mapping, row: dict[str, str]) -> None:
    m.sources.append("torch_hipify.tsv")
    m.torch_hipify = row["torch_hip_name"]
    if not m.kind:
        m.kind, m.library = row["kind"], row["library"]
        m.hip, m.status = row["hip_name"], row["status"]
        m.notes.append("status: HIPIFY's tables (ROCm 6.3 era)")
        if m.library == "dnn" and m.hip:
            m.notes.append(f"{m.hip} is MIOpen's counterpart (a different API), not a rename")
    if row.get("hip_added"):
        m.notes.append(f"HIPIFY records the HIP name since HIP {row['hip_added']}")
    if m.torch_hipify and m.hip and m.torch_hipify != m.hip:
        m.notes.append(f"torch's hipify and HIPIFY differ: {m.torch_hipify} vs {m.hip}")


def _from_rule(m: Mapping, rule: str, row: dict) -> None:
    m.sources.append(f"rules/{rule}.toml")
    m.rules.append(rule)
    m.kind = m.kind or row["kind"]
    if rule == "nvcc-flags":
        if row.get("portable"):
            m.hip, m.status = m.name, "supported"
            m.notes.append("hipcc accepts it as nvcc does")
            m.rules.remove(rule)
        else:
            m.hip = " ".join(row.get("hip", [])) or ""
            m.status = "replaced" if m.hip else "dropped"
            value = "; it takes a value" if row.get("value") else ""
            m.notes.append(f"nvcc-only: hipcc rejects or ignores it{value}")
    elif rule == "hip-platform-hcc":
        m.hip, m.status = row.get("new", ""), "deprecated"
        m.notes.append(f"{m.name} {row.get('why', '')}".strip())
    elif rule == "libcudacxx-names":
        m.status = "unsupported"
        m.notes.append(f"no libcu++ on ROCm: {row['advice']}")
    elif rule == "nv-cli-tools":
        m.hip = ", ".join(row.get("counterparts", []))
        m.status = "unsupported"
        m.notes.append(row.get("message", ""))


def _from_macro(m: Mapping, row: dict) -> None:
    m.sources.append("hip_macros.toml")
    m.kind = m.kind or "macro"
    passes = ", ".join(f"{p}: {row[p]}" for p in ("hip-host", "hip-device", "cxx") if p in row)
    m.notes.append(f"its value in a ROCm build, per compiler pass: {passes}")
    values = {str(row.get(p, "")) for p in ("hip-host", "hip-device", "cxx")}
    if not m.status:
        m.status = "undefined on ROCm" if values == {"undefined"} else "defined on ROCm"


def lookup(name: str) -> Mapping | None:
    """What `name` becomes on ROCm, or None when no shipped table knows it."""
    name = name.strip()
    m = Mapping(name)
    if (row := _name_rows().get(name)) is not None:
        _from_names(m, row)
    if (row := _torch_rows().get(name)) is not None:
        _from_torch(m, row)
    if (row := _blas_unsupported().get(name)) is not None:
        m.sources.append("blas_names.tsv")
        m.kind, m.library = m.kind or row["kind"], m.library or row["library"]
        m.status = "unsupported"
        m.torch_hipify = m.torch_hipify or row.get("torch_hip_name", "")
        m.rules.append("vendor-blas-dnn")
    if (hit := _rule_names().get(name)) is not None:
        _from_rule(m, *hit)
    if (row := _hip_macros().get(name)) is not None:
        _from_macro(m, row)
    if not m.sources:
        return None
    if m.library in VENDOR_LIBRARIES and not m.rules and m.kind != "header":
        m.rules.append("vendor-blas-dnn")  # cuDNN everywhere, cuBLAS where no rename is known
    for rule in _token_rules().get(name, ()):
        if rule not in m.rules:
            m.rules.append(rule)
    if not m.status:
        m.status = "supported" if m.hip else "unknown"
    return m


def suggest(name: str, n: int = 3) -> list[str]:
    """Close spellings of a mistyped name (case-blind first, then difflib)."""
    pool = known_names()
    folded = {p.lower(): p for p in pool}
    if name.lower() in folded:
        return [folded[name.lower()]]
    return difflib.get_close_matches(name, pool, n=n, cutoff=0.75)


def render_text(m: Mapping) -> str:
    """The answer as a few aligned lines."""
    rows = [
        ("name", m.name),
        ("kind", " / ".join(x for x in (m.kind, m.library) if x)),
        ("on ROCm", m.hip or "(no HIP counterpart)"),
        ("status", m.status + (f", since ROCm {m.since}" if m.since else "")),
        ("torch hipify", m.torch_hipify or "leaves it unchanged (no mapping)"),
        ("reported by", ", ".join(m.rules) or "no rule"),
        ("portable", m.portable or "-"),
    ]
    rows += [(k, v) for k, v in m.extra.items()]
    rows += [("note", n) for n in m.notes if n]
    rows.append(("from", ", ".join(m.sources)))
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)
