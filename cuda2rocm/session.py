"""What one command acts on: the files under its paths, each with its own configuration.

Files are grouped by the configuration that applies to them (the nearest one above each file,
or `--config` for all); each group gets its own rule selection and linter, so a file's findings
never depend on what else was named on the command line.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cuda2rocm.config import Config, ConfigError, Layer, Resolver
from cuda2rocm.discover import Found, Problem, discover
from cuda2rocm.engine import Linter, LintResult
from cuda2rocm.model import Severity

RANK = {"error": 0, "warning": 1, "info": 2}


class SessionError(Exception):
    """A usage, configuration or I/O error: reported in one line, exit 2."""


@dataclass
class Group:
    config: Config
    linter: Linter
    items: list[Found] = field(default_factory=list)


@dataclass
class Options:
    select: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    config_file: str | None = None
    force_exclude: bool = False
    target: str | None = None
    fail_on: str | None = None
    jobs: int | None = None
    cache: bool = False
    cache_dir: str | None = None
    #: `--compile-commands`: a ROCm build's compile_commands.json (context.compile_db).
    compile_commands: str | None = None
    #: `fix --rule`: narrow to these selectors.
    rules: tuple[str, ...] = ()
    #: `--rocm-version` / `--offload-arch`: replace the configuration's targets.
    rocm_version: str | None = None
    offload_arch: tuple[str, ...] | None = None


@dataclass(frozen=True)
class _Either:
    """Two path predicates or'ed (picklable, unlike a lambda: linters go to worker processes)."""

    first: Callable[[str], bool]
    second: Callable[[str], bool]

    def __call__(self, path: str) -> bool:
        return self.first(path) or self.second(path)


