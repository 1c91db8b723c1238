"""Command line: `lint`, `fix`, `rules`, `explain`.

Exit codes: 0 nothing found, 1 findings (or, for `fix --diff/--check`, changes to make),
2 usage or configuration error. Heavy modules are imported inside the commands so that
`--version` and `--help` start instantly.
"""

from __future__ import annotations

import sys

import click

from cuda2rocm import __version__

FORMATS = ("text", "concise", "json")


def _split(values: tuple[str, ...]) -> list[str]:
    return [s.strip() for v in values for s in v.split(",") if s.strip()]


class _Session:
    """Configuration, selected rules and a linter, built once per command."""

    def __init__(
        self,
        paths: tuple[str, ...],
        config_file: str | None,
        select: tuple[str, ...],
        extend_select: tuple[str, ...],
        ignore: tuple[str, ...],
        target: str | None = None,
    ) -> None:
        from cuda2rocm.catalogue import UnknownRuleError, load_catalogue, select_rules
        from cuda2rocm.config import ConfigError, load_config
        from cuda2rocm.engine import Linter

        self.paths = list(paths) or ["."]
        try:
            self.config = load_config(self.paths, config_file)
        except ConfigError as exc:
            raise click.UsageError(str(exc)) from exc
        cfg = self.config
        try:
            self.rules = select_rules(
                load_catalogue(),
                select=_split(select) or cfg.select,
                extend_select=cfg.extend_select + _split(extend_select),
                ignore=cfg.ignore + _split(ignore),
            )
        except UnknownRuleError as exc:
            where = f" (in {cfg.path})" if cfg.path else ""
            raise click.UsageError(f"{exc}{where}; see `cuda2rocm rules`") from exc
        self.exclude = cfg.exclude + cfg.extend_exclude
        self.target = target or cfg.target
        self.linter = Linter(
            self.rules,
            max_bytes=cfg.max_file_size,
            ignored_for=cfg.ignored_for if cfg.per_file_ignores else None,
            target=self.target,
        )


def _selection_options(func):
    options = [
        click.option(
            "--config",
            "config_file",
            type=click.Path(dir_okay=False),
            help="Use this "
            "configuration file instead of the nearest pyproject.toml/cuda2rocm.toml.",
        ),
        click.option(
            "--select",
            multiple=True,
            help="Only these rules (id, code or code "
            "prefix such as CR4; comma-separated or repeated). Overrides config.",
        ),
        click.option(
            "--extend-select",
            multiple=True,
            help="Also these rules (e.g. opt-in ones such as pin-memory).",
        ),
        click.option("--ignore", multiple=True, help="Not these rules."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cuda2rocm")
def main() -> None:
    """Find and fix what breaks when a PyTorch project moves to AMD GPUs (ROCm/HIP)."""


@main.command()
@click.argument("paths", nargs=-1, type=click.Path())
@_selection_options
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--no-frames", is_flag=True, help="Text format: no code frames.")
def lint(paths, config_file, select, extend_select, ignore, fmt, exit_zero, no_frames) -> None:
    """Report what breaks or misbehaves on ROCm under PATHS (default: the current directory)."""
    session = _Session(paths, config_file, select, extend_select, ignore)
    result = session.linter.lint_paths(session.paths, exclude=session.exclude)
    if fmt == "json":
        from cuda2rocm.report import json_format

        click.echo(json_format.render(result))
    elif fmt == "concise":
        from cuda2rocm.report import concise

        out = concise.render(result)
        if out:
            click.echo(out)
    else:
        from rich.console import Console

        from cuda2rocm.report import text

        text.render(result, Console(highlight=False), show_frames=not no_frames)
    sys.exit(0 if exit_zero or not result.diagnostics else 1)


@main.command()
@click.argument("paths", nargs=-1, type=click.Path())
@_selection_options
@click.option("--rule", "rules", multiple=True, help="Apply only these rules' fixes (id or code).")
@click.option("--unsafe", is_flag=True, default=None, help="Also apply unsafe fixes.")
@click.option("--diff", is_flag=True, help="Print a unified diff; write nothing.")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 if something would change.")
@click.option(
    "--target",
    type=click.Choice(("portable", "hip")),
    default=None,
    help="C++ rewrites: portable (builds with nvcc and hipcc; default) or hip (one-way).",
)
def fix(paths, config_file, select, extend_select, ignore, rules, unsafe, diff, check, target):
    """Apply the fixes under PATHS: safe ones by default, unsafe ones with --unsafe."""
    from cuda2rocm.fixer import fix_paths

    session = _Session(paths, config_file, select + tuple(rules), extend_select, ignore, target)
    if rules:
        from cuda2rocm.catalogue import UnknownRuleError, find_rule

        try:
            wanted = {find_rule(r, session.rules).id for r in _split(rules)}
        except UnknownRuleError as exc:
            raise click.UsageError(str(exc)) from exc
        session.linter.rules = [r for r in session.linter.rules if r.id in wanted]
    unsafe = session.config.unsafe_fixes if unsafe is None else unsafe
    write = not (diff or check)
    report = fix_paths(session.linter, session.paths, session.exclude, unsafe=unsafe, write=write)
    for outcome in report.outcomes:
        if diff and outcome.changed:
            click.echo(outcome.diff(), nl=False)
        if outcome.refused:
            click.echo(f"{outcome.path}: {outcome.refused}", err=True)
    for path, message in report.errors:
        click.echo(f"{path}: {message}", err=True)
    changed = [o for o in report.outcomes if o.changed]
    applied = sum(len(o.applied) for o in changed)
    remaining = sum(len(o.remaining) for o in report.outcomes)
    verb = "Would fix" if not write else "Fixed"
    click.echo(
        f"{verb} {applied} findings in {len(changed)} files; {remaining} remaining "
        "(see `cuda2rocm lint`).",
        err=diff,
    )
    if write:
        sys.exit(0)
    sys.exit(1 if changed else 0)


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
