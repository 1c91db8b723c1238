"""The rule catalogue: one TOML file per rule, read from `rules/` (source tree) or the wheel.

Rules are data. A file names its implementation module (`check`, default: the id in snake
case under `cuda2rocm.checks`), so a table-driven rule can reuse a generic check with its own
tables, and a rule with real logic has one small module named after it.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from cuda2rocm.model import STEPS, Severity

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

LANGUAGES = ("python", "cuda", "cmake", "requirements", "dockerfile", "shell", "any")
FIX_KINDS = ("safe", "unsafe", "none")
_ID = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
_CODE = re.compile(r"^CR[0-9]{3}$")


class CatalogueError(Exception):
    """A rule file is malformed: a bug in the catalogue, reported with the file and key."""


@dataclass(frozen=True)
class Example:
    code: str
    #: Expected text after `fix` (None: no fix is expected, the text stays as it is).
    fixed: str | None = None
    #: Expected number of diagnostics of this rule (None: at least one).
    count: int | None = None
    #: File name the example is linted as (decides the language and build context).
    path: str = ""
    unsafe: bool = False
    name: str = ""
    #: What the example assumes and asserts beyond the rewrite (the rule file is the whole
    #: contract): the targets it is linted for (`rocm-version`, `offload-arch`; the defaults
    #: otherwise), the fix target (`target`: portable / hip), the severity every finding
    #: has, and words every finding's message contains.
    rocm_version: str | None = None
    offload_arch: tuple[str, ...] | None = None
    target: str = "portable"
    severity: str | None = None
    message: tuple[str, ...] = ()


@dataclass(frozen=True)
class Reference:
    title: str
    url: str


@dataclass(frozen=True)
class RuleSpec:
    id: str
    code: str
    step: int
    severity: Severity
    languages: tuple[str, ...]
    summary: str
    explanation: str
    fix: str
    tokens: tuple[str, ...]
    references: tuple[Reference, ...]
    invalid: tuple[Example, ...]
    valid: tuple[Example, ...]
    default: bool = True
    check: str = ""
    tables: dict = field(default_factory=dict, hash=False, compare=False)
    source: str = ""
    #: The rule's findings are facts of wavefronts of this size (64: lanes 32-63): none is
    #: reported when no `offload-arch` target runs such wavefronts, except those a check marks
    #: `data["wavefront"] = "any"` (engine.Linter.off_wave). 0: any size.
    wavefront: int = 0

    @property
    def step_name(self) -> str:
        return STEPS.get(self.step, "general")

    @property
    def check_module(self) -> str:
        return "cuda2rocm.checks." + (self.check or self.id.replace("-", "_"))


def catalogue_dir() -> Path:
    """The installed catalogue inside the package, else `rules/` beside it (source checkout)."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "catalogue", here.parent / "rules"):
        if candidate.is_dir():
            return candidate
    raise CatalogueError(f"rule catalogue not found beside {here}")


def _req(data: dict, key: str, kind: type | tuple[type, ...], where: str):
    if key not in data:
        raise CatalogueError(f"{where}: missing key '{key}'")
    value = data[key]
    if not isinstance(value, kind):
        raise CatalogueError(f"{where}: '{key}' has the wrong type ({type(value).__name__})")
    return value


def _examples(data: dict, key: str, where: str, language: str) -> tuple[Example, ...]:
    default_path = "example.py" if language == "python" else "example.cu"
    out = []
    for i, raw in enumerate(data.get(key, [])):
        w = f"{where}: {key}[{i}]"
        known = {"code", "fixed", "count", "path", "unsafe", "name"}
        known |= {"rocm-version", "offload-arch", "target", "severity", "message"}
        extra = set(raw) - known
        if extra:
            raise CatalogueError(f"{w}: unknown keys {sorted(extra)}")
        _check_assumptions(raw, w)
        out.append(
            Example(
                code=_req(raw, "code", str, w),
                fixed=raw.get("fixed"),
                count=raw.get("count"),
                path=raw.get("path", default_path),
                unsafe=bool(raw.get("unsafe", False)),
                name=raw.get("name", f"{key}[{i}]"),
                rocm_version=raw.get("rocm-version"),
                offload_arch=tuple(raw["offload-arch"]) if "offload-arch" in raw else None,
                target=raw.get("target", "portable"),
                severity=raw.get("severity"),
                message=tuple(raw.get("message", ())),
            )
        )
    return tuple(out)


