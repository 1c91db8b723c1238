"""The context model for Python and builds: what ROCm provably never runs or compiles.

Python fixtures mark each probed line with `# dead` (ROCm never runs it) or `# live` (it may:
unknown or taken); the test checks every marked line at its first non-blank column.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import check_marked_lines

from cuda2rocm import runner
from cuda2rocm.catalogue import load_catalogue
from cuda2rocm.cli import main
from cuda2rocm.context.build import accelerator, cmake_components, python_components
from cuda2rocm.context.python_paths import ROCM_FLAGS, Paths, ProjectIndex
from cuda2rocm.engine import Linter
from cuda2rocm.frontends import python_guards


def _check(code: str, paths: Paths | None = None, env_defaults: bool = False) -> None:
    code = textwrap.dedent(code)
    paths = paths or Paths(code, env_defaults=env_defaults)
    check_marked_lines(code, paths)


def test_vendor_tests_and_their_branches():
    _check("""
        import torch
        if torch.version.hip:
            a = 1  # live
        else:
            b = 2  # dead
        if torch.version.cuda is not None:
            c = 3  # dead
        elif torch.cuda.is_available():
            d = 4  # live
        else:
            e = 5  # live
        if torch.version.hip is None:
            f = 6  # dead
        if not torch.version.cuda:
            g = 7  # live
        else:
            h = 8  # dead
        if hasattr(torch.version, "hip") and torch.version.hip is not None:
            i = 9  # live
        else:
            j = 10  # dead
    """)


def test_cpp_extension_flags_and_aliases():
    _check("""
        import torch as T
        from torch.utils.cpp_extension import IS_HIP_EXTENSION as HIP, ROCM_HOME
        from torch.version import cuda
        if not HIP:
            a = 1  # dead
        if ROCM_HOME is None:
            b = 2  # dead
        if cuda:
            c = 3  # dead
        if T.version.hip and ROCM_HOME:
            d = 4  # live
        else:
            e = 5  # dead
    """)


def test_names_assigned_from_flags_module_and_function_level():
    _check("""
        import torch
        IS_ROCM = torch.version.hip is not None
        if not IS_ROCM:
            a = 1  # dead
        def f():
            on_amd = bool(torch.version.hip)
            if on_amd:
                return 1
            b = 2  # dead
        def g():
            if IS_ROCM:
                raise RuntimeError("no")
            c = 3  # dead
    """)


def test_helpers_methods_and_early_exits():
    _check("""
        import functools
        import torch

        @functools.lru_cache
        def is_rocm_pytorch():
            return torch.version.hip is not None

        def on_nvidia():
            if torch.version.hip:
                return False
            return True

        if not is_rocm_pytorch():
            a = 1  # dead
        if on_nvidia():
            b = 2  # dead

        class Builder:
            def is_rocm(self):
                return is_rocm_pytorch()

            def flags(self):
                if self.is_rocm():
                    return ["-O3"]
                return ["--use_fast_math"]  # dead

            def more(self):
                for x in range(3):
                    if is_rocm_pytorch():
                        continue
                    c = x  # dead
    """)


def test_conditional_expressions_and_short_circuits():
    code = textwrap.dedent("""\
        import torch
        IS_ROCM = torch.version.hip is not None
        x = rocm() if IS_ROCM else nvidia()
        y = IS_ROCM or nvidia()
        z = torch.version.cuda and nvidia()
        w = unknown() or nvidia()
    """)
    paths = Paths(code)
    lines = code.splitlines()

    def at(line: int, word: str) -> str:
        return paths.reason(line, lines[line - 1].index(word) + 1)

    assert at(3, "nvidia") and not at(3, "rocm")
    assert at(4, "nvidia") and not at(4, "IS_ROCM")
    assert at(5, "nvidia") and not at(5, "torch")
    assert not at(6, "nvidia")


def test_unknown_conditions_are_not_guarded():
    _check("""
        import os
        import torch
        if torch.cuda.is_available():
            a = 1  # live
        else:
            b = 2  # live
        if not IS_ROCM_FROM_NOWHERE:
            c = 3  # live
        if torch.version.hip and float(torch.version.hip) >= 6.0:
            d = 4  # live
        else:
            e = 5  # live
        if hasattr(torch.amp, "custom_fwd"):
            f = 6  # live
        else:
            g = 7  # live
        try:
            import pynvml
            h = 8  # live
        except ImportError:
            i = 9  # live
        if os.environ.get("USE_CUDA_PATH") == "1":
            j = 10  # live
        device = "cuda" if torch.version.cuda is not None else "cpu"
        if device == "cuda":
            k = 11  # live
    """)


def test_or_with_unknown_and_twice_bound_names():
    _check("""
        import os
        import torch
        IS_ROCM = torch.version.hip is not None
        if not IS_ROCM or os.environ.get("X"):
            a = 1  # live
        if IS_ROCM or maybe():
            b = 2  # live
        else:
            c = 3  # dead
        FLAG = torch.version.hip is not None
        if maybe():
            FLAG = False
        if not FLAG:
            d = 4  # live
        ON_AMD = torch.version.hip is not None
        def f():
            global ON_AMD
            ON_AMD = maybe()
        if not ON_AMD:
            e = 5  # live
        for item in things():
            LOOPED = torch.version.hip
        if not LOOPED:
            g = 7  # live
    """)


def test_the_test_itself_is_not_guarded_only_its_branch():
    code = "import torch\nif torch.version.cuda is not None: nvidia()\n"
    paths = Paths(code)
    assert not paths.reason(2, 1)
    assert not paths.reason(2, code.splitlines()[1].index("torch") + 1)
    assert paths.reason(2, code.splitlines()[1].index("nvidia") + 1)


def test_environment_defaults_guard_only_through_the_vendor():
    """In build files, a build target read from the environment takes its default; code dead
    on both vendors (behind the environment alone) stays reported. Runtime code reads the
    environment as unknown."""
    code = """
        import os
        from torch.utils.cpp_extension import IS_HIP_EXTENSION
        TARGET = os.environ.get("BUILD_TARGET", "auto")
        if TARGET == "auto":
            IS_ROCM = IS_HIP_EXTENSION
        elif TARGET == "cuda":
            IS_ROCM = False
        else:
            IS_ROCM = True
        if TARGET == "rocm":
            a = 1  # live
        if not IS_ROCM:
            b = 2  # dead
    """
    _check(code, env_defaults=True)
    _check(code.replace("# dead", "# live"))


def test_project_index_follows_flags_across_modules(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    env = tmp_path / "pkg" / "env.py"
    env.write_text(
        "import torch\nIS_ROCM = torch.version.hip is not None\n"
        "def is_rocm_pytorch():\n    return IS_ROCM\n"
    )
    user = tmp_path / "pkg" / "ops.py"
    code = textwrap.dedent("""\
        from .env import IS_ROCM
        from pkg.env import is_rocm_pytorch
        if not IS_ROCM:
            a = 1  # dead
        if is_rocm_pytorch():
            b = 2  # live
        else:
            c = 3  # dead
    """)
    user.write_text(code)
    index = ProjectIndex.build([(p, p.read_bytes()) for p in (env, user)])
    _check(code, Paths(code, user, index))
    # Without the index, the imported names are unknown: `is_rocm_pytorch()` stays so, while
    # `IS_ROCM` is read by its name as the ROCm-build flag (VENDOR_FLAG), and the reason says so.
    alone = Paths(code, user)
    assert not alone.reason(8, 5)
    assert "`IS_ROCM` read as the ROCm-build flag its name says" in alone.reason(4, 5)
    assert "read as the ROCm-build flag" not in Paths(code, user, index).reason(4, 5)
    assert index.digest != ProjectIndex({}).digest


def test_rule_level_guard_shares_the_vendor_facts():
    assert python_guards.ROCM_FLAGS == ROCM_FLAGS


# -- through the linter ------------------------------------------------------------------------
def _run(tmp_path: Path, *rules: str):
    specs = [r for r in load_catalogue() if r.id in rules or (r.step != 0 and not rules)]
    specs += [r for r in load_catalogue() if r.id == "cuda-only-component"]
    linter = Linter(specs)
    return runner.run(linter, [tmp_path])


NVML = """\
import torch
IS_ROCM = torch.version.hip is not None
if not IS_ROCM:
    scaler = torch.cuda.amp.GradScaler()
