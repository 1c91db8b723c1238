"""The command line as a user meets it: exit codes, formats, selection, fix and diff."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

import cuda2rocm

SCHEMA = json.loads(
    (Path(cuda2rocm.__file__).parent / "schemas" / "report.schema.json").read_text()
)

PORTABLE = """import torch
import torch.distributed as dist

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = model.cuda()
x = torch.zeros(2, device="cuda:0").to("cuda")
dist.init_process_group(backend="nccl")
with torch.amp.autocast("cuda"):
    pass
"""

BROKEN = """import torch

if torch.backends.cudnn.version() >= 8000:
    y = torch.zeros(1, device="hip")
"""


def test_clean_tree_exits_0(cli, write, tmp_path):
    write("ok.py", PORTABLE)
    result = cli("lint", str(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no findings" in result.stdout


def test_findings_exit_1_and_exit_zero(cli, write, tmp_path):
    write("bad.py", BROKEN)
    assert cli("lint", str(tmp_path)).returncode == 1
    assert cli("lint", "--exit-zero", str(tmp_path)).returncode == 0


def test_text_output_has_position_frame_and_hint(cli, write, tmp_path):
    write("bad.py", BROKEN)
    out = cli("lint", str(tmp_path)).stdout
    assert "bad.py:3:4: CR105 [warning]" in out
    assert "bad.py:4:31: CR102 [error]" in out
    assert "if torch.backends.cudnn.version() >= 8000:" in out
    assert "^^^^^" in out
    assert "safe fix" in out
    assert "Found 2 findings in 1 files" in out


def test_json_output_follows_schema(cli, write, tmp_path):
    write("bad.py", BROKEN)
    write("ok.py", PORTABLE)
    result = cli("lint", "--format", "json", str(tmp_path))
    assert result.returncode == 1
    document = json.loads(result.stdout)
    jsonschema.validate(document, SCHEMA)
    rules = sorted(d["rule"] for d in document["diagnostics"])
    assert rules == ["cudnn-version-gate", "device-string-hip"]
    first = document["diagnostics"][0]
    assert (first["line"], first["column"], first["end_line"], first["end_column"]) == (3, 4, 3, 42)
    assert first["fix"]["safety"] == "safe"
    assert document["summary"]["files"] == 2
    assert document["summary"]["by_severity"] == {"error": 1, "warning": 1, "info": 0}


def test_concise_output_is_one_line_per_finding(cli, write, tmp_path):
    write("bad.py", BROKEN)
    lines = cli("lint", "--format", "concise", str(tmp_path)).stdout.splitlines()
    assert len(lines) == 4
    assert lines[0].endswith("(cudnn-version-gate)")
    assert ":3:4: CR105 [*] [warning]" in lines[0]
    assert lines[2:] == [
        "Found 2 findings in 1 files: 1 errors, 1 warnings, 0 info.",
        "[*] 2 fixable with `cuda2rocm lint --fix`.",
    ]


@pytest.mark.parametrize(
    ("option", "expected"),
    [
        (["--select", "CR102"], ["device-string-hip"]),
        (["--select", "cudnn-version-gate"], ["cudnn-version-gate"]),
        (["--ignore", "CR102"], ["cudnn-version-gate"]),
        (["--select", "CR2,CR1"], ["cudnn-version-gate", "device-string-hip"]),
        (["--select", "CR2,CR105"], ["cudnn-version-gate"]),
    ],
)
def test_selection_by_id_code_and_prefix(cli, write, tmp_path, option, expected):
    write("bad.py", BROKEN)
    result = cli("lint", "--format", "json", *option, str(tmp_path))
    assert sorted(d["rule"] for d in json.loads(result.stdout)["diagnostics"]) == expected


def test_opt_in_rule_needs_naming(cli, write, tmp_path):
    write("load.py", "from torch.utils.data import DataLoader\nDataLoader(d, pin_memory=True)\n")
    # pin-memory is an info finding: --fail-on info makes it count towards the exit code.
    assert cli("lint", "--fail-on", "info", str(tmp_path)).returncode == 0
    assert cli("lint", "--fail-on", "info", "--select", "CR5", str(tmp_path)).returncode == 0
    assert (
        cli("lint", "--fail-on", "info", "--extend-select", "pin-memory", str(tmp_path)).returncode
        == 1
    )
    assert cli("lint", "--fail-on", "info", "--select", "CR501", str(tmp_path)).returncode == 1


def test_unknown_rule_is_a_usage_error(cli, tmp_path):
    result = cli("lint", "--select", "no-such-rule", str(tmp_path))
    assert result.returncode == 2
    assert "unknown rule" in result.stderr


def test_unparsable_file_is_reported_and_the_run_goes_on(cli, write, tmp_path):
    write("a_py2.py", 'import torch\nprint "cuda", torch.version.cuda\n')
    write("b.py", BROKEN)
    document = json.loads(cli("lint", "--format", "json", str(tmp_path)).stdout)
    rules = [(Path(d["path"]).name, d["rule"]) for d in document["diagnostics"]]
    assert ("a_py2.py", "parse-error") in rules
    assert ("b.py", "cudnn-version-gate") in rules
    parse = next(d for d in document["diagnostics"] if d["rule"] == "parse-error")
    assert parse["line"] == 2


def test_fix_rewrites_and_second_fix_changes_nothing(cli, write, tmp_path):
    path = write("bad.py", BROKEN)
    result = cli("fix", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert path.read_text() == (
        "import torch\n\nif (not torch.version.hip and torch.backends.cudnn.version() >= 8000):\n"
        '    y = torch.zeros(1, device="cuda")\n'
    )
    assert "Fixed 2 findings in 1 files" in result.stdout
    mtime = path.stat().st_mtime_ns
    again = cli("fix", str(tmp_path))
    assert "Fixed 0 findings in 0 files" in again.stdout
    assert path.stat().st_mtime_ns == mtime
    assert cli("lint", str(tmp_path)).returncode == 0


def test_fix_rule_applies_only_that_rule(cli, write, tmp_path):
    path = write("bad.py", BROKEN)
    cli("fix", "--rule", "device-string-hip", str(tmp_path))
    text = path.read_text()
    assert 'device="cuda"' in text and "torch.backends.cudnn.version() >= 8000:" in text


def test_diff_prints_and_writes_nothing(cli, write, tmp_path):
    path = write("bad.py", BROKEN)
    result = cli("fix", "--diff", str(tmp_path))
    assert result.returncode == 1
    assert '-    y = torch.zeros(1, device="hip")' in result.stdout
    assert '+    y = torch.zeros(1, device="cuda")' in result.stdout
    assert path.read_text() == BROKEN
    assert cli("fix", "--check", str(tmp_path)).returncode == 1


def test_cuda_strings_and_nccl_are_never_rewritten(cli, write, tmp_path):
    path = write("ok.py", PORTABLE)
    assert cli("fix", "--unsafe", str(tmp_path)).returncode == 0
    assert path.read_text() == PORTABLE
    assert cli("fix", "--diff", str(tmp_path)).stdout == ""


def test_rules_and_explain(cli):
    listing = json.loads(cli("rules", "--format", "json").stdout)
    ids = {r["id"] for r in listing}
    assert {
        "amp-deprecated-api",
        "torch-version-cuda",
        "device-string-hip",
        "nccl-literal",
        "pin-memory",
    } <= ids
    assert next(r for r in listing if r["id"] == "pin-memory")["default"] is False
    table = cli("rules").stdout
    assert "CR201" in table
    for name in ("CR201", "amp-deprecated-api"):
        text = cli("explain", name).stdout
        assert "amp-deprecated-api (CR201)" in text
        assert "torch.amp.autocast" in text and "References" in text
    assert cli("explain", "nope").returncode == 2


def test_version_and_module_entry_point(cli):
    result = cli("--version")
    assert result.returncode == 0 and cuda2rocm.__version__ in result.stdout


def test_one_lint_writes_several_reports(cli, tmp_path):
    """`--also-write` feeds JSON and SARIF from the run that prints annotations (the Action)."""
    (tmp_path / "a.py").write_text('import torch\n\nx = torch.zeros(2, device="hip")\n')
    done = cli(
        "lint", "--format", "github", "--also-write", f"json={tmp_path / 'r.json'}",
        "--also-write", f"sarif={tmp_path / 'r.sarif'}", str(tmp_path / "a.py"),
    )  # fmt: skip
    assert done.returncode == 1 and done.stdout.startswith("::error file=")
    result = json.loads((tmp_path / "r.json").read_text())
    sarif = json.loads((tmp_path / "r.sarif").read_text())
    assert [d["code"] for d in result["diagnostics"]] == ["CR102"]
    assert [r["ruleId"] for r in sarif["runs"][0]["results"]] == ["CR102"]
    bad = cli("lint", "--also-write", "xml=out.xml", str(tmp_path))
    assert bad.returncode == 2 and "FORMAT=FILE" in bad.stderr
