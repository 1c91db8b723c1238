"""Test code the project skips on ROCm, and flags named for ROCm (context.python_paths).

Lines marked `# dead` must be guarded (ROCm never runs them), `# live` must stay reported.
Shapes: skip markers (pytest's and unittest's, stacked, on classes, bound to names in this
module or another), `pytestmark` on a module or class, calls that never return
(`pytest.skip`, `self.skipTest`, `sys.exit` ...), vendor flags read by their name, and a
module-level kernel string read only by skipped tests.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from click.testing import CliRunner
from conftest import check_marked_lines

from cuda2rocm.cli import main
from cuda2rocm.context.python_paths import VENDOR_FLAG, Paths, ProjectIndex

F8 = "torch.ones(2).to(torch.float8_e4m3fn)"


def _paths(tmp_path: Path, code: str, name: str = "test_ops.py", **others: str) -> Paths:
    """The paths of `code` as one file of a run (with `others`), the project index built."""
    path = tmp_path / name
    path.write_text(code)
    files = [path]
    for other, text in others.items():
        (tmp_path / other).write_text(text)
        files.append(tmp_path / other)
    index = ProjectIndex.build([(p, p.read_bytes()) for p in files])
    return Paths(code, path, index)


def _check(tmp_path: Path, code: str, **others: str) -> Paths:
    code = textwrap.dedent(code).replace("F8", F8)
    paths = _paths(tmp_path, code, **others)
    check_marked_lines(code, paths)
    return paths


def _reason(paths: Paths, code: str, needle: str) -> str:
    code, needle = textwrap.dedent(code).replace("F8", F8), needle.replace("F8", F8)
    line = next(i for i, t in enumerate(code.splitlines(), 1) if needle in t)
    text = code.splitlines()[line - 1]
    return paths.reason(line, len(text) - len(text.lstrip()) + 1)


# -- 1. skip markers -------------------------------------------------------------------------
MARKERS = """\
import unittest

import pytest
import torch

IS_ROCM = torch.version.hip is not None
cuda_kernels = pytest.mark.skipif(IS_ROCM, reason="CUDA kernels")


@pytest.mark.skipif(torch.cuda.device_count() < 2, IS_ROCM, reason="two NVIDIA GPUs")
def test_any_condition():
    F8  # dead


@pytest.mark.skipif(condition=IS_ROCM, reason="CUDA only")
def test_condition_keyword():
    F8  # dead


@pytest.mark.skipif("torch.version.hip is not None", reason="CUDA only")
def test_condition_string():
    F8  # dead


@pytest.mark.xfail(IS_ROCM, reason="no ROCm kernel", run=False)
def test_xfail_not_run():
    F8  # dead


@pytest.mark.xfail(IS_ROCM, reason="no ROCm kernel")
def test_xfail_still_runs():
    F8  # live


@pytest.mark.parametrize("n", [1, 2])
@pytest.mark.slow
@cuda_kernels
def test_stacked(n):
    F8  # dead


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="two GPUs")
def test_not_a_vendor_condition():
    F8  # live


@pytest.mark.skipif(not IS_ROCM, reason="ROCm only")
def test_skipped_on_cuda():
    F8  # live


@unittest.skipUnless(IS_ROCM, "ROCm only")
class RocmOnly(unittest.TestCase):
    def test_a(self):
        F8  # live


@unittest.skipUnless(torch.version.cuda is not None, "CUDA only")
class CudaOnly(unittest.TestCase):
    LIMITS = (1, 2)  # dead
    TABLE = F8  # live
    def test_a(self):
        F8  # dead
"""


def test_skip_markers_in_their_pytest_and_unittest_shapes(tmp_path):
    paths = _check(tmp_path, MARKERS)
    why = _reason(paths, MARKERS, "F8  # dead")
    assert "skipped by `@pytest.mark.skipif(torch.cuda.device_count() < 2, IS_ROCM" in why
    assert "true on ROCm" in why


def test_a_marker_bound_in_another_module(tmp_path):
    markers = (
        "import pytest\nimport torch\n"
        "needs_cuda = pytest.mark.skipif(torch.version.hip is not None, reason='CUDA')\n"
    )
    (tmp_path / "__init__.py").write_text("")
    code = """\
        from .marks import needs_cuda

        @needs_cuda
        def test_kernel():
            F8  # dead
    """
    paths = _check(tmp_path, code, **{"marks.py": markers})
    assert "`@needs_cuda` (line 3) = `pytest.mark.skipif(" in _reason(paths, code, "# dead")


# -- 2. pytestmark ---------------------------------------------------------------------------
MODULE_MARK = """\
import pytest
import torch
from quasar.jit import compile_source

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(torch.version.hip is not None, reason="x")]