if maybe():
    scaler = torch.cuda.amp.GradScaler()
"""


def test_linter_keeps_guarded_findings_with_reason(tmp_path):
    (tmp_path / "m.py").write_text(NVML)
    result = _run(tmp_path, "amp-deprecated-api")
    assert [d.position.line for d in result.guarded] == [4]
    assert "`if not IS_ROCM:` (line 3)" in result.guarded[0].guarded
    assert [d.position.line for d in result.diagnostics if d.rule == "amp-deprecated-api"] == [6]


def test_a_failing_context_model_drops_nothing(tmp_path, monkeypatch):
    from cuda2rocm.context import python_paths

    def broken(*args, **kwargs):
        raise ValueError("boom")

    monkeypatch.setattr(python_paths, "guard", broken)
    (tmp_path / "m.py").write_text(NVML)
    result = _run(tmp_path, "amp-deprecated-api", "internal-error")
    assert result.guarded == []
    assert [d.position.line for d in result.diagnostics if d.rule == "amp-deprecated-api"] == [4, 6]
    assert any("the context model" in d.message for d in result.diagnostics)


SETUP = """\
import os
from setuptools import setup
from torch.utils.cpp_extension import CUDAExtension, IS_HIP_EXTENSION

ext_modules = []
if not IS_HIP_EXTENSION:
    ext_modules.append(CUDAExtension("fast", sources=["csrc/cuda_only/a.cu",
                                                      "csrc/cuda_only/sub/b.cu"]))
