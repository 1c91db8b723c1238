"""Triage: one-line messages, blockers first by component, full text in JSON, no notices
about code ROCm never compiles."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import jsonschema

from cuda2rocm.catalogue import load_catalogue
from cuda2rocm.discover import language_of
from cuda2rocm.engine import Linter
from cuda2rocm.model import Diagnostic, Position, Severity
from cuda2rocm.report import messages, triage
from cuda2rocm.sources import SourceFile

SCHEMA = Path(__file__).resolve().parent.parent / "cuda2rocm" / "schemas" / "report.schema.json"


def _example_messages() -> list[str]:
    rules = load_catalogue()
    lintable = [r for r in rules if r.step != 0]
    out = []
    for spec in rules:
        linter = Linter([*lintable, spec] if spec.step == 0 else [spec])
        for example in spec.invalid:
            source = SourceFile(
                example.path, language_of(Path(example.path)), example.code.lstrip("\n")
            )
            out += [d.message for d in linter.lint_source(source) if d.rule == spec.id]
    return out


def test_short_lines_over_every_rule_example() -> None:
    found = _example_messages()
    assert len(found) > 300
    lines = [messages.short(m) for m in found]
    assert max(len(s) for s in lines) <= messages.LIMIT
    assert statistics.median(len(s) for s in lines) <= 85
    for message, line in zip(found, lines, strict=True):
        whole = " ".join(message.split())
        assert "\n" not in line and line
        assert whole.startswith(line.rstrip("…")), (message, line)  # a prefix, never rewritten
    # Most lines end at a clause, not mid-sentence.
    assert sum(s.endswith("…") for s in lines) < len(lines) // 4


def test_short_never_cuts_inside_quoted_code() -> None:
    message = "`std::min({a, b}); x` in device code fails; " + "use nested calls " * 10
    assert messages.short(message) == "`std::min({a, b}); x` in device code fails"
    assert messages.short("short enough; yes") == "short enough; yes"
    long_word = "x" * 150
    assert len(messages.short(long_word)) <= messages.LIMIT


def _d(path: str, severity: Severity, line: int = 1) -> Diagnostic:
    return Diagnostic(path, "r", "CR101", severity, 1, Position(line, 1, line, 2), "m")


def test_groups_put_errors_first_then_by_component() -> None:
    found = [
        _d("proj/b/x.py", Severity.INFO),
        _d("proj/a/y.cu", Severity.WARNING),
        _d("proj/setup.py", Severity.ERROR),
        _d("proj/b/z.py", Severity.ERROR, 3),
        _d("proj/b/z.py", Severity.ERROR, 1),
    ]
    groups = triage.groups(found)
    assert [(g.severity, g.component) for g in groups] == [
        ("error", "proj/"),
        ("error", "proj/b/"),
        ("warning", "proj/a/"),
        ("info", "proj/b/"),
    ]
    assert [d.position.line for d in groups[1].diagnostics] == [1, 3]
    assert triage.components(["a.py", "b.py"]) == {"a.py": "(top level)", "b.py": "(top level)"}


PROJECT = {
    "notes.py": "import torch\ntorch.backends.cudnn.benchmark = True\n",
    "kernels/warp.cu": "#define WARP_SIZE 32\n",
    "requirements.txt": "torch==2.3.1+cu121\n",
}


def test_text_output_leads_with_blockers(cli, write, tmp_path) -> None:
    for name, text in PROJECT.items():
        write(name, text)
    out = cli("lint", "--no-cache", "--exit-zero", ".", cwd=tmp_path).stdout
    blockers = out.index("Blockers")
    assert blockers < out.index("notes.py:2")  # the info comes after every error
    assert out.index("requirements.txt:1") < out.index("notes.py:2")
    heads = [line for line in out.splitlines() if ": CR" in line]
    assert heads and all(len(h.split("]", 1)[1].rsplit("  (", 1)[0]) <= 101 for h in heads)


def test_json_has_short_help_url_and_validates(cli, write, tmp_path) -> None:
    for name, text in PROJECT.items():
        write(name, text)
    out = cli("lint", "--no-cache", "--exit-zero", "--format", "json", ".", cwd=tmp_path).stdout
    document = json.loads(out)
    jsonschema.validate(document, json.loads(SCHEMA.read_text()))
    assert document["schema_version"] == 2
    for d in document["diagnostics"]:
        assert d["help"] == d["message"] and len(d["short"]) <= 100
        assert d["url"].startswith("https://")


BROKEN = "__global__ void k(float* x) { x[0] = 1; ))) }\n#define WARP_SIZE 32\n"


def test_no_recovery_notice_about_code_rocm_never_compiles(cli, write, tmp_path) -> None:
    write("pyproject.toml", '[tool.cuda2rocm]\ncuda-only = ["nv/"]\n')
    write("nv/broken.cu", BROKEN)
    write("ported/broken.cu", BROKEN)
    out = cli("lint", "--no-cache", "--exit-zero", "--format", "json", ".", cwd=tmp_path).stdout
    notices = [n["path"] for n in json.loads(out)["notices"]]
    assert notices == ["ported/broken.cu"]
