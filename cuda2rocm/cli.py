"""Command line: `lint`, `fix`, `report`, `rules`, `explain`.

Exit codes: 0 nothing found, 1 findings (or, for `fix --diff/--check`, changes to make),
2 usage or configuration error. Heavy modules are imported inside the commands so that
`--version` and `--help` start instantly.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from cuda2rocm import __version__

FORMATS = ("text", "concise", "json", "sarif", "github")


def _split(values: tuple[str, ...]) -> list[str]:
    return [s.strip() for v in values for s in v.split(",") if s.strip()]


class _Session:
    """Configuration, selected rules and a linter, built once per command from its options."""

    def __init__(self, paths: tuple[str, ...], opts: dict, extra_select: tuple = ()) -> None:
        from cuda2rocm.catalogue import UnknownRuleError, load_catalogue, select_rules
        from cuda2rocm.config import ConfigError, load_config
        from cuda2rocm.engine import Linter

        self.paths = list(paths) or ["."]
        self.opts = opts
        try:
            self.config = cfg = load_config(self.paths, opts["config_file"])
        except ConfigError as exc:
            raise click.UsageError(str(exc)) from exc
        try:
            self.rules = select_rules(
                load_catalogue(),
                select=_split(opts["select"] + extra_select) or cfg.select,
                extend_select=cfg.extend_select + _split(opts["extend_select"]),
                ignore=cfg.ignore + _split(opts["ignore"]),
            )
        except UnknownRuleError as exc:
            where = f" (in {cfg.path})" if cfg.path else ""
            raise click.UsageError(f"{exc}{where}; see `cuda2rocm rules`") from exc
        self.exclude = cfg.exclude + cfg.extend_exclude
        self.discovery = {"force_exclude": opts["force_exclude"], "root": cfg.root}
        self.linter = Linter(
            self.rules,
            max_bytes=cfg.max_file_size,
            ignored_for=cfg.ignored_for if cfg.per_file_ignores else None,
            target=opts.get("target") or cfg.target,
            severity=self._severities(),
            torch_built_paths=cfg.torch_built_for if cfg.torch_built else None,
        )

    def _severities(self) -> dict:
        from cuda2rocm.catalogue import load_catalogue, matches
        from cuda2rocm.model import Severity

        out = {}
        for selector, level in self.config.severity.items():
            hit = [r for r in load_catalogue() if matches(r, selector)]
            if not hit:
                raise click.UsageError(f"{self.config.path}: severity: unknown rule '{selector}'")
            out.update({r.id: Severity(level) for r in hit})
        return out

    def lint(self, progress=None):
        from cuda2rocm import runner

        jobs = self.opts.get("jobs") or runner.default_jobs()
        return runner.run(
            self.linter,
            self.paths,
            self.exclude,
            jobs=jobs,
            cache=self.cache(),
            progress=progress,
            **self.discovery,
        )

    def cache(self):
        """The result cache shared by `lint` and `fix` (None with --no-cache)."""
        if self.opts.get("no_cache", True):
            return None
        from cuda2rocm.cache import DEFAULT_DIR, Cache, fingerprint

        directory = Path(self.opts.get("cache_dir") or (self.config.root / DEFAULT_DIR))
        cfg = self.config
        key = fingerprint(
            [
                sorted(r.id for r in self.rules),
                self.linter.target,
                sorted((k, v.value) for k, v in self.linter.severity.items()),
                sorted(cfg.per_file_ignores.items()),
                cfg.torch_built,
                str(cfg.root.resolve()),
                cfg.max_file_size,
            ]
        )
        return Cache(directory, key)


_SHARED = [
    click.argument("paths", nargs=-1, type=click.Path()),
    click.option(
        "--config",
        "config_file",
        type=click.Path(dir_okay=False),
        help="Use this file instead of the nearest pyproject.toml / cuda2rocm.toml.",
    ),
    click.option(
        "--select",
        multiple=True,
        help="Only these rules: id, code or code prefix such as CR4 (comma-separated or "
        "repeated). Overrides the configuration.",
    ),
    click.option("--extend-select", multiple=True, help="Also these rules (e.g. opt-in ones)."),
    click.option("--ignore", multiple=True, help="Not these rules."),
    click.option(
        "--force-exclude",
        is_flag=True,
        help="Apply excludes to files named explicitly too (for pre-commit).",
    ),
]


_RUN = [
    click.option(
        "-j", "--jobs", type=click.IntRange(min=1), help="Processes (default: all cores)."
    ),
    click.option("--no-cache", is_flag=True, help="Neither read nor write the result cache."),
    click.option(
        "--cache-dir",
        type=click.Path(file_okay=False),
        help="Where the cache lives (default: .cuda2rocm_cache beside the configuration).",
    ),
]


def _run_options(func):
    for decorator in reversed(_RUN):
        func = decorator(func)
    return func


def _shared(func):
    for decorator in reversed(_SHARED):
        func = decorator(func)
    return func


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cuda2rocm")
def main() -> None:
    """Find and fix what breaks when a PyTorch project moves to AMD GPUs (ROCm/HIP)."""


@main.command()
@_shared
@_run_options
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the report here.")
@click.option("--statistics", is_flag=True, help="Counts per rule and per step, not findings.")
@click.option("--baseline", type=click.Path(dir_okay=False), help="Hide findings recorded here.")
@click.option(
    "--write-baseline", type=click.Path(dir_okay=False), help="Record today's findings here."
)
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--no-frames", is_flag=True, help="Text format: no code frames.")
def lint(paths, **opts) -> None:
    """Report what breaks or misbehaves on ROCm under PATHS (default: the current directory)."""
    from cuda2rocm import baseline as baselines

    session = _Session(paths, opts)
    result = _lint_with_progress(session)
    if opts["write_baseline"]:
        n = baselines.write(Path(opts["write_baseline"]), result.diagnostics)
        click.echo(f"Recorded {n} findings in {opts['write_baseline']}.", err=True)
        sys.exit(0)
    filtered, accepted = _apply_baseline(session, opts, result)
    footer = ""
    if filtered is not None:
        footer = f"Baseline {accepted}: {filtered.hidden} findings hidden"
        if filtered.stale:
            footer += f", {filtered.stale} entries no longer match (fixed or changed code)"
        footer += "."
    _emit(result, opts["fmt"], opts["output"], opts["statistics"], opts["no_frames"])
    if footer:
        click.echo(footer, err=True)
    sys.exit(0 if opts["exit_zero"] or not result.diagnostics else 1)


def _apply_baseline(session: _Session, opts: dict, result):
    """Hide the findings a baseline (option or config) accepts; (filtered, path) or (None, None)."""
    from cuda2rocm import baseline as baselines

    accepted = Path(opts["baseline"]) if opts["baseline"] else session.config.baseline_path()
    if accepted is None:
        return None, None
    try:
        filtered = baselines.apply(result.diagnostics, baselines.load(accepted))
    except baselines.BaselineError as exc:
        raise click.UsageError(str(exc)) from exc
    result.diagnostics = filtered.new
    return filtered, accepted


def _lint_with_progress(session: _Session):
    """A progress bar on stderr for long runs, only when stderr is a terminal."""
    return _with_progress("linting", session.lint)


def _with_progress(label: str, run):
    """`run(progress)` with a bar on stderr (bytes parsed), only when stderr is a terminal."""
    if not sys.stderr.isatty():
        return run(None)
    from rich.console import Console
    from rich.progress import Progress

    with Progress(console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task(label, total=None)
        return run(lambda done, total: progress.update(task, completed=done, total=total))


def _emit(result, fmt: str, output: str | None, statistics: bool, no_frames: bool) -> None:
    from rich.console import Console

    sink = open(output, "w", encoding="utf-8") if output else None  # noqa: SIM115
    try:
        console = Console(file=sink, highlight=False) if sink else Console(highlight=False)
        if statistics and fmt in ("text", "concise"):
            from cuda2rocm.report import statistics as stats

            if fmt == "text":
                stats.render(result, console)
            else:
                _write(stats.render_plain(result), sink)
        elif fmt == "text":
            from cuda2rocm.report import text

            text.render(result, console, show_frames=not no_frames)
        else:
            from importlib import import_module

            module = {"json": "json_format"}.get(fmt, fmt)
            _write(import_module(f"cuda2rocm.report.{module}").render(result), sink)
    finally:
        if sink:
            sink.close()


def _write(text: str, sink) -> None:
    if text:
        click.echo(text, file=sink)


@main.command()
@_shared
@_run_options
@click.option("--rule", "rules", multiple=True, help="Apply only these rules' fixes (id or code).")
@click.option("--unsafe", is_flag=True, default=None, help="Also apply unsafe fixes.")
@click.option("--diff", is_flag=True, help="Print a unified diff; write nothing.")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 if something would change.")
@click.option("--exit-non-zero-on-fix", is_flag=True, help="Exit 1 when files were changed.")
@click.option(
    "--target",
    type=click.Choice(("portable", "hip")),
    default=None,
    help="C++ rewrites: portable (builds with nvcc and hipcc; default) or hip (one-way).",
)
def fix(paths, **opts) -> None:
    """Apply the fixes under PATHS: safe ones by default, unsafe ones with --unsafe."""
    from cuda2rocm.fixer import fix_paths

    rules = opts["rules"]
    session = _Session(paths, opts, extra_select=rules)
    if rules:
        from cuda2rocm.catalogue import UnknownRuleError, find_rule

        try:
            wanted = {find_rule(r, session.rules).id for r in _split(rules)}
        except UnknownRuleError as exc:
            raise click.UsageError(str(exc)) from exc
        session.linter.rules = [r for r in session.linter.rules if r.id in wanted]
    unsafe = session.config.unsafe_fixes if opts["unsafe"] is None else opts["unsafe"]
    diff, check = opts["diff"], opts["check"]
    write = not (diff or check)
    from cuda2rocm.runner import default_jobs

    jobs = opts.get("jobs") or default_jobs()
    report = _with_progress(
        "fixing",
        lambda progress: fix_paths(
            session.linter,
            session.paths,
            session.exclude,
            unsafe,
            write,
            jobs,
            cache=session.cache(),
            progress=progress,
            **session.discovery,
        ),
    )
    for outcome in report.outcomes:
        if diff and outcome.changed:
            click.echo(outcome.diff(), nl=False)
        if outcome.refused:
            click.echo(f"{outcome.path}: {outcome.refused}", err=True)
    for header in report.headers:
        if diff:
            click.echo(header.diff(), nl=False)
        else:
            verb = "Wrote" if write else "Would write"
            click.echo(f"{verb} compatibility header {header.path}", err=True)
    for path, message in report.errors:
        click.echo(f"{path}: {message}", err=True)
    changed = [o for o in report.outcomes if o.changed]
    applied = sum(len(o.applied) for o in changed)
    remaining = sum(len(o.remaining) for o in report.outcomes)
    verb = "Fixed" if write else "Would fix"
    click.echo(
        f"{verb} {applied} findings in {len(changed)} files; {remaining} remaining "
        "(see `cuda2rocm lint`).",
        err=diff,
    )
    if write and not opts["exit_non_zero_on_fix"]:
        sys.exit(0)
    sys.exit(1 if changed else 0)


@main.command()
@click.option("--cache-dir", type=click.Path(file_okay=False), help="The cache to remove.")
def clean(cache_dir: str | None) -> None:
    """Remove the result cache."""
    from cuda2rocm.cache import DEFAULT_DIR
    from cuda2rocm.cache import clean as clean_cache
    from cuda2rocm.config import ConfigError, load_config

    if cache_dir is None:
        try:
            cache_dir = str(load_config(["."]).root / DEFAULT_DIR)
        except ConfigError as exc:
            raise click.UsageError(str(exc)) from exc
    removed = clean_cache(Path(cache_dir))
    click.echo(f"Removed {removed} cache files from {cache_dir}.")


@main.command()
@_shared
@_run_options
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, allow_dash=True),
    default="cuda2rocm-report.html",
    show_default=True,
    help="Write the HTML report here ('-' for standard output).",
)
@click.option("--title", default=None, help="Page title (default: names the scanned paths).")
@click.option("--baseline", type=click.Path(dir_okay=False), help="Hide findings recorded here.")
def report(paths, **opts) -> None:
    """Write a self-contained HTML readiness report for PATHS: figures per checklist step and
    severity, what `fix` does automatically, and every finding with its code frame and
    explanation. The figures are those of `lint --format json` on the same paths."""
    from cuda2rocm.report import html

    session = _Session(paths, opts)
    result = _lint_with_progress(session)
    filtered, accepted = _apply_baseline(session, opts, result)
    note = ""
    if filtered is not None:
        note = f"Baseline {accepted}: {filtered.hidden} accepted findings are not counted here."
    names = ", ".join(Path(p).resolve().name or p for p in session.paths)
    title = opts["title"] or f"ROCm readiness report: {names}"
    page = html.render(result, paths=session.paths, title=title, note=note)
    if opts["output"] == "-":
        click.echo(page, nl=False)
        return
    try:
        Path(opts["output"]).write_text(page, encoding="utf-8")
    except OSError as exc:
        raise click.UsageError(f"cannot write {opts['output']}: {exc.strerror or exc}") from exc
    total = len(result.diagnostics)
    click.echo(f"Wrote {opts['output']}: {total} findings in {result.files} files.", err=True)


@main.command(name="rules")
@click.option("--format", "fmt", type=click.Choice(("table", "json")), default="table")
@click.option("--all", "show_all", is_flag=True, help="Include the general (CR0xx) rules.")
def rules_command(fmt: str, show_all: bool) -> None:
    """List the rules."""
    from cuda2rocm.catalogue import load_catalogue

    rules = [r for r in load_catalogue() if show_all or r.step != 0]
    if fmt == "json":
        import json

        click.echo(
            json.dumps(
                [
                    {
                        "id": r.id,
                        "code": r.code,
                        "step": r.step,
                        "step_name": r.step_name,
                        "severity": r.severity.value,
                        "languages": list(r.languages),
                        "fix": r.fix,
                        "default": r.default,
                        "summary": r.summary,
                    }
                    for r in rules
                ],
                indent=2,
            )
        )
        return
    from rich.console import Console
    from rich.table import Table

    table = Table()
    for column in ("code", "id", "step", "severity", "fix", "summary"):
        table.add_column(column, overflow="fold")
    for r in rules:
        opt = "" if r.default else " (opt-in)"
        table.add_row(r.code, r.id + opt, r.step_name, r.severity.value, r.fix, r.summary)
    Console().print(table)


@main.command()
@click.argument("rule")
def explain(rule: str) -> None:
    """Show a rule's documentation: what it finds, why, the fix, examples and references."""
    from rich.console import Console
    from rich.markdown import Markdown

    from cuda2rocm.catalogue import UnknownRuleError, find_rule
    from cuda2rocm.explain import render_markdown

    try:
        spec = find_rule(rule)
    except UnknownRuleError as exc:
        raise click.UsageError(f"{exc}; see `cuda2rocm rules`") from exc
    Console().print(Markdown(render_markdown(spec)))


if __name__ == "__main__":  # pragma: no cover
    main()