def _check_assumptions(raw: dict, where: str) -> None:
    """An example's stated targets, fix target and severity must be ones the tool knows."""
    from cuda2rocm.targets import TargetError, Targets

    if raw.get("target", "portable") not in ("portable", "hip"):
        raise CatalogueError(f"{where}: target must be 'portable' or 'hip'")
    if raw.get("severity", "error") not in ("error", "warning", "info"):
        raise CatalogueError(f"{where}: severity must be error, warning or info")
    message = raw.get("message", [])
    if not isinstance(message, list) or not all(isinstance(m, str) for m in message):
        raise CatalogueError(f"{where}: message must be a list of strings")
    try:
        Targets.parse(raw.get("rocm-version"), raw.get("offload-arch"))
    except TargetError as exc:
        raise CatalogueError(f"{where}: {exc}") from exc


def parse_rule(data: dict, where: str) -> RuleSpec:
    rule_id = _req(data, "id", str, where)
    if not _ID.match(rule_id):
        raise CatalogueError(f"{where}: id '{rule_id}' is not kebab-case")
    code = _req(data, "code", str, where)
    if not _CODE.match(code):
        raise CatalogueError(f"{where}: code '{code}' is not of the form CR123")
    step = _req(data, "step", int, where)
    if int(code[2]) != step:
        raise CatalogueError(f"{where}: code {code} does not start with step {step}")
    languages = tuple(_req(data, "languages", list, where))
    for lang in languages:
        if lang not in LANGUAGES:
            raise CatalogueError(f"{where}: unknown language '{lang}'")
    fix = _req(data, "fix", str, where)
    if fix not in FIX_KINDS:
        raise CatalogueError(f"{where}: fix must be one of {FIX_KINDS}")
    refs = tuple(
        Reference(_req(r, "title", str, where), _req(r, "url", str, where))
        for r in _req(data, "references", list, where)
    )
    if not refs:
        raise CatalogueError(f"{where}: a rule must cite at least one reference")
    return RuleSpec(
        id=rule_id,
        code=code,
        step=step,
        severity=Severity(_req(data, "severity", str, where)),
        languages=languages,
        summary=_req(data, "summary", str, where).strip(),
        explanation=_req(data, "explanation", str, where).strip(),
        fix=fix,
        tokens=tuple(data.get("tokens", [])),
        references=refs,
        invalid=_examples(data, "invalid", where, languages[0]),
        valid=_examples(data, "valid", where, languages[0]),
        default=bool(data.get("default", True)),
        check=data.get("check", ""),
        tables=data.get("tables", {}),
        source=where,
        wavefront=_wavefront(data, where),
    )


