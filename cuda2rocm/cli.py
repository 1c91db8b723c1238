"""Command line: `lint` (with `--fix`), `fix`, `report`, `rules`, `explain`, `map`, `server`,
`clean`.

Exit codes, for every command: 0 nothing at or above `--fail-on` (default: warning), 1 findings
at or above it (for `fix --diff/--check`: something would change), 2 a usage, configuration or
I/O error, reported in one line, never as a traceback. Heavy modules are imported inside the
commands so that `--version` and `--help` start instantly.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

FORMATS = ("text", "concise", "json", "sarif", "github")
SEVERITIES = ("error", "warning", "info")


class Failure(click.ClickException):
    """A usage, configuration or I/O error: one line on stderr, exit 2."""

    exit_code = 2

    def show(self, file=None) -> None:
        click.echo(f"cuda2rocm: error: {self.format_message()}", err=True)


class _Group(click.Group):
    """Turns what escapes a command into exit 2 with one line, never a traceback."""

    def invoke(self, ctx: click.Context):
        from cuda2rocm.session import SessionError

        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit):
            raise
        except SessionError as exc:
            raise Failure(str(exc)) from exc
        except OSError as exc:
            where = f"{exc.filename}: " if exc.filename else ""
            raise Failure(f"{where}{exc.strerror or exc}") from exc
        except KeyboardInterrupt:
            click.echo("cuda2rocm: interrupted", err=True)
            sys.exit(130)
        except Exception as exc:  # a bug: one line, and how to report it
            raise Failure(
                f"internal error: {type(exc).__name__}: {exc}; this is a bug in cuda2rocm, "
                "please report it with the command line that triggers it"
            ) from exc


def _split(values: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(s.strip() for v in values for s in v.split(",") if s.strip())


def _options(opts: dict, **extra):
    from cuda2rocm.session import Options

    return Options(
        select=_split(opts.get("select", ())),
        extend_select=_split(opts.get("extend_select", ())),
        ignore=_split(opts.get("ignore", ())),
        config_file=opts.get("config_file"),
        force_exclude=opts.get("force_exclude", False),
        target=opts.get("target"),
        fail_on=opts.get("fail_on"),
        jobs=opts.get("jobs"),
        cache=not opts.get("no_cache", True),
        cache_dir=opts.get("cache_dir"),
        rocm_version=opts.get("rocm_version"),
        offload_arch=_split(opts.get("offload_arch", ())) or None,
        compile_commands=opts.get("compile_commands"),
        **extra,
    )


_SHARED = [
    click.argument("paths", nargs=-1, type=click.Path()),
    click.option(
        "--config",
        "config_file",
        type=click.Path(dir_okay=False),
        help="Use this configuration for every file instead of the nearest "
        "pyproject.toml / cuda2rocm.toml above each file.",
    ),
    click.option(
        "--select",
        multiple=True,
        help="Only these rules: id, code or code prefix such as CR4 (comma-separated or "
        "repeated). Replaces the configuration's selection.",
    ),
    click.option("--extend-select", multiple=True, help="Also these rules (e.g. opt-in ones)."),
    click.option("--ignore", multiple=True, help="Not these rules."),
    click.option(
        "--force-exclude",
        is_flag=True,
        help="Apply excludes to files named explicitly too (for pre-commit).",
    ),
    click.option(
        "--fail-on",
        type=click.Choice(SEVERITIES),
        default=None,
        help="Exit 1 for findings of this severity or worse [default: config `fail-on`, "
        "else warning].",
    ),
    click.option(
        "--rocm-version",
        metavar="X.Y",
        help="The oldest ROCm release the port must support (e.g. 6.2; OLDEST..NEWEST closes "
        "the range) [default: config `rocm-version`, else the oldest of current PyTorch "
        "ROCm wheels].",
    ),
    click.option(
        "--offload-arch",
        multiple=True,
        metavar="GFX",
        help="GPU targets (comma-separated or repeated, e.g. gfx942,gfx1100): their wavefront "
        "size decides which lane-count findings apply [default: config `offload-arch`, else "
        "PyTorch's ROCm wheel targets].",
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
    click.option(
        "--compile-commands",
        "compile_commands",
        type=click.Path(dir_okay=False),
        help="A ROCm build's compile_commands.json: the exact answer for what it compiles and "
        "with which macros [default: config `compile-commands`].",
    ),
]

_FIXING = [
    click.option(
        "--unsafe-fixes/--no-unsafe-fixes",
        "unsafe_fixes",
        default=None,
        help="Also apply (and count) unsafe fixes [default: config `unsafe-fixes`, else no].",
    ),
    click.option("--unsafe", "unsafe_alias", is_flag=True, hidden=True),
    click.option("--show-fixes", is_flag=True, help="List the fixes applied, per file."),
    click.option(
        "--target",
        type=click.Choice(("portable", "hip")),
        default=None,
        help="C++ rewrites: portable (builds with nvcc and hipcc; default) or hip (one-way).",
    ),
]


def _apply(decorators):
    def wrap(func):
        for decorator in reversed(decorators):
            func = decorator(func)
        return func

    return wrap


def _print_version(ctx: click.Context, _param, value: bool) -> None:
    """`--version`: the version and the date of its ROCm facts (cuda2rocm/provenance.py)."""
    if value and not ctx.resilient_parsing:
        from cuda2rocm.provenance import version_line

        click.echo(version_line())
        ctx.exit()


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show the version and the date of its ROCm facts, and exit.",
)
def main() -> None:
    """Find and fix what breaks when a PyTorch project moves to AMD GPUs (ROCm/HIP)."""


# -- lint ------------------------------------------------------------------------------------


@main.command()
@_apply(_SHARED)
@_apply(_RUN)
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the report here.")
@click.option("--statistics", is_flag=True, help="Counts per rule (and step), not findings.")
@click.option(
    "--also-write",
    "also_write",
    multiple=True,
    metavar="FORMAT=FILE",
    callback=lambda _ctx, _param, values: tuple(_also_write(v) for v in values),
    help="Also write this run's findings as FORMAT to FILE (repeatable): one lint feeds several "
    "reports, e.g. GitHub annotations on stdout with json=result.json and sarif=out.sarif.",
)
@click.option("--baseline", type=click.Path(dir_okay=False), help="Hide findings recorded here.")
@click.option(
    "--write-baseline", type=click.Path(dir_okay=False), help="Record today's findings here."
)
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--no-frames", is_flag=True, help="Text format: no code frames.")
@click.option(
    "--show-guarded",
    is_flag=True,
    help="Also list findings in code ROCm provably never compiles or runs, with the reason.",
)
@click.option("--fix", "fix_", is_flag=True, help="Apply fixes, then report what remains.")
@_apply(_FIXING)
@click.option(
    "--stdin-filename",
    help="With `-` as the path: the name of the file read from standard input (decides the "
    "language and the configuration).",
)
@click.option("--show-settings", "show_settings", metavar="FILE", help="Print FILE's settings.")
@click.option("--show-files", is_flag=True, help="List the files that would be linted.")
@click.option("--watch", is_flag=True, help="Lint again whenever a file changes (Ctrl-C stops).")
@click.option("--watch-interval", type=float, default=1.0, hidden=True)
@click.option("--watch-runs", type=click.IntRange(min=0), default=0, hidden=True)
def lint(paths, **opts) -> None:
    """Report what breaks or misbehaves on ROCm under PATHS (default: the current directory).

    Exit 0: nothing at or above --fail-on; 1: findings at or above it; 2: usage, configuration
    or I/O error."""
    from cuda2rocm.session import Session

    if opts["statistics"] and opts["fmt"] == "sarif":
        raise click.UsageError(
            "--statistics has no SARIF form (SARIF holds findings); use --format json"
        )
    if opts["unsafe_alias"]:
        opts["unsafe_fixes"] = True
    if paths == ("-",) or opts["stdin_filename"]:
        _lint_stdin(paths, opts)
        return
    session = Session(paths, _options(opts))
    if opts["show_settings"]:
        _show_settings(session, opts["show_settings"])
        return
    if opts["show_files"]:
        groups = session.groups()
        _report_missing(session)
        for group in groups:
            for item in group.items:
                click.echo(item.display)
        sys.exit(2 if session.missing else 0)
    if opts["watch"]:
        _watch(lambda: Session(paths, _options(opts)), dict(opts, paths=paths))
        return
    sys.exit(_lint_once(session, opts))


def _also_write(value: str) -> tuple[str, str]:
    """`--also-write FORMAT=FILE` parsed, or a usage error naming the formats."""
    fmt, sep, path = value.partition("=")
    if not sep or not path or fmt not in FORMATS:
        raise click.BadParameter(f"{value!r}: expected FORMAT=FILE, FORMAT one of {FORMATS}")
    return fmt, path


def _lint_once(session, opts: dict) -> int:
    """One lint (with --fix: fix, then lint what remains); returns the exit code."""
    from cuda2rocm import baseline as baselines
    from cuda2rocm.session import merge

    groups = session.groups()
    fixed = None
    if opts["fix_"] and groups:
        before = merge(session.lint(groups))
        fixed = _fix_groups(session, groups, opts, write=True)
        groups = session.groups()
    parts = _lint_parts(session, groups)
    if opts["write_baseline"]:
        result = merge(parts)
        path = Path(opts["write_baseline"])
        try:
            n = baselines.write(path, result.diagnostics)
        except baselines.BaselineError as exc:
            raise Failure(str(exc)) from exc
        click.echo(f"Recorded {n} findings in {path}.", err=True)
        session.empty += session.skipped_everything(groups, result)
        return _problems_exit(session) or 0
    footer = _apply_baselines(session, opts, parts)
    result = merge(parts)
    session.empty += session.skipped_everything(groups, result)
    human = opts["fmt"] in ("text", "concise")
    if fixed is not None:
        _fix_summary(fixed, opts, err=not human)
        _newly_reachable(before, result)
    nothing = (session.missing or session.empty) and not result.files and not result.diagnostics
    if not (nothing and human):
        _emit(result, opts)
    for fmt, path in opts.get("also_write", ()):
        _emit(result, dict(opts, fmt=fmt, output=path, statistics=False))
    if opts["fmt"] == "concise" or (opts["statistics"] and opts["fmt"] != "text"):
        for n in result.notices:
            click.echo(f"cuda2rocm: note: {n.path}: {n.message}", err=True)
    for line in footer:
        click.echo(line, err=True)
    if not opts["unsafe_fixes"] and fixed is not None:
        unsafe = sum(
            1 for d in result.diagnostics if d.fix is not None and d.fix.safety.value == "unsafe"
        )
        if unsafe:
            click.echo(f"{unsafe} more fixes available with `--unsafe-fixes`.", err=True)
    problem = _problems_exit(session)
    if problem:
        return problem
    if opts["exit_zero"]:
        return 0
    return 1 if session.failing(parts) else 0


def _report_missing(session) -> None:
    for raw in session.missing:
        click.echo(f"cuda2rocm: error: {raw}: no such file or directory", err=True)


def _problems_exit(session) -> int:
    """2 when a given path is missing or a given folder had nothing to lint, else 0."""
    _report_missing(session)
    for raw in session.empty:
        click.echo(
            f"cuda2rocm: warning: no file to lint under {raw} (empty, excluded, skipped or of "
            "no kind cuda2rocm reads; `--show-files` lists what would be linted)",
            err=True,
        )
    return 2 if session.missing or session.empty else 0


def _apply_baselines(session, opts: dict, parts, counts: list | None = None) -> list[str]:
    """Hide the findings a baseline (option, else each file's configuration) accepts. With
    `counts`, append (recorded, hidden, stale) per baseline file for the report's trend."""
    from cuda2rocm import baseline as baselines

    cli_baseline = Path(opts["baseline"]) if opts.get("baseline") else None
    loaded: dict[Path, object] = {}
    totals: dict[Path, list[int]] = {}
    for group, result in parts:
        path = cli_baseline or group.config.baseline_path()
        if path is None:
            continue
        if path not in loaded:
            try:
                loaded[path] = baselines.load(path)
            except baselines.BaselineError as exc:
                raise Failure(str(exc)) from exc
            totals[path] = [0, sum(loaded[path].values())]
        filtered = baselines.apply(result.diagnostics, loaded[path], base=path.parent)
        result.diagnostics = filtered.new
        totals[path][0] += filtered.hidden
        loaded[path] = filtered.left
    lines = []
    for path, accepted in loaded.items():
        stale = sum(n for n in accepted.values() if n > 0)
        if counts is not None:
            counts.append((totals[path][1], totals[path][0], stale))
        line = f"Baseline {path}: {totals[path][0]} findings hidden"
        if stale:
            line += f", {stale} entries no longer match (fixed or changed code)"
        lines.append(line + ".")
    return lines


class _ProgressBar:
    """A progress callback drawing on stderr while a run lasts (only on a terminal)."""

    def __init__(self, what: str = "linting") -> None:
        from rich.console import Console
        from rich.progress import Progress

        self.progress = Progress(console=Console(stderr=True), transient=True)
        self.task = self.progress.add_task(what, total=None)
        self.progress.start()

    def __call__(self, done: int, total: int) -> None:
        self.progress.update(self.task, completed=done, total=total)

    def phase(self, name: str) -> None:
        """The run's phase (reading files, project facts, linting files) as the bar's label."""
        self.progress.update(self.task, description=name)

    def close(self) -> None:
        self.progress.stop()


def _lint_parts(session, groups):
    """`session.lint(groups)`, with a progress bar when stderr is a terminal."""
    if not sys.stderr.isatty():
        return session.lint(groups)
    bar = _ProgressBar()
    try:
        return session.lint(groups, bar)
    finally:
        bar.close()


def _open_output(output: str | None):
    if not output:
        return None
    try:
        return open(output, "w", encoding="utf-8")
    except OSError as exc:
        raise Failure(f"cannot write {output}: {exc.strerror or exc}") from exc


def _emit(result, opts: dict) -> None:
    from rich.console import Console

    fmt, statistics = opts["fmt"], opts["statistics"]
    sink = _open_output(opts.get("output"))
    try:
        console = Console(file=sink, highlight=False) if sink else Console(highlight=False)
        if statistics:
            from cuda2rocm.report import statistics as stats

            if fmt == "text":
                stats.render(result, console)
            elif fmt == "json":
                _write(stats.render_json(result), sink)
            else:
                _write(stats.render_plain(result), sink)
        elif fmt == "text":
            from cuda2rocm.report import text

            text.render(result, console, show_frames=not opts.get("no_frames"))
            if opts.get("show_guarded"):
                text.render_guarded(result, console)
        elif opts.get("show_guarded") and fmt in ("json", "concise"):
            from cuda2rocm.report import concise, json_format

            if fmt == "json":
                _write(json_format.render(result, show_guarded=True), sink)
            else:
                _write(concise.render(result), sink)
                _write(concise.render_guarded(result), sink)
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


def _newly_reachable(before, after) -> None:
    """Warn when fixing left more error findings of a rule in a file than there were before:
    a fix made code reachable on ROCm (or broke it) that was not before."""
    from collections import Counter

    def errors(result):
        return Counter((d.path, d.rule) for d in result.diagnostics if d.severity.value == "error")

    old, new = errors(before), errors(after)
    for (path, rule), n in sorted(new.items()):
        if n > old.get((path, rule), 0):
            click.echo(
                f"cuda2rocm: warning: {path}: the fixes left {n - old.get((path, rule), 0)} "
                f"new {rule} error(s) that were not reported before fixing; review the change",
                err=True,
            )


# -- fixing ----------------------------------------------------------------------------------


def _fix_groups(session, groups, opts: dict, write: bool):
    """Fix each group with its own linter and `unsafe-fixes`; one FixReport for all."""
    from cuda2rocm.fixer import FixReport, fix_paths
    from cuda2rocm.runner import default_jobs

    total = FixReport()
    bar = _ProgressBar("fixing") if sys.stderr.isatty() else None
    try:
        for group in groups:
            unsafe = opts.get("unsafe_fixes")
            if unsafe is None:
                unsafe = group.config.unsafe_fixes
            # Lint's result cache: files whose cached findings have nothing to fix are not
            # parsed again.
            report = fix_paths(
                group.linter,
                [str(item.path) for item in group.items],
                (),
                unsafe,
                write,
                session.options.jobs or default_jobs(),
                cache=session.cache(group),
                progress=bar,
                items=group.items,  # discovered once, by groups()
            )
            total.outcomes += report.outcomes
            total.errors += report.errors
            total.headers += report.headers
    finally:
        if bar is not None:
            bar.close()
    for outcome in total.outcomes:
        if outcome.refused:
            click.echo(f"{outcome.path}: {outcome.refused}", err=True)
    for path, message in total.errors:
        click.echo(f"{path}: {message}", err=True)
    return total


def _fix_summary(report, opts: dict, err: bool, write: bool = True) -> None:
    from collections import Counter

    changed = [o for o in report.outcomes if o.changed]
    applied = sum(len(o.applied) for o in changed)
    verb = "Fixed" if write else "Would fix"
    click.echo(f"{verb} {applied} findings in {len(changed)} files.", err=err)
    if opts.get("show_fixes"):
        for outcome in changed:
            click.echo(f"- {outcome.path}:", err=err)
            counts = Counter((d.code, d.rule) for d in outcome.applied)
            for (code, rule), n in sorted(counts.items()):
                click.echo(f"    {n} × {code} ({rule})", err=err)
    for header in report.headers:
        click.echo(
            f"{'Wrote' if write else 'Would write'} compatibility header {header.path}", err=True
        )


@main.command()
@_apply(_SHARED)
@_apply(_RUN)
@click.option(
    "--rule",
    "rules",
    multiple=True,
    help="Apply only these rules' fixes: ids, codes or prefixes, as --select.",
)
@_apply(_FIXING)
@click.option("--diff", is_flag=True, help="Print a unified diff; write nothing.")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 if something would change.")
@click.option("--exit-non-zero-on-fix", is_flag=True, help="Exit 1 when files were changed.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings remain.")
def fix(paths, **opts) -> None:
    """Apply the fixes under PATHS (safe ones; unsafe ones too with --unsafe-fixes), then count
    what remains. Exits like `lint` on what remains; with --diff/--check, 1 if something would
    change."""
    from cuda2rocm.session import Session, merge

    if opts["unsafe_alias"]:
        opts["unsafe_fixes"] = True
    session = Session(paths, _options(opts, rules=_split(opts["rules"])))
    groups = session.groups()
    diff, check = opts["diff"], opts["check"]
    write = not (diff or check)
    before = merge(session.lint(groups)) if write else None
    report = _fix_groups(session, groups, opts, write)
    if before is not None:
        session.empty += session.skipped_everything(groups, before)
    if diff:
        for outcome in report.outcomes:
            if outcome.changed:
                click.echo(outcome.diff(), nl=False)
        for header in report.headers:
            click.echo(header.diff(), nl=False)
    changed = [o for o in report.outcomes if o.changed]
    problem = _problems_exit(session)
    if problem and not groups:  # nothing to fix: no success line to print
        sys.exit(problem)
    _fix_summary(report, opts, err=diff, write=write)
    if not write:
        sys.exit(problem or (1 if changed else 0))
    parts = session.lint(session.groups())
    result = merge(parts)
    _newly_reachable(before, result)
    _remaining_line(result, opts)
    if problem:
        sys.exit(problem)
    if opts["exit_non_zero_on_fix"] and changed:
        sys.exit(1)
    sys.exit(0 if opts["exit_zero"] else (1 if session.failing(parts) else 0))


def _remaining_line(result, opts: dict) -> None:
    from collections import Counter

    diags = result.diagnostics
    by = Counter(d.severity.value for d in diags)
    line = (
        f"{len(diags)} findings remain ({by['error']} errors, {by['warning']} warnings, "
        f"{by['info']} info)"
    )
    click.echo(line + (": see `cuda2rocm lint`." if diags else "."))
    unsafe = sum(1 for d in diags if d.fix is not None and d.fix.safety.value == "unsafe")
    if unsafe and not opts.get("unsafe_fixes"):
        click.echo(f"{unsafe} more fixes available with `--unsafe-fixes`.")


# -- stdin, settings, watch ------------------------------------------------------------------


def _lint_stdin(paths, opts: dict) -> None:
    """`lint - --stdin-filename NAME`: lint (or with --fix, fix and print) standard input."""
    from cuda2rocm import sources
    from cuda2rocm.discover import Found, language_of
    from cuda2rocm.engine import LintResult
    from cuda2rocm.session import Session

    if paths != ("-",):
        raise click.UsageError("--stdin-filename needs `-` as the only path")
    name = opts["stdin_filename"] or "stdin.py"
    language = language_of(Path(name))
    if language is None:
        raise click.UsageError(f"{name}: cuda2rocm reads no file of this kind")
    session = Session([name], _options(opts))
    config = session.config_for(name)
    linter = session.linter_for(config)
    data = sys.stdin.buffer.read()
    item = Found(Path(name), name, language)
    result = LintResult(files=1)
    text = None
    if opts["fix_"]:
        from cuda2rocm.fixer import fix_source

        try:
            text, encoding, bom = sources.decode(data, name, language)
        except sources.SourceError as exc:
            raise Failure(str(exc)) from exc
        unsafe = opts["unsafe_fixes"] if opts["unsafe_fixes"] is not None else config.unsafe_fixes
        source = sources.SourceFile(name, language, text, encoding, bom)
        outcome = fix_source(source, linter.lint_source, unsafe, linter.syntax_error)
        found = outcome.remaining
        sys.stdout.buffer.write(source.encode(outcome.fixed))
        sys.stdout.flush()
    else:
        found = linter.lint_data(item, data)
    for d in found:
        (result.guarded if d.guarded else result.diagnostics).append(d)
    result.diagnostics.sort(key=lambda d: d.sort_key)
    if text is None:
        _emit(result, opts)
    else:  # standard output holds the fixed file: findings go to standard error
        from cuda2rocm.report import concise

        click.echo(concise.render(result), err=True)
    limit = {"error": 0, "warning": 1, "info": 2}[session.fail_on(config)]
    failing = any(
        {"error": 0, "warning": 1, "info": 2}[d.severity.value] <= limit for d in result.diagnostics
    )
    sys.exit(0 if opts["exit_zero"] or not failing else 1)


def _show_settings(session, path: str) -> None:
    """The settings that apply to one file, and which file each came from."""
    config = session.config_for(path)
    rules = session.rules_for(config)
    settings = config.settings()
    click.echo(f"file: {path}")
    click.echo(f"configuration: {config.path or '(none found; defaults)'}")
    keys = {
        "target": "target",
        "unsafe-fixes": "unsafe-fixes",
        "max-file-size": "max-file-size",
        "fail-on": "fail-on",
        "baseline": "baseline",
    }
    for key, name in keys.items():
        origin = config.origins.get(key, "default")
        click.echo(f"{name} = {settings[key]!r}  # {origin}")
    targets = session.targets_for(config)
    given = {
        "rocm-version": session.options.rocm_version,
        "offload-arch": session.options.offload_arch,
    }
    for key, value in targets.settings().items():
        origin = "command line" if given[key] else config.origins.get(key, "default")
        click.echo(f"{key} = {value!r}  # {origin}")
    for layer in config.layers:
        click.echo(
            f"selection from {layer.origin}: select={list(layer.select)} "
            f"extend-select={list(layer.extend_select)} ignore={list(layer.ignore)}"
        )
    cli = session.cli_layer
    if cli.select or cli.extend_select or cli.ignore:
        click.echo(
            f"selection from command line: select={list(cli.select)} "
            f"extend-select={list(cli.extend_select)} ignore={list(cli.ignore)}"
        )
    for p in config.exclude:
        click.echo(f"exclude (relative to {p.base}): {list(p.patterns)}")
    for p, selectors in config.per_file_ignores:
        click.echo(f"per-file-ignores (relative to {p.base}): {p.patterns[0]} = {list(selectors)}")
    for p in config.torch_built:
        click.echo(f"torch-built (relative to {p.base}): {list(p.patterns)}")
    for p in config.cuda_only:
        click.echo(f"cuda-only (relative to {p.base}): {list(p.patterns)}")
    for selector, (level, origin) in sorted(config.severity.items()):
        click.echo(f"severity {selector} = {level!r}  # {origin}")
    click.echo(f"rules ({len(rules)}): {' '.join(r.code for r in rules)}")


def _watch(new_session, opts: dict) -> None:
    """Lint, then poll the files' modification times and lint again on a change.

    Polling (no extra dependency); `--watch-runs N` (hidden) stops after N runs, for tests."""
    import contextlib
    import os
    import time

    def snapshot() -> dict[str, int]:
        """Modification times of every lintable file and of the configurations above them."""
        from cuda2rocm.config import find_config
        from cuda2rocm.discover import discover

        stamps: dict[str, int] = {}
        folders = set()
        for item in discover(list(opts["paths"]) or ["."]):
            folders.add(item.path.parent)
            with contextlib.suppress(OSError):
                stamps[str(item.path)] = os.stat(item.path).st_mtime_ns
        for folder in folders:
            config = find_config(folder)
            if config is not None:
                with contextlib.suppress(OSError):
                    stamps[str(config)] = os.stat(config).st_mtime_ns
        return stamps

    from cuda2rocm.session import SessionError

    runs = 0
    try:
        while True:
            try:
                # A fresh session each time: configuration files may have changed too.
                code = _lint_once(new_session(), opts)
            except SessionError as exc:  # e.g. a configuration being edited
                Failure(str(exc)).show()
                code = 2
            except click.ClickException as exc:
                exc.show()
                code = exc.exit_code
            runs += 1
            click.echo(f"[watch] lint finished (exit {code}); waiting for changes...", err=True)
            if opts["watch_runs"] and runs >= opts["watch_runs"]:
                sys.exit(code)
            before = snapshot()
            while snapshot() == before:
                time.sleep(opts["watch_interval"])
    except KeyboardInterrupt:
        sys.exit(0)


# -- other commands --------------------------------------------------------------------------


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
            raise Failure(str(exc)) from exc
    removed = clean_cache(Path(cache_dir))
    click.echo(f"Removed {removed} cache files from {cache_dir}.")


@main.command()
@_apply(_SHARED)
@_apply(_RUN)
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
    from cuda2rocm.session import Session, merge

    session = Session(paths, _options(opts))
    groups = session.groups()
    parts = _lint_parts(session, groups)
    counts: list = []
    footer = _apply_baselines(session, opts, parts, counts)
    result = merge(parts)
    session.empty += session.skipped_everything(groups, result)
    trend = None
    if counts:
        from cuda2rocm.report.plan import Trend

        recorded, hidden, stale = (sum(c[i] for c in counts) for i in range(3))
        trend = Trend(recorded, hidden, stale, len(result.diagnostics))
    note = " ".join(footer).replace("findings hidden", "accepted findings are not counted here")
    names = ", ".join(Path(p).resolve().name or p for p in session.paths)
    title = opts["title"] or f"ROCm readiness report: {names}"
    page = html.render(result, paths=session.paths, title=title, note=note, trend=trend)
    if opts["output"] == "-":
        click.echo(page, nl=False)
    else:
        try:
            Path(opts["output"]).write_text(page, encoding="utf-8")
        except OSError as exc:
            raise Failure(f"cannot write {opts['output']}: {exc.strerror or exc}") from exc
        total = len(result.diagnostics)
        click.echo(f"Wrote {opts['output']}: {total} findings in {result.files} files.", err=True)
    problem = _problems_exit(session)
    if problem:
        sys.exit(problem)


def _plain(text: str) -> str:
    """No trailing spaces on any line."""
    return "\n".join(line.rstrip() for line in text.splitlines())


def _is_terminal() -> bool:
    return sys.stdout.isatty()


@main.command(name="rules")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(("table", "plain", "json")),
    default=None,
    help="table on a terminal, else plain (one rule per line, never wrapped).",
)
@click.option("--all", "show_all", is_flag=True, help="Include the general (CR0xx) rules.")
def rules_command(fmt: str | None, show_all: bool) -> None:
    """List the rules."""
    import json

    from cuda2rocm.catalogue import load_catalogue

    rules = [r for r in load_catalogue() if show_all or r.step != 0]
    fmt = fmt or ("table" if _is_terminal() else "plain")
    if fmt == "json":
        click.echo(json.dumps([_rule_json(r, full=False) for r in rules], indent=2))
        return
    columns = [
        (
            r.code,
            r.id,
            r.step_name,
            r.severity.value,
            r.fix,
            "on" if r.default else "opt-in",
            r.summary,
        )
        for r in rules
    ]
    if fmt == "plain":
        widths = [max(len(c[i]) for c in columns) for i in range(6)]
        for c in columns:
            cells = [c[i].ljust(widths[i]) for i in range(6)] + [" ".join(c[6].split())]
            click.echo("  ".join(cells).rstrip())
        return
    from rich.console import Console
    from rich.table import Table

    table = Table()
    for column in ("code", "id", "step", "severity", "fix", "default", "summary"):
        table.add_column(column, no_wrap=column != "summary", overflow="fold")
    for c in columns:
        table.add_row(*c)
    Console().print(table)


