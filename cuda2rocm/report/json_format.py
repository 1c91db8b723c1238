"""JSON output: a stable, documented schema (see `schemas/report.schema.json`)."""

from __future__ import annotations

import json
from collections import Counter

from cuda2rocm import __version__
from cuda2rocm.catalogue import RuleSpec
from cuda2rocm.engine import LintResult
from cuda2rocm.model import STEPS, Diagnostic
from cuda2rocm.report.messages import short

#: 2: each diagnostic adds `short` (its one-line form), `help` (the long form, the same text
#: as `message`, which stays for readers of version 1) and `url` (the rule's reference).
SCHEMA_VERSION = 2


def summary(result: LintResult) -> dict:
    by_severity = Counter(d.severity.value for d in result.diagnostics)
    by_rule = Counter(d.rule for d in result.diagnostics)
    by_step = Counter(STEPS.get(d.step, "general") for d in result.diagnostics)
    fixable = Counter(d.fix.safety.value for d in result.diagnostics if d.fix is not None)
    return {
        "files": result.files,
        "diagnostics": len(result.diagnostics),
        "by_severity": {k: by_severity.get(k, 0) for k in ("error", "warning", "info")},
        "by_step": dict(sorted(by_step.items())),
        "by_rule": dict(sorted(by_rule.items())),
        "fixable": {k: fixable.get(k, 0) for k in ("safe", "unsafe")},
    }


def rule_url(spec: RuleSpec | None) -> str:
    """The rule's documentation: its first https reference (SARIF's helpUri), else ""."""
    if spec is None:
        return ""
    return next((r.url for r in spec.references if r.url.startswith("https://")), "")


def _diagnostic(d: Diagnostic, specs: dict[str, RuleSpec]) -> dict:
    return {
        **d.to_json(),
        "short": short(d.message),
        "help": d.message,
        "url": rule_url(specs.get(d.rule)),
    }


def _targets(result: LintResult) -> list[dict]:
    """The ROCm releases and GPUs the findings were judged for (one entry per distinct
    configuration of the run)."""
    from cuda2rocm.targets import DEFAULT

    return result.targets or [DEFAULT.settings()]


def render(result: LintResult, show_guarded: bool = False) -> str:
    """With `show_guarded`, the guarded findings join `diagnostics`, each with its `guarded`
    reason; `summary` still counts only the reported ones."""
    from cuda2rocm.catalogue import load_catalogue

    specs = {r.id: r for r in load_catalogue()}
    shown = result.diagnostics
    if show_guarded:
        shown = sorted([*result.diagnostics, *result.guarded], key=lambda d: d.sort_key)
    document = {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "cuda2rocm", "version": __version__},
        "targets": _targets(result),
        "diagnostics": [_diagnostic(d, specs) for d in shown],
        "notices": [{"path": n.path, "message": n.message} for n in result.notices],
        "summary": summary(result),
    }
    return json.dumps(document, indent=2, ensure_ascii=False)