def _parsed_tomls(directory: Path) -> list[tuple[Path, dict]]:
    """Every rule file's TOML, parsed. tomllib is pure Python (about 75 ms for the catalogue,
    a quarter of a one-file lint), so the parsed data is kept as Python keeps bytecode: in
    `__pycache__` beside the sources, keyed by each file's name, size and mtime, written
    unless `sys.dont_write_bytecode`, ignored when unreadable, stale or not writable."""
    import marshal

    paths = sorted(directory.glob("*.toml"))
    stamp = []
    for path in paths:
        st = path.stat()
        stamp.append(f"{path.name}:{st.st_size}:{st.st_mtime_ns}")
    key = hashlib.blake2b("|".join(stamp).encode(), digest_size=12).hexdigest()
    cached = directory / "__pycache__" / f"catalogue-{key}.marshal"
    try:
        data = marshal.loads(cached.read_bytes())
        if isinstance(data, list) and len(data) == len(paths):
            return [(directory / name, rule) for name, rule in data]
    except (OSError, ValueError, EOFError, TypeError):
        pass
    parsed = []
    for path in paths:
        with path.open("rb") as fh:
            try:
                parsed.append((path, tomllib.load(fh)))
            except tomllib.TOMLDecodeError as exc:
                raise CatalogueError(f"{path.name}: {exc}") from exc
    if not sys.dont_write_bytecode:
        try:  # atomic: a concurrent run reads the old file or the new one, never half
            blob = marshal.dumps([(p.name, d) for p, d in parsed])
            cached.parent.mkdir(exist_ok=True)
            partial = cached.with_suffix(f".{os.getpid()}.tmp")
            partial.write_bytes(blob)
            os.replace(partial, cached)
            for old in cached.parent.glob("catalogue-*.marshal"):  # earlier versions' copies
                if old != cached:
                    old.unlink(missing_ok=True)
        except (OSError, ValueError):  # read-only install, or a value marshal cannot hold
            pass
    return parsed


def _wavefront(data: dict, where: str) -> int:
    value = data.get("wavefront", 0)
    if value not in (0, 32, 64):
        raise CatalogueError(f"{where}: 'wavefront' must be 32 or 64")
    return value


@functools.lru_cache(maxsize=4)
def load_catalogue(directory: Path | None = None) -> tuple[RuleSpec, ...]:
    directory = directory or catalogue_dir()
    rules = []
    for path, data in _parsed_tomls(directory):
        rule = parse_rule(data, path.name)
        if path.stem != rule.id:
            raise CatalogueError(f"{path.name}: file name must be the rule id '{rule.id}'")
        rules.append(rule)
    seen: dict[str, str] = {}
    for rule in rules:
        for key in (rule.id, rule.code):
            if key in seen:
                raise CatalogueError(f"{rule.source}: '{key}' is already used by {seen[key]}")
            seen[key] = rule.source
    return tuple(sorted(rules, key=lambda r: r.code))


class UnknownRuleError(ValueError):
    pass


def matches(rule: RuleSpec, selector: str) -> bool:
    """A selector is a rule id, a code, a code prefix (`CR2`) or `ALL`."""
    s = selector.strip()
    if s.upper() == "ALL":
        return True
    if s == rule.id:
        return True
    return s.upper().startswith("CR") and rule.code.startswith(s.upper())


def find_rule(selector: str, rules: Iterable[RuleSpec] | None = None) -> RuleSpec:
    for rule in rules if rules is not None else load_catalogue():
        if selector in (rule.id, rule.code) or selector.upper() == rule.code:
            return rule
    raise UnknownRuleError(f"unknown rule '{selector}'")


def select_rules(
    rules: Iterable[RuleSpec],
    select: Iterable[str] = (),
    extend_select: Iterable[str] = (),
    ignore: Iterable[str] = (),
) -> list[RuleSpec]:
    """Rules on by default (or those `select` names), plus `extend_select`, minus `ignore`.

    Opt-in rules are only turned on when named by id or code, or by an explicit `ALL`.
    """
    rules = list(rules)
    select, extend_select, ignore = list(select), list(extend_select), list(ignore)
    for selector in select + extend_select + ignore:
        if not any(matches(r, selector) for r in rules):
            raise UnknownRuleError(f"unknown rule or prefix '{selector}'")

    def named(rule: RuleSpec, selectors: list[str]) -> bool:
        return any(
            matches(rule, s) and (rule.default or s.upper() in ("ALL", rule.code) or s == rule.id)
            for s in selectors
        )

    chosen = [r for r in rules if named(r, select)] if select else [r for r in rules if r.default]
    chosen += [r for r in rules if r not in chosen and named(r, extend_select)]
    return [r for r in chosen if not any(matches(r, s) for s in ignore)]
