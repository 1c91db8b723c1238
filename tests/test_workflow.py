"""Fitting into workflows: configuration, suppressions, baselines, SARIF, GitHub annotations."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from conftest import EXAMPLES, ROOT

BAD = 'import torch\nx = torch.zeros(1, device="hip")\n'
SARIF_SCHEMA = ROOT.parent / "shared" / "reference" / "sarif-schema-2.1.0.json"


def _rules(cli, *args):
    result = cli("lint", "--format", "json", *args)
    assert result.returncode in (0, 1), result.stderr
    return sorted(
        (Path(d["path"]).name, d["line"], d["rule"])
        for d in json.loads(result.stdout)["diagnostics"]
    )


# -- configuration ---------------------------------------------------------------------------


def test_config_is_found_by_walking_up(cli, write, tmp_path):
    write("pyproject.toml", '[tool.cuda2rocm]\nignore = ["device-string-hip"]\n')
    write("pkg/deep/a.py", BAD)
    assert cli("lint", str(tmp_path / "pkg" / "deep")).returncode == 0


def test_cuda2rocm_toml_and_explicit_config(cli, write, tmp_path):
    write("cuda2rocm.toml", 'select = ["CR2"]\n')
    write("a.py", BAD)
    assert cli("lint", str(tmp_path)).returncode == 0
    other = write("strict.toml", 'select = ["CR1"]\n')
    assert cli("lint", "--config", str(other), str(tmp_path)).returncode == 1


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[tool.cuda2rocm]\nselekt = ["CR1"]\n', "unknown key 'selekt'"),
        ('[tool.cuda2rocm]\nselect = "CR1"\n', "'select' must be a list of strings"),
        ('[tool.cuda2rocm]\ntarget = "rocm"\n', '\'target\' must be "portable" or "hip"'),
        ('[tool.cuda2rocm]\nunsafe-fixes = "yes"\n', "'unsafe-fixes' must be a boolean"),
        ('[tool.cuda2rocm]\nseverity = { CR101 = "fatal" }\n', "'severity' must be a table"),
        ("[tool.cuda2rocm\n", "invalid TOML"),
    ],
)
def test_config_errors_name_file_key_and_type(cli, write, tmp_path, text, expected):
    write("pyproject.toml", text)
    write("a.py", BAD)
    result = cli("lint", str(tmp_path))
    assert result.returncode == 2
    assert expected in result.stderr
    assert "pyproject.toml" in result.stderr


def test_per_file_ignores_exclude_and_severity(cli, write, tmp_path):
    write(
        "pyproject.toml",
        "[tool.cuda2rocm]\n"
        'per-file-ignores = { "tests/**" = ["CR102"] }\n'
        'extend-exclude = ["vendor/"]\n'
        'severity = { "device-string-hip" = "info" }\n',
    )
    write("src/a.py", BAD)
    write("tests/test_a.py", BAD)
    write("vendor/b.py", BAD)
    document = json.loads(cli("lint", "--format", "json", str(tmp_path)).stdout)
    found = [(Path(d["path"]).as_posix(), d["severity"]) for d in document["diagnostics"]]
    assert len(found) == 1 and found[0][0].endswith("src/a.py") and found[0][1] == "info"


def test_force_exclude_applies_to_explicit_files(cli, write, tmp_path):
    write("pyproject.toml", '[tool.cuda2rocm]\nexclude = ["vendor/"]\n')
    path = write("vendor/b.py", BAD)
    assert cli("lint", str(path), cwd=tmp_path).returncode == 1
    assert cli("lint", "--force-exclude", str(path), cwd=tmp_path).returncode == 0


# -- suppressions ----------------------------------------------------------------------------


def test_inline_suppressions(cli, write, tmp_path):
    write(
        "a.py",
        "import torch\n"
        'a = torch.device("hip")  # cuda2rocm: ignore[device-string-hip]\n'
        "# cuda2rocm: ignore[CR1]\n"
        'b = torch.device("hip")\n'
        'c = torch.device("hip")  # noqa: CR102\n'
        'd = torch.device("hip")  # noqa\n'
        'e = ("# cuda2rocm: ignore[CR102]", torch.device("hip"))\n'
        'f = torch.device("hip")  # cuda2rocm: ignore\n',
    )
    assert _rules(cli, str(tmp_path)) == [
        ("a.py", 6, "device-string-hip"),
        ("a.py", 7, "device-string-hip"),
    ]
    # The directive is case-insensitive, also where it is the file's only one.
    write("b.py", 'import torch\nx = torch.device("hip")  # NOQA: CR102\n')
    assert ("b.py", 2, "device-string-hip") not in _rules(cli, str(tmp_path))


def test_file_level_suppression(cli, write, tmp_path):
    write("a.py", '# cuda2rocm: ignore-file[CR102]\nimport torch\nx = torch.device("hip")\n')
    assert _rules(cli, str(tmp_path)) == []


def test_unknown_and_unused_suppressions(cli, write, tmp_path):
    write(
        "a.py",
        "import torch\n"
        'a = torch.device("hip")  # cuda2rocm: ignore[device-string-hp]\n'
        'b = torch.device("cuda")  # cuda2rocm: ignore[device-string-hip]\n',
    )
    assert _rules(cli, str(tmp_path)) == [
        ("a.py", 2, "device-string-hip"),
        ("a.py", 2, "invalid-suppression"),
    ]
    assert ("a.py", 3, "unused-suppression") in _rules(
        cli, "--extend-select", "unused-suppression", str(tmp_path)
    )


def test_suppressed_findings_are_not_fixed(cli, write, tmp_path):
    text = 'import torch\nx = torch.device("hip")  # cuda2rocm: ignore[CR102]\n'
    path = write("a.py", text)
    cli("fix", str(tmp_path))
    assert path.read_text() == text


# -- baseline --------------------------------------------------------------------------------


def test_baseline_hides_old_findings_and_survives_moves(cli, write, tmp_path):
    src = write("a.py", BAD + 'y = torch.device("rocm")\n')
    baseline = tmp_path / "baseline.json"
    assert cli("lint", "--write-baseline", str(baseline), str(src)).returncode == 0
    assert cli("lint", "--baseline", str(baseline), str(src)).returncode == 0
    # Moving code down a file keeps it matched; a new finding is reported.
    src.write_text("import torch\n\n\n" + BAD.split("\n", 1)[1] + 'z = torch.device("hip:1")\n')
    result = cli("lint", "--format", "json", "--baseline", str(baseline), str(src))
    found = json.loads(result.stdout)["diagnostics"]
    assert [(d["line"], d["rule"]) for d in found] == [(5, "device-string-hip")]
    assert "1 findings hidden, 1 entries no longer match" in result.stderr


def test_baseline_from_config_and_bad_baseline(cli, write, tmp_path):
    write("a.py", BAD)
    assert cli("lint", "--write-baseline", str(tmp_path / "b.json"), str(tmp_path)).returncode == 0
    write("pyproject.toml", '[tool.cuda2rocm]\nbaseline = "b.json"\n')
    assert cli("lint", str(tmp_path)).returncode == 0
    write("b.json", "not json")
    result = cli("lint", str(tmp_path))
    assert result.returncode == 2 and "not a cuda2rocm baseline" in result.stderr


# -- output formats --------------------------------------------------------------------------


@pytest.mark.skipif(not SARIF_SCHEMA.exists(), reason="shared/ reference folder not beside repo")
def test_sarif_over_examples_validates_against_the_official_schema(cli):
    result = cli("lint", "--format", "sarif", str(EXAMPLES))
    assert result.returncode == 1
    document = json.loads(result.stdout)
    jsonschema.validate(document, json.loads(SARIF_SCHEMA.read_text()))
    run = document["runs"][0]
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    assert {"CR101", "CR102", "CR201", "CR301"} <= set(rules)
    assert all(r["helpUri"].startswith("https://") for r in rules.values() if "helpUri" in r)
    assert any("fixes" in r for r in run["results"])
    for r in run["results"]:
        assert run["tool"]["driver"]["rules"][r["ruleIndex"]]["id"] == r["ruleId"]


def test_github_annotations_escape_hostile_paths_and_messages(cli, write, tmp_path):
    name = "we%ird,na:me\nx.py"
    write(name, BAD)
    result = cli("lint", "--format", "github", str(tmp_path), cwd=tmp_path)
    lines = result.stdout.splitlines()
    assert len(lines) == 1
    line = lines[0]
    assert line.startswith("::error file=we%25ird%2Cna%3Ame%0Ax.py,line=2,col=")
    assert ",title=CR102 device-string-hip::" in line
    _head, message = line.split("::", 2)[1:]
    assert "\n" not in message and "::" not in message


def test_outputs_neutralise_control_characters(cli, write, tmp_path):
    name = "evil\x1b[31m\n::error::pwned.py"
    write(name, BAD)
    concise = cli("lint", "--format", "concise", str(tmp_path), cwd=tmp_path).stdout
    assert "\x1b" not in concise and concise.count("\n") == 3  # one finding, two closing lines
    text = cli("lint", str(tmp_path), cwd=tmp_path).stdout
    assert "\x1b" not in text
    assert not any(line.startswith("::") for line in text.splitlines())
    document = json.loads(cli("lint", "--format", "json", str(tmp_path), cwd=tmp_path).stdout)
    assert document["diagnostics"][0]["path"] == name


def test_statistics(cli, write, tmp_path):
    write("a.py", BAD + 'y = torch.device("rocm")\nwith torch.cuda.amp.autocast():\n    pass\n')
    plain = cli("lint", "--statistics", "--format", "concise", str(tmp_path)).stdout.splitlines()
    assert plain == [
        "     2  CR102  [*] device-string-hip",
        "     1  CR201  [*] amp-deprecated-api",
    ]
    table = cli("lint", "--statistics", str(tmp_path)).stdout
    assert "Findings per porting step" in table and "1 device" in table


def test_output_file(cli, write, tmp_path):
    write("a.py", BAD)
    out = tmp_path / "report.json"
    assert cli("lint", "--format", "json", "-o", str(out), str(tmp_path)).returncode == 1
    assert json.loads(out.read_text())["summary"]["diagnostics"] == 1


def test_fix_check_and_exit_non_zero_on_fix(cli, write, tmp_path):
    path = write("a.py", BAD)
    assert cli("fix", "--check", str(tmp_path)).returncode == 1
    assert path.read_text() == BAD
    assert cli("fix", "--exit-non-zero-on-fix", str(tmp_path)).returncode == 1
    assert cli("fix", "--exit-non-zero-on-fix", str(tmp_path)).returncode == 0
    assert cli("fix", "--check", str(tmp_path)).returncode == 0


# -- pre-commit and the GitHub Action ---------------------------------------------------------


def _git(cwd: Path, *args: str) -> None:
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@t",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@t",
    )
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=env)


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="needs this repository's git checkout")
def test_pre_commit_hook_fails_on_bad_file_and_passes_on_clean(tmp_path):
    pytest.importorskip("pre_commit")
    project = tmp_path / "project"
    project.mkdir()
    _git(project, "init", "-q")
    (project / "train.py").write_text(BAD)
    _git(project, "add", ".")
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "cache"))
    command = [
        sys.executable,
        "-m",
        "pre_commit",
        "try-repo",
        str(ROOT),
        "cuda2rocm-lint",
        "--all-files",
    ]
    bad = subprocess.run(command, cwd=project, capture_output=True, text=True, env=env, timeout=900)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "device-string-hip" in bad.stdout
    (project / "train.py").write_text(BAD.replace('"hip"', '"cuda"'))
    # An info-only finding does not fail the hook, and a nested configuration applies to its
    # own folder whatever else is committed with it.
    (project / "bench.py").write_text("import torch\ntorch.backends.cudnn.benchmark = True\n")
    (project / "vendor").mkdir()
    (project / "vendor" / "cuda2rocm.toml").write_text('ignore = ["CR1"]\n')
    (project / "vendor" / "old.py").write_text(BAD)
    _git(project, "add", ".")
    good = subprocess.run(
        command, cwd=project, capture_output=True, text=True, env=env, timeout=900
    )
    assert good.returncode == 0, good.stdout + good.stderr
    (project / "vendor" / "cuda2rocm.toml").write_text('fail-on = "info"\n')
    (project / "vendor" / "bench.py").write_text(
        "import torch\ntorch.backends.cudnn.benchmark = True\n"
    )
    (project / "vendor" / "old.py").write_text(BAD.replace('"hip"', '"cuda"'))
    _git(project, "add", ".")
    strict = subprocess.run(
        command, cwd=project, capture_output=True, text=True, env=env, timeout=900
    )
    assert strict.returncode == 1, strict.stdout + strict.stderr
    assert "vendor/bench.py" in strict.stdout and "cudnn-benchmark" in strict.stdout


def _action_env(tmp_path: Path, workspace: Path, **extra: str) -> dict[str, str]:
    bindir = Path(sys.executable).parent
    env = dict(
        os.environ,
        GITHUB_ACTIONS="true",
        GITHUB_WORKSPACE=str(workspace),
        GITHUB_ACTION_PATH=str(ROOT),
        GITHUB_STEP_SUMMARY=str(tmp_path / "summary.md"),
        GITHUB_OUTPUT=str(tmp_path / "output.txt"),
        RUNNER_TEMP=str(tmp_path),
        CUDA2ROCM_PYTHON=sys.executable,
        CUDA2ROCM_PATHS=".",
        CUDA2ROCM_ARGS="",
        CUDA2ROCM_SARIF="true",
        CUDA2ROCM_SARIF_FILE=str(tmp_path / "out.sarif"),
        CUDA2ROCM_FAIL="true",
        CUDA2ROCM_CACHE_DIR=str(workspace / ".cuda2rocm_cache"),
        PATH=f"{bindir}{os.pathsep}{os.environ['PATH']}",
    )
    return env | extra


def _run_action(workspace: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(ROOT / "action" / "run.sh")],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _outputs(tmp_path: Path) -> dict[str, str]:
    lines = (tmp_path / "output.txt").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines)


def test_action_steps_annotate_with_a_fake_github_environment(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "train.py").write_text(BAD + "with torch.cuda.amp.autocast():\n    pass\n")
    (workspace / "my baseline.json").write_text('{"version": 2, "entries": []}')
    # args is a list, one argument per line: a value with a space stays one argument.
    env = _action_env(
        tmp_path, workspace, CUDA2ROCM_ARGS="--select\nCR1\n--baseline\nmy baseline.json"
    )
    run = _run_action(workspace, env)
    assert run.returncode == 1, run.stderr
    assert run.stdout.strip().splitlines() == [
        "::error file=train.py,line=2,col=27,endLine=2,endColumn=32,"
        'title=CR102 device-string-hip::"hip" is not a usable device on ROCm; ROCm GPUs are the '
        '"cuda" device type, use "cuda"'
    ]
    assert json.loads((tmp_path / "out.sarif").read_text())["version"] == "2.1.0"
    summary = (tmp_path / "summary.md").read_text()
    assert "**1 findings** in 1 files: 1 errors" in summary
    assert "Fixable: **1** safe" in summary
    assert "| CR102 `device-string-hip` | 1 | 1 | 0 |" in summary
    assert _outputs(tmp_path) == {"ran": "true", "exit-code": "1"}
    assert list((workspace / ".cuda2rocm_cache").iterdir())  # kept for actions/cache
    env["CUDA2ROCM_FAIL"] = "false"
    assert _run_action(workspace, env).returncode == 0


def test_action_summary_mentions_the_annotation_limit(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    lines = "".join(f'x{i} = torch.device("hip")\n' for i in range(12))
    (workspace / "train.py").write_text("import torch\n" + lines)
    run = _run_action(workspace, _action_env(tmp_path, workspace, CUDA2ROCM_SARIF="false"))
    assert run.returncode == 1
    assert run.stdout.count("::error ") == 12  # all printed; GitHub shows 10
    summary = (tmp_path / "summary.md").read_text()
    assert "at most 10 annotations of each level per step (error exceeded it)" in summary


def test_action_reports_a_lint_that_cannot_run_and_skips_sarif(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "train.py").write_text(BAD)
    (workspace / "cuda2rocm.toml").write_text('selekt = ["CR1"]\n')
    run = _run_action(workspace, _action_env(tmp_path, workspace))
    assert run.returncode == 2
    assert "unknown key 'selekt'" in run.stderr and "Traceback" not in run.stderr
    assert _outputs(tmp_path) == {"ran": "false", "exit-code": "2"}
    assert not (tmp_path / "out.sarif").exists()
    assert "could not run" in (tmp_path / "summary.md").read_text()


def test_action_yml_wires_cache_upload_guard_and_own_environment():
    yaml = pytest.importorskip("yaml")
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    steps = action["runs"]["steps"]
    uses = [s.get("uses", "") for s in steps]
    assert any(u.startswith("actions/cache@") for u in uses)
    cache = next(s for s in steps if s.get("uses", "").startswith("actions/cache@"))
    assert cache["with"]["path"].endswith(".cuda2rocm_cache")
    upload = next(s for s in steps if "upload-sarif" in s.get("uses", ""))
    assert "steps.lint.outputs.ran == 'true'" in upload["if"]
    assert "head.repo.full_name == github.repository" in upload["if"]
    assert "version" not in action["inputs"]  # no promise of a package-index release
    for used in uses:  # third-party actions pinned by commit, not by a movable tag
        if used:
            assert re.fullmatch(r"[\w./-]+@[0-9a-f]{40}", used), used
    install = next(s for s in steps if s.get("name") == "Install cuda2rocm")
    assert "runner.temp" in install["env"]["CUDA2ROCM_VENV"]


def test_action_install_step_installs_this_checkout_into_its_own_environment(tmp_path):
    """The install step really installs the action's checkout into the action's environment
    (created beforehand with the system packages, so that no build dependency is downloaded)."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    env = dict(
        os.environ, GITHUB_ACTION_PATH=str(ROOT), CUDA2ROCM_VENV=str(venv), CUDA2ROCM_INSTALL=""
    )
    run = subprocess.run(
        ["bash", str(ROOT / "action" / "install.sh")],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "cuda2rocm" in run.stdout
    assert (venv / "bin" / "cuda2rocm").exists()