SIZES = [n * 2 for n in range(4)]  # live
TABLE = F8  # live
KERNEL = r'''extern "C" __global__ void k(float* x){ cudaStream_t s; cudaStreamCreate(&s); }'''


def build():
    return compile_source(KERNEL, "k")  # dead


def test_kernel():
    build()  # dead


class TestOps:
    def test_a(self):
        F8  # dead


class Reference:
    def run(self):
        F8  # live


def make_inputs():
    F8  # live
"""


def test_a_module_pytestmark_skips_its_tests_not_its_module_code(tmp_path):
    paths = _check(tmp_path, MODULE_MARK)
    why = _reason(paths, MODULE_MARK, "F8  # dead")
    assert why.startswith("skipped by `pytestmark` (line 5) = `pytest.mark.skipif(")
    assert "`KERNEL` is read only where ROCm never runs (line 13" in _reason(
        paths, MODULE_MARK, "KERNEL = r"
    )


def test_a_test_another_file_names_stays_reported(tmp_path):
    # test_more.py imports the class: pytest collects it there, without this module's mark.
    code = textwrap.dedent(MODULE_MARK).replace("F8", F8)
    more = "from test_ops import TestOps\nfrom test_ops import KERNEL\n"
    paths = _paths(tmp_path, code, **{"test_more.py": more})
    assert not _reason(paths, MODULE_MARK, "F8  # dead")  # TestOps.test_a
    assert _reason(paths, MODULE_MARK, "build()  # dead")
    assert not _reason(paths, MODULE_MARK, "KERNEL = r")


def test_pytestmark_it_cannot_follow_or_that_skips_cuda(tmp_path):
    branch = MODULE_MARK.replace("pytestmark = ", "if SOMETHING:\n    pytestmark = ")
    rocm = MODULE_MARK.replace("is not None, reason", "is None, reason")
    for code in (branch, rocm):
        code = textwrap.dedent(code).replace("F8", F8)
        paths = _paths(tmp_path, code)
        assert not _reason(paths, code, "build()  # dead")
        assert not _reason(paths, code, "KERNEL = r")


def test_a_class_pytestmark(tmp_path):
    _check(
        tmp_path,
        """\
        import pytest
        from quasar import device

        class TestFused:
            pytestmark = pytest.mark.skipif(device.is_rocm, reason="no ROCm kernel")

            def test_a(self):
                F8  # dead

        class TestPlain:
            def test_b(self):
                F8  # live
        """,
    )


# -- 3. calls that never return --------------------------------------------------------------
LEAVING = """\
import os
import sys
import unittest

import pytest
import torch
from pytest import skip as skip_now

IS_HIP = torch.version.hip is not None


def test_skip():
    if IS_HIP:
        pytest.skip("no ROCm kernel")
    F8  # dead


def test_xfail():
    if torch.version.hip:
        pytest.xfail("no ROCm kernel")
    F8  # dead


def test_fail_and_renamed_skip():
    if IS_HIP:
        skip_now("no ROCm kernel")
    F8  # dead
    if torch.version.hip is not None:
        pytest.fail("unsupported")
    F8  # dead


def test_raise():
    if IS_HIP:
        raise unittest.SkipTest("no ROCm kernel")
    F8  # dead


def test_exits():
    if IS_HIP:
        sys.exit(0)
    F8  # dead


def test_hard_exit():
    if IS_HIP:
        os._exit(0)
    F8  # dead


class KernelTest(unittest.TestCase):
    def setUp(self):
        if IS_HIP:
            self.skipTest("no ROCm kernel")
        F8  # dead


def test_not_vendor():
    if not torch.cuda.is_available():
        pytest.skip("no GPU")
    F8  # live


def test_skipped_on_cuda():
    if not IS_HIP:
        pytest.skip("ROCm only")
    F8  # live


def test_returning_calls():
    if IS_HIP:
        pytest.importorskip("quasar_rocm")
    F8  # live
"""


def test_calls_that_never_return_leave_the_block(tmp_path):
    paths = _check(tmp_path, LEAVING)
    assert "after `if IS_HIP:` (line 13), true on ROCm, which always leaves" in _reason(
        paths, LEAVING, "F8  # dead"
    )


def test_a_module_level_skip_leaves_the_module(tmp_path):
    _check(
        tmp_path,
        """\
        import pytest
        import torch

        SETUP = F8  # live
        if torch.version.hip is not None:
            pytest.skip("CUDA-only module", allow_module_level=True)

        def test_a():
            F8  # dead
        """,
    )


# -- 4. vendor flags read by their name ------------------------------------------------------
FLAGS = """\
from quasar import runtime
from quasar.env import IS_ROCM, _is_hip, on_rocm, HIP_BUILD, is_rocm, use_rocm, hip

