"""The command-line contract of issue 17, one test (or a few) per numbered problem."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT

from cuda2rocm.catalogue import find_rule, load_catalogue

BAD = 'import torch\nx = torch.zeros(1, device="hip")\n'
WARN = "import torch\nif torch.backends.cudnn.version() >= 8000:\n    pass\n"
#: A fixable info finding (amp-deprecated-api: a deprecation, identical on ROCm).
AMP = "import torch\nwith torch.cuda.amp.autocast():\n    pass\n"
INFO = "import torch\ntorch.backends.cudnn.benchmark = True\n"
#: A finding whose only fix is unsafe (hip-platform-hcc: `__HCC__` -> `__HIP__`).
UNSAFE = "#ifdef __HCC__\nint f() { return 1; }\n#endif\n"


def _found(result) -> list[tuple[str, str]]:
    assert result.returncode in (0, 1), result.stderr
    return sorted(
        (Path(d["path"]).as_posix(), d["rule"]) for d in json.loads(result.stdout)["diagnostics"]
    )


def _no_traceback(result) -> None:
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout


# 1. Notes fail runs -------------------------------------------------------------------------


def test_info_findings_do_not_fail_and_fail_on_sets_the_threshold(cli, write, tmp_path):
    write("info.py", INFO)
    assert cli("lint", str(tmp_path)).returncode == 0
    assert cli("lint", "--fail-on", "info", str(tmp_path)).returncode == 1
    write("cuda2rocm.toml", 'fail-on = "info"\n')
    assert cli("lint", str(tmp_path)).returncode == 1
    assert cli("lint", "--fail-on", "warning", str(tmp_path)).returncode == 0
    write("cuda2rocm.toml", 'fail-on = "error"\n')
    write("warn.py", WARN)
    assert cli("lint", str(tmp_path)).returncode == 0
    assert cli("lint", "--fail-on", "warning", str(tmp_path)).returncode == 1
    write("cuda2rocm.toml", 'fail-on = "fatal"\n')
    bad = cli("lint", str(tmp_path))
    assert bad.returncode == 2 and "'fail-on' must be" in bad.stderr


def test_guarded_findings_never_count(tmp_path, monkeypatch):
    """A finding the context model marks as never compiled on ROCm is not reported or counted."""
    import dataclasses

    from cuda2rocm.engine import Linter
    from cuda2rocm.session import Options, Session, merge

    (tmp_path / "a.py").write_text(BAD)
    original = Linter.lint_source

    def guarded(self, source, rules=None):
        return [dataclasses.replace(d, guarded="test") for d in original(self, source, rules)]

    monkeypatch.setattr(Linter, "lint_source", guarded)
    session = Session([str(tmp_path)], Options(jobs=1))
    parts = session.lint(session.groups())
    assert session.failing(parts) == 0
    result = merge(parts)
    assert not result.diagnostics and len(result.guarded) == 1


# 2. Configuration per file ------------------------------------------------------------------


def test_each_file_uses_its_nearest_configuration_whatever_the_order(cli, write, tmp_path):
    a = write("a.py", BAD)
    b = write("sub/b.py", BAD)
    write("sub/cuda2rocm.toml", 'ignore = ["device-string-hip"]\n')
    one = _found(cli("lint", "--format", "json", "a.py", "sub/b.py", cwd=tmp_path))
    two = _found(cli("lint", "--format", "json", "sub/b.py", "a.py", cwd=tmp_path))
    assert one == two == [("a.py", "device-string-hip")]
    # A directory walk applies sub/'s configuration to sub/ only.
    assert _found(cli("lint", "--format", "json", ".", cwd=tmp_path)) == one
    # --config overrides for every file.
    other = write("strict.toml", "select = []\n")
    both = _found(cli("lint", "--format", "json", "--config", str(other), str(a), str(b)))
    assert [(Path(p).name, r) for p, r in both] == [
        ("a.py", "device-string-hip"),
        ("b.py", "device-string-hip"),
    ]


def test_extend_inherits_and_paths_are_relative_to_the_file_that_sets_them(cli, write, tmp_path):
    write(
        "pyproject.toml",
        "[tool.cuda2rocm]\n"
        'per-file-ignores = { "pkg/tests/**" = ["CR102"] }\n'
        'extend-exclude = ["pkg/vendor/"]\n'
        'fail-on = "error"\n',
    )
    write("pkg/cuda2rocm.toml", 'extend = "../pyproject.toml"\nextend-select = ["CR2"]\n')
    write("pkg/src/a.py", BAD + WARN.split("\n", 1)[1])
    write("pkg/tests/t.py", BAD)
    write("pkg/vendor/v.py", BAD)
    found = _found(cli("lint", "--format", "json", "pkg", cwd=tmp_path))
    assert found == [
        ("pkg/src/a.py", "cudnn-version-gate"),
        ("pkg/src/a.py", "device-string-hip"),
    ]
    # The same from inside pkg/ (another working directory, same answer).
    inside = _found(cli("lint", "--format", "json", ".", cwd=tmp_path / "pkg"))
    assert inside == [("src/a.py", "cudnn-version-gate"), ("src/a.py", "device-string-hip")]
    shown = cli("lint", "--show-settings", "pkg/src/a.py", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert f"configuration: {tmp_path / 'pkg' / 'cuda2rocm.toml'}" in shown.stdout
    assert f"fail-on = 'error'  # {tmp_path / 'pyproject.toml'}" in shown.stdout
    assert f"exclude (relative to {tmp_path}): ['pkg/vendor/']" in shown.stdout
    files = cli("lint", "--show-files", ".", cwd=tmp_path)
    assert sorted(files.stdout.split()) == [
        "pkg/src/a.py",
        "pkg/tests/t.py",
        "pyproject.toml",
    ]
    write("pkg/cuda2rocm.toml", 'extend = "missing.toml"\n')
    broken = cli("lint", "pkg", cwd=tmp_path)
    assert broken.returncode == 2 and "missing.toml" in broken.stderr
    _no_traceback(broken)


# 3. Baselines from any working directory ----------------------------------------------------


def test_baseline_matches_from_another_working_directory(cli, write, tmp_path):
    write("project/a.py", BAD + WARN.split("\n", 1)[1])
    project = tmp_path / "project"
    assert cli("lint", "--write-baseline", "base.json", ".", cwd=project).returncode == 0
    entries = json.loads((project / "base.json").read_text())["entries"]
    assert {e["path"] for e in entries} == {"a.py"}
    result = cli("lint", "--baseline", "project/base.json", "project", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 findings hidden" in result.stderr and "no longer match" not in result.stderr
    write("project/pyproject.toml", '[tool.cuda2rocm]\nbaseline = "base.json"\n')
    assert cli("lint", "project/a.py", cwd=tmp_path).returncode == 0


def test_version_1_baselines_are_read_relative_to_where_they_were_written(cli, write, tmp_path):
    write("project/a.py", BAD)
    old = {
        "version": 1,
        "tool": "cuda2rocm",
        "entries": [],
    }
    project = tmp_path / "project"
    assert cli("lint", "--write-baseline", "base.json", ".", cwd=project).returncode == 0
    entries = json.loads((project / "base.json").read_text())["entries"]
    old["entries"] = entries
    (project / "old.json").write_text(json.dumps(old))
    assert cli("lint", "--baseline", "old.json", ".", cwd=project).returncode == 0


# 4. No tracebacks ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "option",
    [["-o", "missing/dir/out.json"], ["--write-baseline", "missing/dir/base.json"]],
)
def test_unwritable_outputs_exit_2_without_a_traceback(cli, write, tmp_path, option):
    write("a.py", BAD)
    for extra in ([], ["--exit-zero"]):
        result = cli("lint", "--format", "json", *option, *extra, ".", cwd=tmp_path)
        assert result.returncode == 2, result.stderr
        assert "missing/dir" in result.stderr
        _no_traceback(result)


# 5. fix tells the truth ---------------------------------------------------------------------


def test_fix_of_a_missing_path_exits_2(cli, write, tmp_path):
    write("src/a.py", BAD)
    result = cli("fix", "srcc/", cwd=tmp_path)
    assert result.returncode == 2
    assert "srcc/: no such file or directory" in result.stderr


def test_fix_counts_what_remains_and_exits_on_it(cli, write, tmp_path):
    write("a.py", BAD + "import pynvml\n")
    write("k.cu", UNSAFE)
    result = cli("fix", ".", cwd=tmp_path)
    left = _found(cli("lint", "--format", "json", ".", cwd=tmp_path))
    assert ("a.py", "device-string-hip") not in left
    assert f"{len(left)} findings remain" in result.stdout
    assert "1 more fixes available with `--unsafe-fixes`." in result.stdout
    assert result.returncode == 1
    assert cli("fix", "--exit-zero", ".", cwd=tmp_path).returncode == 0


def test_lint_fix_show_fixes_and_unsafe_fixes(cli, write, tmp_path):
    path = write("a.py", BAD + WARN.split("\n", 1)[1])
    write("k.cu", UNSAFE)
    result = cli("lint", "--fix", "--show-fixes", "--format", "concise", ".", cwd=tmp_path)
    assert "Fixed 2 findings in 1 files." in result.stdout
    assert "- a.py:" in result.stdout and "1 × CR102 (device-string-hip)" in result.stdout
    assert "1 more fixes available with `--unsafe-fixes`." in result.stderr
    assert result.returncode == 1  # the unsafe fix's warning remains
    assert 'device="cuda"' in path.read_text()
    write("cuda2rocm.toml", "unsafe-fixes = true\n")
    assert cli("lint", "--fix", "--no-unsafe-fixes", ".", cwd=tmp_path).returncode == 1
    assert "__HIP__" not in (tmp_path / "k.cu").read_text()
    assert cli("lint", "--fix", ".", cwd=tmp_path).returncode == 0
    assert "__HIP__" in (tmp_path / "k.cu").read_text()


def test_unsafe_alias_still_works(cli, write, tmp_path):
    write("k.cu", UNSAFE)
    assert cli("fix", "--unsafe", ".", cwd=tmp_path).returncode == 0
    assert "__HIP__" in (tmp_path / "k.cu").read_text()


# 6. One selection grammar -------------------------------------------------------------------


def test_selection_errors_name_their_source_and_suggest(cli, write, tmp_path):
    write("pyproject.toml", '[tool.cuda2rocm]\nextend-select = ["pin-memory"]\n')
    write("a.py", BAD)
    cli_typo = cli("lint", "--select", "device-string-hp", ".", cwd=tmp_path)
    assert cli_typo.returncode == 2
    assert "command line: unknown rule or prefix 'device-string-hp'" in cli_typo.stderr
    assert "did you mean 'device-string-hip'" in cli_typo.stderr
    assert "pyproject.toml" not in cli_typo.stderr
    write("pyproject.toml", '[tool.cuda2rocm]\nignore = ["amp-deprecated-apy"]\n')
    file_typo = cli("lint", ".", cwd=tmp_path)
    assert file_typo.returncode == 2
    assert f"{tmp_path / 'pyproject.toml'}: unknown rule" in file_typo.stderr
    assert "did you mean 'amp-deprecated-api'" in file_typo.stderr
    explain = cli("explain", "warp-size32")
    assert explain.returncode == 2 and "did you mean 'warp-size-32'" in explain.stderr


def test_cli_select_replaces_the_configurations_extend_select(cli, write, tmp_path):
    write("pyproject.toml", '[tool.cuda2rocm]\nextend-select = ["pin-memory"]\n')
    write("a.py", BAD + "from torch.utils.data import DataLoader\nDataLoader(d, pin_memory=True)\n")
    assert ("a.py", "pin-memory") in _found(cli("lint", "--format", "json", ".", cwd=tmp_path))
    assert _found(cli("lint", "--format", "json", "--select", "CR1", ".", cwd=tmp_path)) == [
        ("a.py", "device-string-hip")
    ]


def test_fix_rule_takes_prefixes(cli, write, tmp_path):
    path = write("a.py", BAD + AMP.split("\n", 1)[1])
    result = cli("fix", "--rule", "CR1", ".", cwd=tmp_path)
    assert "Fixed 1 findings" in result.stdout, result.stderr
    text = path.read_text()
    assert 'device="cuda"' in text and "torch.cuda.amp.autocast()" in text
    typo = cli("fix", "--rule", "CR9", ".", cwd=tmp_path)
    assert typo.returncode == 2 and "--rule: unknown rule or prefix 'CR9'" in typo.stderr


# 7. rules and explain when piped ------------------------------------------------------------


def test_rules_piped_is_one_line_per_rule_never_wrapped(cli):
    out = cli("rules").stdout
    lines = out.splitlines()
    catalogue = [r for r in load_catalogue() if r.step != 0]
    assert len(lines) == len(catalogue)
    assert all(line == line.rstrip() for line in lines)
    hit = [line for line in lines if "warp-mask-32bit" in line]
    assert len(hit) == 1 and hit[0].startswith(find_rule("warp-mask-32bit").code)
    opt_in = next(line for line in lines if " cuda-means-nvidia " in line)
    assert "opt-in" in opt_in and "(opt-in)" not in out
    assert len(json.loads(cli("rules", "--format", "json").stdout)) == len(catalogue)


def test_explain_piped_keeps_code_and_urls(cli):
    spec = find_rule("warp-size-32")
    out = cli("explain", spec.id).stdout
    assert all(line == line.rstrip() for line in out.splitlines())
    for reference in spec.references:
        assert reference.url in out
    for line in spec.invalid[0].code.strip("\n").splitlines():
        assert line.rstrip() in out.splitlines()
    document = json.loads(cli("explain", "--format", "json", spec.code).stdout)
    assert document["id"] == spec.id and document["references"][0]["url"].startswith("http")
    opt_in = cli("explain", "pin-memory").stdout
    assert "--extend-select pin-memory" in opt_in


# 8. Nothing linted, statistics and notices in every format ----------------------------------


def test_missing_path_empty_folder_and_only_skipped_files_exit_2(cli, write, tmp_path):
    missing = cli("lint", "nothere", cwd=tmp_path)
    assert missing.returncode == 2 and "nothere: no such file or directory" in missing.stderr
    assert "All clear" not in missing.stdout
    (tmp_path / "empty").mkdir()
    empty = cli("lint", "empty", cwd=tmp_path)
    assert empty.returncode == 2 and "no file to lint under empty" in empty.stderr
    write("skipped/blob.py", b"import torch\x00\x00")
    skipped = cli("lint", "skipped", cwd=tmp_path)
    assert skipped.returncode == 2 and "skipped: binary file" in skipped.stdout
    assert "no file to lint under skipped" in skipped.stderr
    # A file named explicitly is the caller's choice (pre-commit passes every changed file).
    write("notes.txt", "hello\n")
    assert cli("lint", "notes.txt", cwd=tmp_path).returncode == 0


@pytest.mark.parametrize("fmt", ["json", "github", "concise", "text"])
def test_statistics_in_every_format(cli, write, tmp_path, fmt):
    write("a.py", BAD + 'y = torch.device("rocm")\n')
    result = cli("lint", "--statistics", "--format", fmt, ".", cwd=tmp_path)
    assert result.returncode == 1
    if fmt == "json":
        assert json.loads(result.stdout)[0] | {} == {
            "code": "CR102",
            "name": "device-string-hip",
            "count": 2,
            "fixable": True,
            "fixable_safe": 2,
            "fixable_unsafe": 0,
            "step": 1,
            "step_name": "device",
        }
    else:
        assert "device-string-hip" in result.stdout and "2" in result.stdout
        assert "::error" not in result.stdout
    sarif = cli("lint", "--statistics", "--format", "sarif", ".", cwd=tmp_path)
    assert sarif.returncode == 2 and "--format json" in sarif.stderr


@pytest.mark.parametrize("fmt", ["text", "concise", "json", "github", "sarif"])
def test_every_format_shows_notices(cli, write, tmp_path, fmt):
    write("a.py", BAD)
    write("blob.py", b"import torch\x00")
    result = cli("lint", "--format", fmt, ".", cwd=tmp_path)
    assert result.returncode == 1
    both = result.stdout + result.stderr
    assert "blob.py" in both and "binary file" in both
    if fmt == "github":
        assert "::notice file=blob.py" in result.stdout
    if fmt == "sarif":
        run = json.loads(result.stdout)["runs"][0]
        notes = run["invocations"][0]["toolExecutionNotifications"]
        assert "binary" in notes[0]["message"]["text"]


# 9. Smaller ones ----------------------------------------------------------------------------


def test_concise_marks_only_safe_fixes_and_closes_with_a_count(cli, write, tmp_path):
    write("a.py", BAD)
    write("k.cu", UNSAFE)
    lines = cli("lint", "--format", "concise", ".", cwd=tmp_path).stdout.splitlines()
    unsafe = next(line for line in lines if line.startswith("k.cu:"))
    safe = next(line for line in lines if line.startswith("a.py:"))
    assert "[*]" not in unsafe and "CR102 [*]" in safe
    assert lines[-2:] == [
        "Found 2 findings in 2 files: 2 errors, 0 warnings, 0 info.",
        "[*] 1 fixable with `cuda2rocm lint --fix` (1 more fixes available with `--unsafe-fixes`).",
    ]


# stdin and --watch --------------------------------------------------------------------------


def test_stdin_with_a_filename(cli, write, tmp_path):
    write("sub/cuda2rocm.toml", 'ignore = ["CR105"]\n')
    result = cli(
        "lint", "-", "--stdin-filename", "sub/x.py", "--format", "concise",
        cwd=tmp_path, input=BAD + WARN.split("\n", 1)[1],
    )  # fmt: skip
    assert result.returncode == 1
    assert result.stdout.startswith("sub/x.py:2:27: CR102")
    assert "CR105" not in result.stdout  # sub/'s configuration applies
    fixed = cli("lint", "-", "--fix", "--stdin-filename", "x.py", cwd=tmp_path, input=BAD)
    assert fixed.stdout == BAD.replace('"hip"', '"cuda"') and fixed.returncode == 0


def test_watch_lints_again_after_a_change(write, tmp_path):
    path = write("a.py", BAD)
    env = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1")
    command = [sys.executable, "-m", "cuda2rocm", "lint", "--watch", "--format", "concise"]
    command += ["--watch-runs", "2", "--watch-interval", "0.1", "--no-cache", "."]
    proc = subprocess.Popen(
        command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        first = proc.stderr.readline()
        assert "[watch] lint finished (exit 1)" in first
        time.sleep(0.05)
        path.write_text(BAD.replace('"hip"', '"cuda"') + "\n")
        os.utime(path, ns=(time.time_ns() + 10**9, time.time_ns() + 10**9))
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    assert "[watch] lint finished (exit 0)" in err
    assert "CR102" in out and "All clear" in out


# README snippets are copyable --------------------------------------------------------------


def _yaml_blocks() -> list:
    import re

    yaml = pytest.importorskip("yaml")
    pages = [ROOT / "README.md", ROOT / "docs" / "integrations.md"]
    text = "\n".join(p.read_text() for p in pages)
    return [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", text, re.S)]


def test_readme_ci_snippets_match_the_hooks_and_the_action():
    yaml = pytest.importorskip("yaml")
    blocks = _yaml_blocks()
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    configs = [b for b in blocks if isinstance(b, dict) and "repos" in b]
    assert configs, "the README shows a .pre-commit-config.yaml"
    for config in configs:
        for repo in config["repos"]:
            for hook in repo["hooks"]:
                if repo["repo"] == "local":
                    assert hook["entry"] == hooks[hook["id"]]["entry"]
                    assert hook["types_or"] == hooks[hook["id"]]["types_or"]
                else:
                    assert hook["id"] in hooks
    workflows = [b for b in blocks if isinstance(b, dict) and "jobs" in b]
    assert workflows, "the README shows a workflow"
    for workflow in workflows:
        for job in workflow["jobs"].values():
            for step in job["steps"]:
                if "cuda2rocm" in step.get("uses", ""):
                    assert set(step.get("with", {})) <= set(action["inputs"])


def test_fixing_that_leaves_new_errors_says_so(capsys):
    from cuda2rocm.cli import _newly_reachable
    from cuda2rocm.engine import LintResult
    from cuda2rocm.model import Diagnostic, Position, Severity

    def finding(line: int, severity: Severity = Severity.ERROR) -> Diagnostic:
        return Diagnostic(
            "a.cu", "warp-size-32", "CR404", severity, 4, Position(line, 1, line, 2), "m"
        )

    before = LintResult(diagnostics=[finding(1)])
    _newly_reachable(before, LintResult(diagnostics=[finding(3)]))
    assert capsys.readouterr().err == ""
    _newly_reachable(
        before, LintResult(diagnostics=[finding(3), finding(9), finding(4, Severity.INFO)])
    )
    err = capsys.readouterr().err
    assert "a.cu: the fixes left 1 new warp-size-32 error(s)" in err


def test_per_file_ignores_selectors_are_checked(cli, write, tmp_path):
    write(
        "pyproject.toml", '[tool.cuda2rocm]\nper-file-ignores = { "t/**" = ["device-strng-hip"] }\n'
    )
    write("a.py", BAD)
    result = cli("lint", ".", cwd=tmp_path)
    assert result.returncode == 2
    assert "per-file-ignores: unknown rule or prefix 'device-strng-hip'" in result.stderr
    assert "did you mean 'device-string-hip'" in result.stderr


# 10 (HTML report) ---------------------------------------------------------------------------


def test_html_report_wording_order_and_markdown():
    from cuda2rocm.engine import LintResult
    from cuda2rocm.model import Diagnostic, Edit, Fix, Position, Safety, Severity
    from cuda2rocm.report import html

    def finding(line: int, severity: Severity, rule: str, message: str, fix=None) -> Diagnostic:
        spec = find_rule(rule)
        return Diagnostic(
            "a.py",
            spec.id,
            spec.code,
            severity,
            spec.step,
            Position(line, 1, line, 2),
            message,
            fix,
        )

    safe = Fix(Safety.SAFE, (Edit(0, 1, "x", "h"),), "use `cuda`")
    result = LintResult(
        diagnostics=[
            finding(1, Severity.INFO, "cudnn-benchmark", "see `cudnn.benchmark`"),
            finding(5, Severity.ERROR, "device-string-hip", "use `cuda`", safe),
        ],
        files=1,
    )
    page = html.render(result)
    assert "Actions fixable automatically" in page and "Fixed automatically" not in page
    assert "fixed by" not in page
    assert '<p class="msg">see <code>cudnn.benchmark</code></p>' in page
    assert page.index("a.py:5:1") < page.index("a.py:1:1")  # errors first within a file
    assert 'data-step="2"' not in page and 'data-step="1"' in page  # empty steps not drawn