else:
    ext_modules.append(CUDAExtension("fast", sources=["csrc/rocm/a.cu"]))
if os.environ.get("WITH_SHARED", "1") == "1":
    ext_modules.append(CUDAExtension("shared", sources=["csrc/shared/s.cu"]))
setup(name="x", ext_modules=ext_modules)
"""
PTX = '__global__ void k(int *x) { asm volatile("membar.gl;"); }\n'


def _project(tmp_path: Path) -> None:
    for folder in ("csrc/cuda_only/sub", "csrc/rocm", "csrc/shared"):
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
    for name in ("cuda_only/a.cu", "cuda_only/sub/b.cu", "rocm/a.cu", "shared/s.cu"):
        (tmp_path / "csrc" / name).write_text(PTX)
    (tmp_path / "csrc/cuda_only/extra.cuh").write_text(PTX)
    (tmp_path / "setup.py").write_text(SETUP)


def test_setup_py_component_is_guarded_and_summed_up_once(tmp_path):
    _project(tmp_path)
    components = python_components(tmp_path / "setup.py", "setup.py", SETUP, tmp_path.resolve())
    assert [c.root for c in components] == [(tmp_path / "csrc/cuda_only").resolve()]
    result = _run(tmp_path, "inline-ptx")

    def rel(d):
        return Path(d.path).resolve().relative_to(tmp_path.resolve()).as_posix()

    guarded = {rel(d) for d in result.guarded}
    assert guarded == {"csrc/cuda_only/a.cu", "csrc/cuda_only/sub/b.cu", "csrc/cuda_only/extra.cuh"}
    reported = {rel(d) for d in result.diagnostics}
    assert {"csrc/rocm/a.cu", "csrc/shared/s.cu"} <= reported
    summary = [d for d in result.diagnostics if d.rule == "cuda-only-component"]
    assert len(summary) == 1
    assert summary[0].path.endswith("setup.py") and summary[0].position.line == 7
    assert (
        "`csrc/cuda_only`" in summary[0].message and "3 findings in 3 files" in summary[0].message
    )
    # The exclusion is the project's own ROCm decision (`if not IS_ROCM`): a note, not an action.
    assert summary[0].severity.value == "info" and "already leaves it out" in summary[0].message


def test_component_sharing_a_folder_with_rocm_sources_is_only_its_files(tmp_path):
    setup = SETUP.replace("csrc/rocm/a.cu", "csrc/cuda_only/sub/b.cu")
    _project(tmp_path)
    (tmp_path / "setup.py").write_text(setup)
    components = python_components(tmp_path / "setup.py", "setup.py", setup, tmp_path.resolve())
    holders = {p.name for c in components for p in c.files}
    assert holders == {"a.cu"}  # b.cu is also built for ROCm, extra.cuh is unknown


def test_folder_whose_header_rocm_sources_include_is_not_a_component(tmp_path):
    _project(tmp_path)
    (tmp_path / "csrc/rocm/a.cu").write_text('#include "../cuda_only/extra.cuh"\n' + PTX)
    components = python_components(tmp_path / "setup.py", "setup.py", SETUP, tmp_path.resolve())
    # csrc/cuda_only holds a header ROCm includes: only its listed file; sub/ is still whole.
    assert {p.name for c in components for p in c.files} == {"a.cu"}
    assert [c.root.name for c in components if not c.files] == ["sub"]


def test_fix_leaves_cuda_only_components_alone(tmp_path):
    from cuda2rocm.fixer import fix_paths

    _project(tmp_path)
    (tmp_path / "csrc/cuda_only/bench.py").write_text(NVML)
    (tmp_path / "csrc/shared/bench.py").write_text(NVML)
    specs = [r for r in load_catalogue() if r.id == "amp-deprecated-api"]
    fix_paths(Linter(specs), [tmp_path])
    assert (tmp_path / "csrc/cuda_only/bench.py").read_text() == NVML
    shared = (tmp_path / "csrc/shared/bench.py").read_text().splitlines()
    assert "torch.cuda.amp" in shared[3]  # inside `if not IS_ROCM:`: left alone
    assert "torch.cuda.amp" not in shared[5]


def test_unknown_build_condition_guards_nothing(tmp_path):
    setup = SETUP.replace("if not IS_HIP_EXTENSION:", "if torch_cuda_available():")
    _project(tmp_path)
    (tmp_path / "setup.py").write_text(setup)
    result = _run(tmp_path, "inline-ptx")
    assert result.guarded == []
    assert not [d for d in result.diagnostics if d.rule == "cuda-only-component"]


OP_BUILDER = """\
import torch