if not runtime.is_hip:
    F8  # dead
if not IS_ROCM and not _is_hip:
    F8  # dead
if not (on_rocm or HIP_BUILD):
    F8  # dead
if not is_rocm():
    F8  # dead
if use_rocm:
    pass
else:
    F8  # live
if not hip:
    F8  # live
if not is_rocm(0):
    F8  # live


def kernel(backend, is_hip=False):
    if not backend.is_hip:
        F8  # dead
    if not is_hip:
        F8  # live


def picked(x):
    if x:
        flag = True
    else:
        flag = False
    is_hip = flag
    if not is_hip:
        F8  # live
"""


def test_flags_named_for_rocm_are_true_exactly_on_rocm(tmp_path):
    paths = _check(tmp_path, FLAGS)
    why = _reason(paths, FLAGS, "F8  # dead")
    assert "`is_hip` read as the ROCm-build flag its name says" in why


def test_what_the_flag_name_rule_accepts():
    for name in ("is_hip", "IS_ROCM", "_is_hip", "on_rocm", "HIP_BUILD", "is_rocm_build"):
        assert VENDOR_FLAG.match(name), name
    for name in ("hip", "use_rocm", "with_hip", "is_cuda", "IS_HIP_AVAILABLE", "is_hipblaslt"):
        assert not VENDOR_FLAG.match(name), name


def test_a_known_value_wins_over_the_name(tmp_path):
    # Both false: dead on both vendors, not a ROCm fact; the name rule never overrides.
    _check(tmp_path, "IS_HIP = False\nif IS_HIP:\n    F8  # live\n")


def test_a_flag_an_import_fallback_binds_is_not_read_by_its_name(tmp_path):
    # Whether the import succeeds is about the installed packages: the pass followed both.
    _check(
        tmp_path,
        """\
        try:
            import quasar_hip_ops
            IS_HIP = True
        except ImportError:
            IS_HIP = False
        try:
            from quasar_probe import is_rocm
        except ImportError:
            is_rocm = None
        if not IS_HIP:
            F8  # live
        if not is_rocm:
            F8  # live
        """,
    )


def test_a_cuda_version_test_in_a_compound_condition(tmp_path):
    _check(
        tmp_path,
        """\
        import torch

        def f(x):
            if torch.version.cuda is not None and x:
                F8  # dead
            if torch.version.cuda is not None or x:
                F8  # live
            y = x and torch.version.cuda is not None and F8
        """,
    )
    code = "import torch\ny = x and torch.version.cuda is not None and F8\n".replace("F8", F8)
    paths = Paths(code)
    line = code.splitlines()[1]
    assert "after `torch.version.cuda is not None and`" in paths.reason(2, line.index(F8) + 1)
    assert not paths.reason(2, line.index("torch.version") + 1)


# -- end to end: the CLI ---------------------------------------------------------------------
KERNEL_TEST = '''\
import pytest
from torch.utils.cpp_extension import load_inline

from quasar.platform import is_hip


@pytest.mark.skipif(CONDITION, reason="CUDA kernel")
def test_stream_kernel():
    src = r"""extern "C" __global__ void k(float* x){ cudaStream_t s; cudaStreamCreate(&s); }"""
    load_inline("k", cpp_sources="", cuda_sources=src)
'''


def _lint(tmp_path: Path, text: str) -> dict:
    (tmp_path / "test_stream.py").write_text(text)
    shown = CliRunner().invoke(
        main, ["lint", "--no-cache", "--format", "json", "--show-guarded", str(tmp_path)]
    )
    return json.loads(shown.output)


def test_a_kernel_string_in_a_skipped_test_is_guarded_through_the_cli(tmp_path):
    found = _lint(tmp_path, KERNEL_TEST.replace("CONDITION", "is_hip"))
    streams = [d for d in found["diagnostics"] if d["rule"] == "hip-stream"]
    why = "skipped by `@pytest.mark.skipif(is_hip"
    assert streams and all(why in d["guarded"] for d in streams)
    found = _lint(tmp_path, KERNEL_TEST.replace("CONDITION", "not has_two_gpus()"))
    streams = [d for d in found["diagnostics"] if d["rule"] == "hip-stream"]
    assert streams and not any("guarded" in d for d in streams)


def test_a_module_kernel_string_under_pytestmark_through_the_cli(tmp_path):
    text = textwrap.dedent(MODULE_MARK).replace("F8", F8)
    found = _lint(tmp_path, text)
    line = next(i for i, t in enumerate(text.splitlines(), 1) if t.startswith("KERNEL"))
    at_kernel = [d for d in found["diagnostics"] if d["line"] == line]
    assert at_kernel and all("`KERNEL` is read only where" in d["guarded"] for d in at_kernel)
