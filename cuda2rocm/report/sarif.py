"""SARIF 2.1.0 for code scanning: rule metadata with help, results with regions and fixes."""

from __future__ import annotations

import json
from pathlib import PurePath
from urllib.parse import quote

from cuda2rocm import __version__
from cuda2rocm.catalogue import RuleSpec, load_catalogue
from cuda2rocm.engine import LintResult
from cuda2rocm.report import json_format

LEVEL = {"error": "error", "warning": "warning", "info": "note"}
SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _uri(path: str) -> str:
    posix = PurePath(path).as_posix()
    return quote(posix, safe="/-_.~")


def _help_uri(spec: RuleSpec) -> str | None:
    return next((r.url for r in spec.references if r.url.startswith("https://")), None)


def _rule(spec: RuleSpec) -> dict:
    rule = {
        "id": spec.code,
        "name": spec.id,
        "shortDescription": {"text": spec.summary},
        "fullDescription": {"text": spec.explanation},
        "help": {"text": spec.explanation, "markdown": spec.explanation},
        "defaultConfiguration": {"level": LEVEL[spec.severity.value]},
        "properties": {
            "step": spec.step,
            "step_name": spec.step_name,
            "fix": spec.fix,
            "tags": ["rocm", "portability", spec.step_name],
        },
    }
    uri = _help_uri(spec)
    if uri:
        rule["helpUri"] = uri
    return rule


def render(result: LintResult) -> str:
    catalogue = {r.id: r for r in load_catalogue()}
    used = sorted({d.rule for d in result.diagnostics}, key=lambda r: catalogue[r].code)
    index = {rule_id: i for i, rule_id in enumerate(used)}
    results = []
    for d in result.diagnostics:
        p = d.position
        location = {
            "physicalLocation": {
                "artifactLocation": {"uri": _uri(d.path), "uriBaseId": "%SRCROOT%"},
                "region": {
                    "startLine": p.line,
                    "startColumn": p.column,
                    "endLine": p.end_line,
                    "endColumn": p.end_column,
                },
            }
        }
        entry = {
            "ruleId": d.code,
            "ruleIndex": index[d.rule],
            "level": LEVEL[d.severity.value],
            "message": {"text": d.message},
            "locations": [location],
        }
        if d.fix is not None:
            entry["fixes"] = [
                {
                    "description": {"text": d.fix.description or "apply the fix"},
                    "artifactChanges": [
                        {
                            "artifactLocation": {"uri": _uri(d.path), "uriBaseId": "%SRCROOT%"},
                            "replacements": [
                                {
                                    "deletedRegion": {
                                        "charOffset": e.start,
                                        "charLength": e.end - e.start,
                                    },
                                    "insertedContent": {"text": e.replacement},
                                }
                                for e in d.fix.edits
                            ],
                        }
                    ],
                    "properties": {"safety": d.fix.safety.value},
                }
            ]
        results.append(entry)
    document = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "cuda2rocm",
                        "version": __version__,
                        "rules": [_rule(catalogue[r]) for r in used],
                    }
                },
                "results": results,
                "properties": {"targets": json_format._targets(result)},
                "invocations": [
                    {
                        "executionSuccessful": True,
                        "toolExecutionNotifications": [
                            {
                                "level": "note",
                                "message": {"text": n.message},
                                "locations": [
                                    {
                                        "physicalLocation": {
                                            "artifactLocation": {
                                                "uri": _uri(n.path),
                                                "uriBaseId": "%SRCROOT%",
                                            }
                                        }
                                    }
                                ],
                            }
                            for n in result.notices
                        ],
                    }
                ],
                "columnKind": "unicodeCodePoints",
            }
        ],
    }
    return json.dumps(document, indent=2, ensure_ascii=False)