class OpBuilder:
    def is_rocm_pytorch(self):
        return torch.version.hip is not None

class FastOpBuilder(OpBuilder):
    def is_compatible(self, verbose=False):
        if self.is_rocm_pytorch():
            return False
        return True

    def sources(self):
        return ["csrc/fast/fast.cu"]

class PortableBuilder(OpBuilder):
    def is_compatible(self, verbose=False):
        return True

    def sources(self):
        return ["csrc/portable/p.cu"]
"""


def test_op_builder_incompatible_on_rocm(tmp_path):
    for folder in ("csrc/fast", "csrc/portable", "pkg/op_builder"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "csrc/fast/fast.cu").write_text(PTX)
    (tmp_path / "csrc/portable/p.cu").write_text(PTX)
    builder = tmp_path / "pkg/op_builder/builder.py"
    builder.write_text(OP_BUILDER)
    components = python_components(builder, "builder.py", OP_BUILDER, tmp_path.resolve())
    assert [c.root for c in components] == [(tmp_path / "csrc/fast").resolve()]
    assert "FastOpBuilder.is_compatible()" in components[0].why


CMAKE = """\
project(x LANGUAGES CXX)
if(NOT USE_ROCM)
  add_subdirectory(cuda_kernels)
endif()
if(USE_ROCM)
  add_subdirectory(hip_kernels)
else()
  add_subdirectory(nvidia_tools)
endif()
if(BUILD_EXTRAS)
  add_subdirectory(extras)
endif()
if(NOT USE_ROCM AND
   WITH_TESTS)
  add_subdirectory(both)
else()
  add_subdirectory(other)
endif()
add_subdirectory(both)
"""


CMAKE_SOURCES = """\
option(USE_ROCM "Use ROCm" OFF)
if(NOT USE_ROCM)
  if(((EXISTS "/opt/rocm/") OR (EXISTS $ENV{ROCM_PATH})) AND NOT (EXISTS "/bin/nvcc"))
    set(USE_ROCM ON)  # detected (a comment with a paren: ")
  endif()