def _rule_json(r, full: bool) -> dict:
    out = {
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
    if full:
        out["explanation"] = r.explanation
        out["references"] = [{"title": ref.title, "url": ref.url} for ref in r.references]
        out["examples"] = {
            "invalid": [{"name": e.name, "code": e.code, "fixed": e.fixed} for e in r.invalid],
            "valid": [{"name": e.name, "code": e.code} for e in r.valid],
        }
        if not r.default:
            out["enable"] = _opt_in_hint(r)
    return out


def _opt_in_hint(spec) -> str:
    return (
        f"This rule is opt-in: turn it on with `--extend-select {spec.id}`, or "
        f'`extend-select = ["{spec.id}"]` in `[tool.cuda2rocm]`.'
    )


@main.command()
@click.argument("rule")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(("text", "markdown", "json")),
    default=None,
    help="text on a terminal, else markdown (plain, never wrapped, URLs printed).",
)
def explain(rule: str, fmt: str | None) -> None:
    """Show a rule's documentation: what it finds, why, the fix, examples and references."""
    import json

    from cuda2rocm.catalogue import UnknownRuleError, find_rule, load_catalogue
    from cuda2rocm.explain import render_markdown
    from cuda2rocm.selection import suggest

    try:
        spec = find_rule(rule)
    except UnknownRuleError as exc:
        from cuda2rocm import mapping

        if mapping.lookup(rule) is not None:  # a CUDA name, not a rule: what it becomes
            _print_mapping(rule, "json" if fmt == "json" else "text")
            return
        hint = suggest(rule, load_catalogue())
        more = f"; did you mean '{hint}'?" if hint else ""
        raise click.UsageError(f"unknown rule '{rule}'{more} (see `cuda2rocm rules`)") from exc
    fmt = fmt or ("text" if _is_terminal() else "markdown")
    if fmt == "json":
        click.echo(json.dumps(_rule_json(spec, full=True), indent=2))
        return
    parts = render_markdown(spec).split("\n\n")
    if not spec.default:
        parts.insert(2, _opt_in_hint(spec))
    document = "\n\n".join(parts)
    if fmt == "markdown":
        click.echo(_plain(document))
        return
    from rich.console import Console
    from rich.markdown import Markdown

    Console().print(Markdown(document, hyperlinks=False))


@main.command()
def server() -> None:
    """Run the language server (LSP over stdio) for editors (needs the `server` extra)."""
    try:
        from cuda2rocm.server import main as serve
    except ImportError as exc:
        raise Failure(
            f"the language server needs pygls ({exc.name} is missing): "
            "pip install 'cuda2rocm[server]'"
        ) from exc
    serve()


@main.command(name="map")
@click.argument("name")
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text")
def map_command(name: str, fmt: str) -> None:
    """What a CUDA API, type, header, macro, library symbol or nvcc flag becomes on ROCm."""
    _print_mapping(name, fmt)


def _print_mapping(name: str, fmt: str) -> None:
    import json

    from cuda2rocm import mapping

    found = mapping.lookup(name)
    if found is None:
        close = mapping.suggest(name)
        more = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise click.UsageError(f"no shipped table knows '{name}'{more}")
    if fmt == "json":
        click.echo(json.dumps(found.to_json(), indent=2))
    else:
        click.echo(mapping.render_text(found))


if __name__ == "__main__":  # pragma: no cover
    main()
