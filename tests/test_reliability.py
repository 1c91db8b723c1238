"""Never crash, never lose a line, never run the code it reads."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import ROOT

from cuda2rocm.catalogue import load_catalogue, select_rules
from cuda2rocm.discover import Found
from cuda2rocm.engine import Linter

BAD = 'import torch\nx = torch.zeros(1, device="hip")\n'
FIXED = 'import torch\nx = torch.zeros(1, device="cuda")\n'


def _lint_json(cli, path: Path, *args: str) -> tuple[int, dict]:
    result = cli("lint", "--no-cache", "--format", "json", *args, str(path))
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, json.loads(result.stdout)


def test_a_tree_of_odd_inputs_is_linted_to_the_end(cli, write, tmp_path):
    write("py2.py", 'import torch\nprint "cuda", torch.version.cuda\n')
    write(
        "latin1_undeclared.py",
        "import torch\n# Gr\xfc\xdfe\nd = torch.device('hip')\n".encode("latin-1"),
    )
    write(
        "latin1_declared.py",
        "# coding: latin-1\nimport torch\n# \xe9\nd = torch.device('hip')\n".encode("latin-1"),
    )
    write("bom.py", b"\xef\xbb\xbf" + BAD.encode())
    write("crlf.py", BAD.replace("\n", "\r\n"))
    write("mixed.py", "import torch\r\nx = 1\ny = torch.device('hip')\r\n")
    write("nul.py", b"import torch\x00torch.version.cuda")
    write("empty.py", "")
    write("only_newlines.py", "\n\n\n")
    write("deep.py", "import torch\nx = " + "(" * 5000 + "torch.version.cuda" + ")" * 5000 + "\n")
    write("dir with space/ünï cödé.py", BAD)
    write("we\nird.py", BAD)
    (tmp_path / "looks_like.py").mkdir()
    write("looks_like.py/inner.py", BAD)
    write("kernel.cu", '__global__ void k( { asm("mov.u32 %0, %%laneid;" : "=r"(x)); \n')
    write("Dockerfile", "FROM nvidia/cuda:12.1.0-base\x00\n")
    os.symlink(tmp_path, tmp_path / "loop")
    os.symlink("/etc/passwd", tmp_path / "outside.py")
    os.symlink(tmp_path / "missing.py", tmp_path / "dangling.py")
    code, document = _lint_json(cli, tmp_path)
    assert code == 1
    found: dict[str, list[str]] = {}
    for d in document["diagnostics"]:
        found.setdefault(Path(d["path"]).name, []).append(d["rule"])
    assert not any("internal-error" in rules for rules in found.values()), found
    assert found["py2.py"] == ["parse-error"]
    assert found["latin1_undeclared.py"] == ["read-error"]
    assert found["latin1_declared.py"] == ["device-string-hip"]
    for name in ("bom.py", "crlf.py", "mixed.py", "ünï cödé.py", "we\nird.py", "inner.py"):
        assert found[name] == ["device-string-hip"], name
    assert found["deep.py"] == ["parse-error"]
    assert found["kernel.cu"] == ["inline-ptx"]
    # C++ parse recovery is a notice (the file was still scanned), not a finding.
    notices = {Path(n["path"]).name: n["message"] for n in document["notices"]}
    assert "syntax not understood" in notices["kernel.cu"]
    assert "empty.py" not in found and "outside.py" not in found and "dangling.py" not in found
    notices = {Path(n["path"]).name: n["message"] for n in document["notices"]}
    assert "binary" in notices["nul.py"] and "binary" in notices["Dockerfile"]
    read_error = next(d for d in document["diagnostics"] if d["rule"] == "read-error")
    assert "not valid utf-8" in read_error["message"] and "declare" in read_error["message"]


def test_huge_files_are_skipped_with_the_configured_limit(cli, write, tmp_path):
    write("pyproject.toml", "[tool.cuda2rocm]\nmax-file-size = 1000\n")
    write("big.py", BAD + "#" * 2000 + "\n")
    write("small.py", BAD)
    _, document = _lint_json(cli, tmp_path)
    assert [Path(d["path"]).name for d in document["diagnostics"]] == ["small.py"]
    assert "larger than 1000 bytes" in document["notices"][0]["message"]


def test_a_file_deleted_between_discovery_and_reading(tmp_path):
    linter = Linter(select_rules(load_catalogue()))
    gone = Found(tmp_path / "gone.py", "gone.py", "python")
    diagnostics, notice = linter.lint_file(gone)
    assert [d.rule for d in diagnostics] == ["read-error"] and notice is None
    assert "No such file" in diagnostics[0].message


def test_an_unreadable_directory_is_reported_and_the_rest_linted(cli, write, tmp_path, monkeypatch):
    from cuda2rocm import runner
    from cuda2rocm.discover import discover

    write("ok/a.py", BAD)
    write("locked/b.py", BAD)
    real_scandir = os.scandir

    def scandir(path="."):
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    problems = []
    assert [f.display for f in discover([tmp_path], problems=problems)][-1].endswith("a.py")
    result = runner.run(Linter(select_rules(load_catalogue())), [tmp_path])
    rules = sorted((Path(d.path).name, d.rule) for d in result.diagnostics)
    assert rules == [("a.py", "device-string-hip"), ("locked", "read-error")]


def test_a_crashing_rule_is_one_diagnostic_and_hides_nothing(monkeypatch, tmp_path):
    from cuda2rocm.checks import device_string_hip

    def visit_SimpleString(self, node):  # LibCST registers visitors by name
        raise ZeroDivisionError("synthetic failure")

    monkeypatch.setattr(device_string_hip.Rule, "visit_SimpleString", visit_SimpleString)
    (tmp_path / "a.py").write_text(BAD + "with torch.cuda.amp.autocast():\n    pass\n")
    result = Linter(select_rules(load_catalogue())).lint_paths([tmp_path])
    rules = sorted(d.rule for d in result.diagnostics)
    assert rules == ["amp-deprecated-api", "internal-error"]
    message = next(d.message for d in result.diagnostics if d.rule == "internal-error")
    assert "rule device-string-hip" in message and "ZeroDivisionError" in message
    assert "please report it" in message


def test_setup_py_and_conftest_are_parsed_never_run(cli, tmp_path):
    marker = tmp_path / "EXECUTED"
    payload = f"open({str(marker)!r}, 'w').write('ran')\n"
    for name in ("setup.py", "conftest.py", "noxfile.py"):
        (tmp_path / name).write_text(
            payload + "from torch.utils.cpp_extension import CUDA_HOME\n"
            "import torch\nx = torch.device('hip')\n"
        )
    assert cli("lint", "--no-cache", str(tmp_path)).returncode == 1
    assert cli("fix", "--unsafe", str(tmp_path)).returncode == 0
    assert cli("report", "-o", str(tmp_path / "r.html"), str(tmp_path)).returncode == 0
    assert not marker.exists()


def test_fix_never_writes_outside_the_given_paths(cli, write, tmp_path):
    inside = write("inside/a.py", BAD)
    outside = write("outside/b.py", BAD)
    os.symlink(outside, tmp_path / "inside" / "link.py")
    assert cli("fix", str(tmp_path / "inside")).returncode == 0
    assert inside.read_text() == FIXED and outside.read_text() == BAD


def test_sigkill_mid_fix_leaves_every_file_original_or_fully_fixed(tmp_path):
    """Kill `fix` at random moments, many times: no file is ever half-written."""
    rng = random.Random(11)
    tree = tmp_path / "tree"
    originals = {}
    for i in range(150):
        path = tree / f"pkg{i % 6}" / f"m{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        body = "\n".join(f"v{j} = {j}" for j in range(rng.randint(50, 400)))
        text = f"import torch\n{body}\nd = torch.device('hip:{i % 4}')\n"
        path.write_text(text)
        originals[path] = text
    expected = {p: t.replace("'hip:", "'cuda:") for p, t in originals.items()}
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    kills = 0
    for _ in range(10):
        for path, text in originals.items():  # every round starts with work to do
            path.write_text(text)
        proc = subprocess.Popen(
            [sys.executable, "-m", "cuda2rocm", "fix", "--no-cache", str(tree)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        # Kill while files are being written, whatever the machine's speed: once the first
        # file has changed, after a random few milliseconds.
        while proc.poll() is None and all(p.read_text() == t for p, t in originals.items()):
            time.sleep(0.002)
        time.sleep(rng.uniform(0, 0.02))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        assert proc.wait() in (0, -signal.SIGKILL)
        for path in originals:
            assert path.read_text() in (originals[path], expected[path]), path
    # No worker outlives its killed parent (it would wait on its queue forever).
    deadline = time.monotonic() + 10
    while _orphans(tree) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not _orphans(tree)
    subprocess.run(
        [sys.executable, "-m", "cuda2rocm", "fix", str(tree)], check=True, capture_output=True
    )
    assert all(path.read_text() == expected[path] for path in originals)
    assert kills >= 5, "fix finished before the kills: make the tree larger"


def _orphans(tree: Path) -> list[str]:
    """Processes still running `cuda2rocm fix` on `tree`."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if "cuda2rocm" in cmdline and " fix " in cmdline and str(tree) in cmdline:
            found.append(cmdline)
    return found