endif()
if(USE_ROCM)
  unset(USE_CUDA)
else()
  set(USE_CUDA TRUE)
endif()
if(USE_CUDA)
  list(APPEND SOURCES common.cu nv/only.cu nv/sub/deep.cu cudnn_glue.cpp)
else()
  list(APPEND SOURCES common.cu amd/only.hip)
endif()
if(EXTRA)
  list(APPEND SOURCES maybe/x.cu)
endif()
add_library(lib SHARED ${SOURCES})
"""


def test_cmake_sources_listed_only_for_cuda(tmp_path):
    for name in (
        "common.cu",
        "nv/only.cu",
        "nv/sub/deep.cu",
        "cudnn_glue.cpp",
        "amd/only.hip",
        "maybe/x.cu",
    ):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(PTX)
    cmake = tmp_path / "CMakeLists.txt"
    cmake.write_text(CMAKE_SOURCES)
    found = cmake_components(cmake, "CMakeLists.txt", CMAKE_SOURCES)
    whole = [c.root.name for c in found if not c.files]
    files = {p.name for c in found for p in c.files}
    assert whole == ["nv"]  # nothing ROCm builds is in nv/
    assert files == {"cudnn_glue.cpp"}  # beside common.cu, which ROCm builds too
    assert all("`if(USE_CUDA)` (line 12" in c.why for c in found)


def test_cmake_add_subdirectory_only_without_rocm(tmp_path):
    for folder in ("cuda_kernels", "hip_kernels", "nvidia_tools", "extras", "both", "other"):
        (tmp_path / folder).mkdir()
    cmake = tmp_path / "CMakeLists.txt"
    cmake.write_text(CMAKE)
    found = {c.root.name: c for c in cmake_components(cmake, "CMakeLists.txt", CMAKE)}
    assert set(found) == {"cuda_kernels", "nvidia_tools"}
    assert found["nvidia_tools"].line == 8
    assert "the `else()` of `if(USE_ROCM)` (line 5)" in found["nvidia_tools"].why


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        ("src/kernels/x.dp.cpp", "", "SYCL"),
        ("src/ops/xpu/kernel.cpp", "", "Intel XPU"),
        ("hpu/builder.py", "", "Gaudi"),
        ("csrc/mps/ops.mm", "", "Apple"),
        ("csrc/sycl_kernels.cpp", "#include <sycl/sycl.hpp>\n", "SYCL"),
        ("csrc/cuda/x.cu", "#include <cuda.h>\n", ""),
        ("csrc/xpu_like.cu", "// mentions sycl only in a comment\n", ""),
    ],
)
def test_other_accelerators(path, text, expected):
    found = accelerator(path, text)
    assert (expected in found) if expected else found == ""


def test_show_guarded_lists_reasons_in_json_and_text(tmp_path):
    (tmp_path / "m.py").write_text(NVML)
    cli = CliRunner()
    plain = cli.invoke(main, ["lint", "--no-cache", "--format", "json", str(tmp_path)])
    shown = cli.invoke(
        main, ["lint", "--no-cache", "--format", "json", "--show-guarded", str(tmp_path)]
    )
    before, after = json.loads(plain.output), json.loads(shown.output)
    assert not any("guarded" in d for d in before["diagnostics"])
    guarded = [d for d in after["diagnostics"] if "guarded" in d]
    assert [d["line"] for d in guarded] == [4]
    assert after["summary"] == before["summary"]
    text = cli.invoke(main, ["lint", "--no-cache", "--show-guarded", str(tmp_path)])
    assert "Guarded: 1 findings" in text.output and "if not IS_ROCM:" in text.output


@pytest.mark.parametrize(
    "text",
    [
        "x = (a\n  + b)\n",
        "if torch.version.hip:\r\n    y = 'é' + f(\r\n  z)\r\nelse:\r    w = 1\n",
        "s = 'ü'; t = ('\x0c'\n  'x')\nq = [1,\n 2]",
    ],
)
def test_shared_segment_matches_the_standard_library(text):
    """The context model's cached source segments are exactly ast.get_source_segment's."""
    import ast

    from cuda2rocm.context.python_paths import _Shared

    tree = ast.parse(text)
    shared = _Shared(tree, text)
    nodes = [n for n in ast.walk(tree) if isinstance(n, (ast.expr, ast.stmt))]
    assert nodes
    for node in nodes:
        assert shared.segment(node) == ast.get_source_segment(text, node)


WANTED = """\
import unittest