class Session:
    def __init__(self, paths: Sequence[str], options: Options) -> None:
        from cuda2rocm.catalogue import load_catalogue
        from cuda2rocm.selection import check

        self.paths = list(paths) or ["."]
        self.options = options
        self.catalogue = load_catalogue()
        self.cli_layer = Layer(
            "command line", options.select, options.extend_select, options.ignore
        )
        self._linters: dict[int, Linter] = {}
        self._dbs: dict[str, object] = {}  # compile_commands.json files read, by path
        try:
            check(
                options.select + options.extend_select + options.ignore,
                "command line",
                self.catalogue,
            )
            if options.rules:
                check(options.rules, "--rule", self.catalogue)
            self.resolver = Resolver(options.config_file)
        except (ValueError, ConfigError) as exc:
            raise SessionError(str(exc)) from exc
        #: Given paths that do not exist, and given folders under which nothing was linted.
        self.missing: list[str] = []
        self.empty: list[str] = []
        #: Paths inside the tree that could not be walked (reported as read-error findings).
        self.problems: list[Problem] = []

    # -- configuration -----------------------------------------------------------------------
    def config_for(self, path: str | Path) -> Config:
        try:
            return self.resolver.for_path(path)
        except ConfigError as exc:
            raise SessionError(str(exc)) from exc

    def rules_for(self, config: Config):
        from cuda2rocm.selection import check, narrow, select

        try:
            for _, selectors in config.per_file_ignores:
                check(selectors, f"{config.path}: per-file-ignores", self.catalogue)
            rules = select(self.catalogue, [*config.layers, self.cli_layer])
            if self.options.rules:
                rules = narrow(rules, self.catalogue, self.options.rules, "--rule")
        except ValueError as exc:
            raise SessionError(str(exc)) from exc
        return rules

    def linter_for(self, config: Config) -> Linter:
        if id(config) not in self._linters:
            self._linters[id(config)] = Linter(
                self.rules_for(config),
                max_bytes=config.max_file_size,
                ignored_for=config.ignored_for if config.per_file_ignores else None,
                target=self.options.target or config.target,
                severity=self._severities(config),
                torch_built_paths=self._torch_built(config),
                compile_db=self._compile_db(config),
                targets=self.targets_for(config),
            )
            if config.cuda_only:  # read by context.vendor_only
                self._linters[id(config)].cuda_only_for = config.cuda_only_for
        return self._linters[id(config)]

    def targets_for(self, config: Config):
        """The ROCm releases and GPUs a file's findings are judged for: the command line's,
        else its configuration's, else the defaults (cuda2rocm.targets)."""
        from cuda2rocm.targets import TargetError, Targets

        o = self.options
        try:
            return Targets.parse(
                o.rocm_version if o.rocm_version is not None else config.rocm_version,
                list(o.offload_arch) if o.offload_arch else config.offload_arch,
            )
        except TargetError as exc:
            which = (
                "--rocm-version / --offload-arch"
                if o.rocm_version or o.offload_arch
                else config.path
            )
            raise SessionError(f"{which}: {exc}") from exc

    def _compile_db(self, config: Config):
        """The ROCm build's compilation database (`--compile-commands`, else config), read once."""
        from cuda2rocm.context import compile_db

        path = self.options.compile_commands or config.compile_commands
        if path is None:
            return None
        key = str(Path(path).resolve())
        if key not in self._dbs:
            try:
                self._dbs[key] = compile_db.load(Path(path))
            except compile_db.CompileDbError as exc:
                raise SessionError(str(exc)) from exc
        return self._dbs[key]

    def _torch_built(self, config: Config):
        """Config `torch-built` patterns, and sources whose hipified copy the database compiles."""
        db = self._compile_db(config)
        if db is None:
            return config.torch_built_for if config.torch_built else None
        if not config.torch_built:
            return db.torch_hipified
        return _Either(config.torch_built_for, db.torch_hipified)

    def _severities(self, config: Config) -> dict[str, Severity]:
        from cuda2rocm.catalogue import matches
        from cuda2rocm.selection import suggest

        out = {}
        for selector, (level, where) in config.severity.items():
            hit = [r for r in self.catalogue if matches(r, selector)]
            if not hit:
                hint = suggest(selector, self.catalogue)
                more = f"; did you mean '{hint}'?" if hint else ""
                raise SessionError(f"{where}: severity: unknown rule '{selector}'{more}")
            out.update({r.id: Severity(level) for r in hit})
        return out

    def fail_on(self, config: Config) -> str:
        return self.options.fail_on or config.fail_on

    # -- files -------------------------------------------------------------------------------
    def groups(self) -> list[Group]:
        """Every file to lint under the paths, grouped by configuration, in a stable order."""
        by_config: dict[int, Group] = {}
        seen: set[str] = set()
        self.problems = []
        self.missing, self.empty = [], []
        for raw in self.paths:
            given = Path(raw)
            if not given.exists() and not given.is_symlink():
                self.missing.append(raw)
                continue
            explicit = given.is_file()
            config = self.config_for(raw)
            found = 0
            for item in discover(
                [raw],
                problems=self.problems,
                force_exclude=self.options.force_exclude,
                root=config.root,
            ):
                key = os.path.abspath(item.path)
                own = self.config_for(item.path)
                if (not explicit or self.options.force_exclude) and own.excluded(item.path):
                    continue
                found += 1
                if key in seen:
                    continue
                seen.add(key)
                group = by_config.get(id(own))
                if group is None:
                    group = by_config[id(own)] = Group(own, self.linter_for(own))
                group.items.append(item)
            if not found and given.is_dir():
                self.empty.append(raw)
        return list(by_config.values())

    # -- linting -----------------------------------------------------------------------------
    def lint(
        self, groups: list[Group], progress: Callable[[int, int], None] | None = None
    ) -> list[tuple[Group, LintResult]]:
        """Each group's result; paths that could not be walked become read-error findings."""
        from cuda2rocm import runner
        from cuda2rocm.engine import _general

        parts: list[tuple[Group, LintResult]] = []
        for group in groups:
            # The runner counts bytes of the files it parses and names its phases.
            result = runner.run(
                group.linter,
                [str(item.path) for item in group.items],
                jobs=self.options.jobs or runner.default_jobs(),
                cache=self.cache(group),
                progress=progress,
                items=group.items,  # discovered once, by groups()
                # what `fix` after this lint needs (by default: the files' `unsafe-fixes`)
                fix_unsafe=group.config.unsafe_fixes,
            )
            parts.append((group, result))
        for problem in self.problems:
            config = self.config_for(problem.display)
            result = LintResult(
                diagnostics=[_general("read-error", problem.display, problem.message)]
            )
            parts.append((Group(config, self.linter_for(config)), result))
        return parts

    def skipped_everything(self, groups: list[Group], result: LintResult) -> list[str]:
        """Given folders whose files were all passed over (binary, too large)."""
        skipped = {os.path.abspath(n.path) for n in result.notices if n.skipped}
        out = []
        for raw in self.paths:
            if not Path(raw).is_dir() or raw in self.empty:
                continue
            under = [
                os.path.abspath(i.path)
                for g in groups
                for i in g.items
                if _inside(os.path.abspath(i.path), os.path.abspath(raw))
            ]
            if under and all(p in skipped for p in under):
                out.append(raw)
        return out

    def cache(self, group: Group):
        if not self.options.cache:
            return None
        from cuda2rocm.cache import DEFAULT_DIR, Cache, fingerprint

        config = group.config
        directory = Path(self.options.cache_dir or (config.root / DEFAULT_DIR))
        linter = group.linter
        key = fingerprint(
            [
                sorted(linter.selected),
                linter.target,
                linter.targets.settings(),
                sorted((k, v.value) for k, v in linter.severity.items()),
                json.dumps(config.settings(), sort_keys=True, default=str),
                str(config.root.resolve()),
            ]
        )
        return Cache(directory, key)

    def failing(self, parts: list[tuple[Group, LintResult]]) -> int:
        """Findings at or above each file's `fail-on` threshold."""
        count = 0
        for group, result in parts:
            limit = RANK[self.fail_on(group.config)]
            count += sum(1 for d in result.diagnostics if RANK[d.severity.value] <= limit)
        return count


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def merge(parts: list[tuple[Group, LintResult]]) -> LintResult:
    merged = LintResult()
    for group, result in parts:
        judged = group.linter.targets.settings()
        if judged not in merged.targets:
            merged.targets.append(judged)
        merged.diagnostics += result.diagnostics
        merged.guarded += result.guarded
        merged.notices += result.notices
        merged.files += result.files
    merged.diagnostics.sort(key=lambda d: d.sort_key)
    merged.guarded.sort(key=lambda d: d.sort_key)
    return merged