def test_smoke_run_over_a_large_varied_tree(cli, tmp_path):
    """Thousands of files in every language the tool reads: no internal error, a clean exit."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from generate import generate
    finally:
        sys.path.pop(0)
    tree = tmp_path / "big"
    generate(tree, seed=3, python_files=1500, cpp_files=200)
    rng = random.Random(5)
    for i in range(100):
        folder = tree / "deploy" / f"svc{i}"
        folder.mkdir(parents=True)
        (folder / "Dockerfile").write_text(
            f"FROM nvidia/cuda:12.{i % 4}.0-devel-ubuntu22.04\nENV TORCH_CUDA_ARCH_LIST=8.0\n"
            "RUN pip install torch==2.3.1+cu121 pynvml\n"
        )
        (folder / "run.sh").write_text(
            f"#!/bin/sh\nnvidia-smi\nCUDA_VISIBLE_DEVICES={i % 8} python train.py\n"
        )
        (folder / "requirements.txt").write_text("torch==2.3.1+cu121\nflash-attn\nnumpy\n")
        (folder / "CMakeLists.txt").write_text(
            "project(x LANGUAGES CXX CUDA)\nset(CMAKE_CUDA_ARCHITECTURES 80)\n"
        )
        (folder / "odd.py").write_bytes(bytes(rng.randrange(256) for _ in range(200)))
    result = cli("lint", "--no-cache", "--format", "json", str(tree))
    assert result.returncode == 1, result.stderr[-2000:]
    document = json.loads(result.stdout)
    assert document["summary"]["files"] >= 2000
    assert not [d for d in document["diagnostics"] if d["rule"] == "internal-error"]