import torch

IS_ROCM = torch.version.hip is not None
skip_rocm = unittest.skipIf(IS_ROCM, "not on ROCm")


def on_rocm():
    return torch.version.hip is not None


def cuda_setup():
    torch.backends.cuda.matmul.allow_tf32 = True
    nested_helper()


def nested_helper():
    torch.backends.cudnn.allow_tf32 = True


def main():
    if not IS_ROCM:
        cuda_setup()
    if on_rocm():
        return 1
    torch.backends.cudnn.benchmark = True
    return 0


class Cases(unittest.TestCase):
    def _vendor(self):
        return torch.version.hip is not None

    def _reference(self):
        torch.backends.cuda.matmul.allow_tf32 = False

    @skip_rocm
    def test_cuda_only(self):
        self._reference()

    def test_both(self):
        if self._vendor():
            return
        torch.backends.cudnn.deterministic = True

    @unittest.skipIf(on_rocm(), "CUDA")
    def test_skipped(self):
        x = torch.ones(2)
        return x


def mixed():
    a = 1 if IS_ROCM else torch.backends.cudnn.benchmark
    b = IS_ROCM or torch.backends.cudnn.deterministic
    return a, b
"""


def test_asking_about_some_lines_answers_as_the_whole_file_does():
    """The guard walks only the functions holding the lines it is asked about (and the
    functions whose callers decide them): each line's answer equals the whole-file pass's."""
    index = ProjectIndex({}, frozenset(), frozenset())
    whole = Paths(WANTED, "t.py", index)
    count = len(WANTED.splitlines())
    dead = 0
    for line in range(1, count + 1):
        text = WANTED.splitlines()[line - 1]
        alone = Paths(WANTED, "t.py", index, lines={line})
        for column in range(1, len(text) + 1):
            assert alone.reason(line, column) == whole.reason(line, column), (line, column)
        column = len(text) - len(text.lstrip()) + 1
        dead += bool(whole.reason(line, column))
    assert dead >= 8  # the fixture exercises the guard (helpers, callers, skips, returns)
    assert whole.reason(54, 27) and whole.reason(55, 20)  # inside expressions too
    # Called only where ROCm never runs: the answer for a line of nested_helper needs
    # cuda_setup's call site, inside main.
    assert "called only where ROCm never runs" in Paths(WANTED, "t.py", index, lines={19}).reason(
        19, 5
    )


BINDINGS = """\
import os.path as osp, sys
from torch import cuda

for i, (a, b) in enumerate(pairs):
    with open(a) as fh, lock:
        try:
            if (n := len(fh.read())) > 2:
                del b
        except OSError as err:
            total = [j for j in range(n)]
        else:
            fn = lambda q: (r := q)

            def helper(x=(w := 1)):
                inner = x
                return inner

            class Box:
                size = 3
        finally:
            done = True
while flag:
    match value:
        case [first, *rest]:
            seen = first
"""


def test_names_a_statement_binds_are_built_from_its_nested_statements():
    """The shared per-statement binding sets (built bottom-up, each subtree walked once) equal
    a fresh walk of each statement, and a function's locals include its parameters."""
    import ast

    from cuda2rocm.context.python_paths import _bound_names, _Shared

    tree = ast.parse(BINDINGS)
    shared = _Shared(tree, BINDINGS)
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt):
            assert shared.bound_by(node) == _bound_names([node]), node.lineno
    loop = tree.body[2]
    assert {"i", "a", "b", "fh", "n", "err", "total", "fn", "helper", "Box", "done"} <= (
        shared.bound_by(loop)
    )
    helper = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef))
    assert shared.locals_of(helper) == {"x", "inner"}
