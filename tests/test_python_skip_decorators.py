"""Tests a skip decorator takes off ROCm, and the helpers only they call (context.python_paths).

Lines marked `# dead` must be guarded (ROCm never runs them), `# live` must stay reported.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from conftest import check_marked_lines

from cuda2rocm.context.python_paths import Paths, ProjectIndex

TESTS = """\
import unittest

import pytest
import torch
from parameterized import parameterized

IS_ROCM = torch.version.hip is not None
skip_rocm = unittest.skipIf(torch.version.hip is not None, "no ROCm kernel")


def reference(x):
    return x.to(torch.float8_e4m3fn)  # dead


def shared(x):
    return x.to(torch.float8_e4m3fn)  # live


class KernelTest(unittest.TestCase):
    def _inputs(self):
        return torch.ones(4).to(torch.float8_e4m3fn)  # dead

    def _both(self):
        return torch.ones(4).to(torch.float8_e4m3fn)  # live

    @unittest.skipIf(torch.version.hip is not None or not torch.cuda.is_available(), "x")
    def test_skipped(self):
        x = self._inputs()  # dead
        reference(x)  # dead
        self._both()  # dead
        shared(x)  # dead

    @skip_rocm
    def test_named_skip(self):
        self._inputs()  # dead

    @unittest.skipUnless(torch.version.cuda, "CUDA only")
    def test_unless(self):
        self._inputs()  # dead

    @pytest.mark.skipif(IS_ROCM, reason="no ROCm kernel")
    def test_pytest(self):
        self._inputs()  # dead

    def test_runs(self):
        self._both()  # live
        shared(None)  # live

    @skip_rocm
    @parameterized.expand([(1,), (2,)])
    def test_expanded(self, n):
        # expand builds the tests from the function below it: the skip never reaches them
        torch.ones(n).to(torch.float8_e4m3fn)  # live

    @parameterized.expand([(1,), (2,)])
    @skip_rocm
    def test_expanded_skipped(self, n):
        torch.ones(n).to(torch.float8_e4m3fn)  # dead

    @parameterized.expand(
        [(n,) for n in ([1, 2] if torch.version.cuda else [1])]  # dead
    )
    @unittest.skipIf(not torch.version.cuda, "no ROCm kernel")
    def test_parametrized_skipped(self, n):
        torch.ones(n).to(torch.float8_e4m3fn)  # dead

    @unittest.skipIf(torch.cuda.device_count() < 2, "needs two GPUs")
    def test_unknown(self):
        torch.ones(2).to(torch.float8_e4m3fn)  # live


@unittest.skipIf(IS_ROCM, "not on ROCm")
class WholeClass(unittest.TestCase):
    def test_a(self):
        torch.ones(2).to(torch.float8_e4m3fn)  # dead
"""


def _check(code: str, paths: Paths) -> None:
    check_marked_lines(code, paths)


def _paths(tmp_path: Path, code: str, **others: str) -> Paths:
    path = tmp_path / "test_kernel.py"
    path.write_text(code)
    files = [path]
    for name, text in others.items():
        (tmp_path / name).write_text(text)
        files.append(tmp_path / name)
    index = ProjectIndex.build([(p, p.read_bytes()) for p in files])
    return Paths(code, path, index)


def test_skip_decorators_and_the_helpers_only_skipped_tests_call(tmp_path):
    code = textwrap.dedent(TESTS)
    paths = _paths(tmp_path, code)
    _check(code, paths)
    line = next(i for i, t in enumerate(code.splitlines(), 1) if "x = self._inputs()" in t)
    assert "skipped by `@unittest.skipIf(" in paths.reason(line, 9)
    assert "true on ROCm" in paths.reason(line, 9)


def test_a_helper_another_file_names_stays_reported(tmp_path):
    # A subclass elsewhere may call `_inputs` through self: it may run on ROCm.
    code = textwrap.dedent(TESTS)
    paths = _paths(
        tmp_path, code, **{"test_other.py": "class T:\n    def t(self):\n        self._inputs()\n"}
    )
    line = next(
        i
        for i, t in enumerate(code.splitlines(), 1)
        if "float8_e4m3fn)  # dead" in t and "ones(4)" in t
    )
    assert paths.reason(line, 9) == ""


def test_a_skip_on_cuda_is_no_rocm_fact(tmp_path):
    code = textwrap.dedent(
        """\
        import unittest
        import torch

        class T(unittest.TestCase):
            @unittest.skipIf(torch.version.cuda is not None, "ROCm only")
            def test_rocm(self):
                torch.ones(2).to(torch.float8_e4m3fn)  # live
        """
    )
    _check(code, _paths(tmp_path, code))
