"""The report plans the port: per component (blockers, risks, notes, what fix settles, effort
with its basis), the components that stay CUDA-only, the trend against a baseline, and the
fixable share of actions, not of notes. Fixture trees are written here."""

from __future__ import annotations

import re

import pytest
from conftest import run_cli, write_tree
from test_report_html import ARTIFACTS, CHROMIUM, _chromium, _png

from cuda2rocm.model import Diagnostic, Fix, Position, Safety, Severity
from cuda2rocm.report import plan

TREE = {
    "setup.py": "from setuptools import setup\nsetup(name='proj')\n",
    "proj/__init__.py": "",
    "proj/core/__init__.py": "",
    "proj/core/dev.py": 'import torch\n\nd = torch.device("hip")\nv = torch.version.cuda\n',
    # a CMake project with a ROCm branch: ported, not a standalone CUDA-only component
    "kernels/CMakeLists.txt": (
        "project(k LANGUAGES CXX CUDA)\nif(K_USE_HIP)\n  enable_language(HIP)\nendif()\n"
    ),
    "kernels/src/k.cu": (
        "__global__ void k(int *o) {\n"
        '  asm volatile("mov.u32 %0, %laneid;" : "=r"(o[0]));\n'
        "  o[1] = __shfl_down_sync(0xffffffff, o[1], 1);\n"
        "}\n"
    ),
    "tools/run.py": 'import torch\nx = torch.zeros(1, device="rocm")\n',
    "train.py": "import torch\nwith torch.cuda.amp.autocast():\n    pass\n",
}


def _d(path: str, rule: str, severity: Severity, fix: Safety | None = None) -> Diagnostic:
    found = Diagnostic(path, rule, "CR999", severity, 4, Position(1, 1, 1, 2), "m")
    if fix is None:
        return found
    return Diagnostic(path, rule, "CR999", severity, 4, Position(1, 1, 1, 2), "m", fix=Fix(fix, ()))


def test_component_is_the_nearest_own_build_else_the_top_package_else_the_folder(tmp_path):
    write_tree(tmp_path, TREE)
    root = str(tmp_path)
    assert plan.component_of(f"{root}/kernels/src/k.cu", [root]) == ("kernels", "CMake project")
    assert plan.component_of(f"{root}/proj/core/dev.py", [root]) == ("proj", "package")
    assert plan.component_of(f"{root}/tools/run.py", [root]) == ("tools", "folder")
    assert plan.component_of(f"{root}/train.py", [root]) == (".", "top level")
    # Several scanned folders: components keep the findings' own spelling.
    two = [root, f"{root}/tools"]
    assert plan.component_of(f"{root}/kernels/src/k.cu", two) == (
        f"{root}/kernels",
        "CMake project",
    )
    assert plan.component_of(f"{root}/tools/run.py", two) == (f"{root}/tools", "top level")


def test_counts_per_component_and_decisions_left():
    findings = [
        _d("a/x.py", "r1", Severity.ERROR, Safety.SAFE),
        _d("a/x.py", "r2", Severity.ERROR),
        _d("a/x.py", "r2", Severity.ERROR),  # same rule, same file: one decision
        _d("a/y.py", "r2", Severity.WARNING, Safety.UNSAFE),
        _d("a/y.py", "r3", Severity.INFO),  # a note: not an action, no decision
    ]
    (c,) = plan.components(findings)
    assert (c.name, c.kind, c.files) == ("a", "folder", 2)
    assert (c.blockers, c.risks, c.notes, c.actions) == (3, 1, 1, 4)
    assert (c.safe, c.unsafe, c.manual) == (1, 1, 2)
    assert c.decisions == 2 and c.effort == "small"


@pytest.mark.parametrize(("n", "level"), [(0, "none"), (5, "small"), (6, "medium"), (26, "large")])
def test_effort_levels_are_the_stated_ones(n, level):
    assert plan.effort_level(n) == level


def test_fixable_share_counts_actions_not_notes():
    findings = [
        _d("a.py", "r", Severity.INFO, Safety.SAFE),
        _d("a.py", "r", Severity.INFO, Safety.SAFE),
        _d("a.py", "r", Severity.ERROR),
        _d("a.py", "r", Severity.WARNING, Safety.SAFE),
        _d("b.py", "cuda-only-component", Severity.WARNING),
    ]
    assert plan.action_share(findings) == (1, 0, 2)


def test_cuda_only_components_say_why_and_whether_decided():
    findings = [
        _d("hopper/setup.py", "cuda-only-component", Severity.WARNING),
        _d("third/CMakeLists.txt", "cuda-only-component", Severity.INFO),
        _d("a.py", "r", Severity.ERROR),
    ]
    only = plan.cuda_only(findings)
    assert [(o.path, o.decided) for o in only] == [
        ("hopper/setup.py", False),
        ("third/CMakeLists.txt", True),
    ]
    assert all(c.name != "hopper" for c in plan.components(findings))


def _report(root, *args: str) -> str:
    out = root / "r.html"
    done = run_cli("report", *args, ".", "-o", str(out), cwd=root)
    assert done.returncode == 0, done.stderr
    return out.read_text()


def test_report_plans_per_component_with_a_trend(tmp_path):
    root = tmp_path / "p"
    write_tree(root, TREE)
    page = _report(root)
    rows = dict(re.findall(r'<tr data-component="([^"]+)">(.*?)</tr>', page))
    assert set(rows) == {"kernels", "proj", "tools", "."}
    assert 'data-effort="' in rows["kernels"] and "CMake project" in rows["kernels"]
    assert "No baseline" in page and "Components that stay CUDA-only" in page
    base = tmp_path / "base.json"
    assert run_cli("lint", "--write-baseline", str(base), ".", cwd=root).returncode == 0
    (root / "tools" / "run.py").write_text("import torch\n")  # fixed since
    (root / "new.py").write_text('import torch\nd = torch.device("hip")\n')  # new since
    page = _report(root, "--baseline", str(base))
    trend = dict(re.findall(r'data-trend="(\w+)">(\d+)<', page))
    assert trend["resolved"] == "1" and trend["new"] == "1"
    assert int(trend["recorded"]) == int(trend["still"]) + 1


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium (CI installs it)")
@pytest.mark.parametrize(("name", "width"), [("desktop", 1280), ("phone", 390)])
def test_plan_renders_at_desktop_and_phone_width(tmp_path, name, width):
    root = tmp_path / "p"
    write_tree(root, TREE)
    ARTIFACTS.mkdir(exist_ok=True)
    report = ARTIFACTS / "report-plan.html"
    report.write_text(_report(root), encoding="utf-8")
    shot = ARTIFACTS / f"report-plan-{name}.png"
    shot.unlink(missing_ok=True)
    run = _chromium(
        tmp_path / "profile", f"--screenshot={shot}", f"--window-size={width},1800",
        report.resolve().as_uri(),
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    w, h, pixels = _png(shot.read_bytes(), rows=300)
    assert (w, h) == (width, 1800) and len(pixels) > 20
