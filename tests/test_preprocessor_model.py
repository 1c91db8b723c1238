"""The preprocessor model against the real one: `hipcc -E` (host and device passes) is the oracle.

Fixtures (tests/fixtures/preprocessor/, written for this test) mark every non-directive line
with a unique `v_name` and what the HIP passes should do with it (`// hip: keep|skip|unknown`).
The model must agree with the marks (always) and with hipcc (when installed): every line it
says HIP compiles survives `hipcc -E` in some pass, every line it says HIP skips survives in
none. Then the whole pipeline: findings in a CUDA-only branch are guarded (kept, with a reason,
out of the report and out of `fix`), findings under an unknown condition are reported.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from cuda2rocm.catalogue import load_catalogue
from cuda2rocm.context import build_defines, preprocessor
from cuda2rocm.context.project_macros import ProjectMacros
from cuda2rocm.engine import Linter
from cuda2rocm.fixer import fix_paths
from cuda2rocm.runner import run

FIXTURES = Path(__file__).parent / "fixtures" / "preprocessor"
MARK = re.compile(r"int (v_\w+);\s*// hip: (keep|skip|unknown)")
EXPECT = {"keep": True, "skip": False, "unknown": None}
HIPCC = shutil.which("hipcc")


def _marks(text: str) -> dict[str, tuple[int, bool | None]]:
    out = {}
    for number, line in enumerate(text.splitlines(), 1):
        m = MARK.search(line)
        if m:
            out[m.group(1)] = (number, EXPECT[m.group(2)])
    return out


def _project() -> tuple[ProjectMacros, build_defines.BuildDefines]:
    folder = FIXTURES / "project"
    setup = folder / "setup.py"
    defines = build_defines.index([(setup, "setup.py", setup.read_bytes())])
    texts = {str(p): p.read_text() for p in folder.iterdir() if p.suffix in (".h", ".cu")}
    return ProjectMacros.build(texts, defines), defines


def _model(path: Path, project: ProjectMacros | None = None) -> preprocessor.LineModel:
    return preprocessor.model(path.read_text(), str(path), False, project)


CASES = [
    pytest.param(FIXTURES / "conditions.cu", False, id="conditions"),
    pytest.param(FIXTURES / "project" / "kernel.cu", True, id="project-macros"),
    pytest.param(FIXTURES / "guarded.cuh", False, id="include-guard"),
]


@pytest.mark.parametrize(("path", "with_project"), CASES)
def test_model_matches_the_marks(path, with_project):
    project = _project()[0] if with_project else None
    model = _model(path, project)
    marks = _marks(path.read_text())
    assert len(marks) > 5
    got = {name: model.value(line) for name, (line, _) in marks.items()}
    assert got == {name: want for name, (_, want) in marks.items()}
    for _, (line, want) in marks.items():
        assert bool(model.reason(line)) == (want is False)


def _hipcc_keeps(path: Path, flags: list[str], tmp_path: Path) -> set[str]:
    """The `v_` names some HIP pass keeps: hipcc -E, host pass and device pass."""
    kept: set[str] = set()
    for which in ("--cuda-host-only", "--cuda-device-only"):
        result = subprocess.run(
            [HIPCC, "--offload-arch=gfx90a", which, "-x", "hip", "-E", "-P", *flags, str(path)],
            capture_output=True,
            text=True,
            env={"HIP_PLATFORM": "amd", "PATH": "/usr/bin:/bin:/usr/local/bin"},
            cwd=tmp_path,
            timeout=300,
        )
        assert result.returncode == 0, result.stderr[-2000:]
        kept |= set(re.findall(r"\bv_\w+", result.stdout))
    return kept


@pytest.mark.skipif(HIPCC is None, reason="hipcc is not installed")
@pytest.mark.parametrize(("path", "with_project"), CASES)
def test_model_agrees_with_hipcc(path, with_project, tmp_path):
    # What a ROCm build passes: torch's COMMON_HIP_FLAGS (and hip::host in CMake) define
    # __HIP_PLATFORM_AMD__; the project's setup.py adds its ROCm-only macros.
    flags = ["-D__HIP_PLATFORM_AMD__=1"]
    project = None
    if with_project:
        project, defines = _project()
        flags += [f"-D{name}={int(v.lo)}" for name, v in defines.rocm.items()]
        assert "-DWITH_HIP=1" in flags and not any("WITH_CUDA" in f for f in flags)
    model = _model(path, project)
    marks = _marks(path.read_text())
    kept = _hipcc_keeps(path, flags, tmp_path)
    compiled = {n for n, (line, _) in marks.items() if model.value(line) is True}
    skipped = {n for n, (line, _) in marks.items() if model.value(line) is False}
    assert compiled and skipped
    assert compiled <= kept, compiled - kept
    assert not (skipped & kept), skipped & kept


def test_expressions_in_three_valued_logic():
    facts = {"A": preprocessor.Val(True, 3, 3), "B": preprocessor.Val(False, 0, 0)}

    def lookup(name):
        return facts.get(name, preprocessor.UNKNOWN)

    def value(expr):
        return preprocessor.evaluate(expr, lookup)[0]

    assert value("A == 3 && !defined(B)") is True
    assert value("B || A > 4") is False
    assert value("U") is None and value("U || A") is True and value("U && B") is False
    assert value("defined(U) && 0") is False
    assert value("U > 2 ? 1 : 1") is True
    assert value("A * 2 + 1 == 7 && (A << 2) == 12 && ~0 == -1") is True
    assert value("F(1) || 0") is None  # function-like macros are unknown
    assert value("A +") is None  # unparsable: unknown, never false


def test_include_guard_is_true_but_only_the_classic_shape():
    """The guard of a header is true (its body is compiled on first inclusion), also when the
    project defines the guard's name (in this very file); a leading `#ifndef` that does not
    enclose the whole file, or whose next directive defines another name, is a real test."""
    body = "int a;\n#ifdef __HIPCC__\nint b;\n#endif\n"
    guarded = f"#ifndef H_\n#define H_\n{body}#endif\n"
    project = ProjectMacros.build({"h.h": guarded}, build_defines.BuildDefines())
    model = preprocessor.model(guarded, "h.h", False, project)
    assert model.value(3) is True and model.value(5) is not False
    spelled = guarded.replace("#ifndef H_", "#if !defined(H_)")
    assert preprocessor.model(spelled, "x.cuh", False).value(3) is True
    not_a_guard = [
        f"#ifndef H_\n#define OTHER\n{body}#endif\n",
        f"#ifndef H_\n#define H_\n#endif\n{body}",
        f"#ifdef H_\n#define H_\n{body}#endif\n",
    ]
    for text in not_a_guard:
        assert preprocessor.model(text, "x.cuh", False).value(2) is None, text


def test_hipified_names_in_torch_built_files():
    text = (
        "#ifdef __CUDACC__\nint a;\n#endif\n"
        "#if CUDA_VERSION >= 11000\nint b;\n#endif\n"
        "#ifdef USE_CUDA\nint c;\n#endif\n"
    )
    # Torch's hipify makes these __HIPCC__, TORCH_HIP_VERSION (< 10000) and USE_ROCM.
    built = preprocessor.model(text, "k.cu", True)
    assert [built.value(n) for n in (2, 5, 8)] == [True, False, True]
    plain = preprocessor.model(text, "k.cu", False)
    assert [plain.value(n) for n in (2, 5, 8)] == [False, False, None]
    # A torch-built .cpp goes to the plain C++ compiler, which defines no __HIPCC__.
    assert preprocessor.model(text, "k.cpp", True).value(2) is False


def test_build_flags_from_setup_py_and_cmake():
    setup = (FIXTURES / "project" / "setup.py").read_text()
    out = build_defines.BuildDefines()
    build_defines.python_defines(setup, "setup.py", out)
    cmake = (
        "if(USE_ROCM)\n  add_definitions(-DHIP_BUILD=1)\nelse()\n"
        "  target_compile_definitions(x PRIVATE CUDA_BUILD)\nendif()\n"
        "if(NOT USE_ROCM)\n  add_compile_definitions(NOT_ROCM)\nendif()\n"
        "if(SOME_OPTION)\n  add_definitions(-DOPTIONAL)\nendif()\n"
    )
    build_defines.cmake_defines(cmake, "CMakeLists.txt", out)
    out.settle()
    assert set(out.rocm) == {"WITH_HIP", "HIP_BUILD"}
    assert set(out.cuda_only) == {"WITH_CUDA", "CUDA_BUILD", "NOT_ROCM"}
    assert out.unknown == {"ROCM_FEATURE_LEVEL", "OPTIONAL"}


def test_cuda_switch_is_cuda_only_only_beside_a_rocm_switch(tmp_path):
    """`if(WITH_CUDA)` is off on ROCm only where the project has its own HIP/ROCm switch; in a
    project whose only GPU switch it is (not ported yet), a ROCm port turns it on: unknown."""
    cuda_block = (
        b"if(WITH_CUDA)\n  enable_language(CUDA)\n  add_definitions(-DWITH_CUDA)\nendif()\n"
    )
    lone = build_defines.index([(tmp_path / "CMakeLists.txt", "CMakeLists.txt", cuda_block)])
    assert "WITH_CUDA" in lone.unknown and "WITH_CUDA" not in lone.cuda_only
    rocm = b"option(USE_ROCM OFF)\nif(USE_ROCM)\n  add_subdirectory(hip)\nendif()\n"
    both = build_defines.index(
        [
            (tmp_path / "CMakeLists.txt", "CMakeLists.txt", cuda_block),
            (tmp_path / "cmake" / "rocm.cmake", "cmake/rocm.cmake", rocm),
        ]
    )
    assert "WITH_CUDA" in both.cuda_only


# -- the whole pipeline ------------------------------------------------------------------------
KERNEL = """\
#include "macros.h"
__device__ int lane() {
  int id;
#ifdef PTX_AVAILABLE
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(id));
#elif defined(SOME_UNKNOWN_FLAG)
  asm volatile("mov.u32 %0, %%warpid;" : "=r"(id));
#else
  id = __lane_id();
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
#endif
  return id;
}
#ifdef WITH_CUDA
void sync(cudaStream_t s) { cudaStreamSynchronize(s); }
#endif
"""
HEADER = "#pragma once\n#ifndef __HIP_PLATFORM_AMD__\n#define PTX_AVAILABLE\n#endif\n"
SETUP = (FIXTURES / "project" / "setup.py").read_text()


def _tree(tmp_path: Path) -> Path:
    # setup.py builds pkg/ (torch-built, hipified); plain.cu is built elsewhere (CMake).
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "setup.py").write_text(SETUP)
    (tmp_path / "macros.h").write_text(HEADER)
    (tmp_path / "plain.cu").write_text(KERNEL)
    return tmp_path


def test_findings_in_cuda_only_code_are_guarded_not_reported(tmp_path):
    tree = _tree(tmp_path)
    rules = [r for r in load_catalogue() if r.id in ("inline-ptx", "hip-stream", "cuda-arch-macro")]
    result = run(Linter(rules), [tree])
    reported = {(d.rule, d.position.line) for d in result.diagnostics}
    guarded = {(d.rule, d.position.line): d.guarded for d in result.guarded}
    # Unknown condition: reported. The `#if __CUDA_ARCH__` directive itself: reported.
    assert ("inline-ptx", 7) in reported
    assert ("cuda-arch-macro", 11) in reported
    # PTX_AVAILABLE is defined only under #ifndef __HIP_PLATFORM_AMD__ (macros.h).
    assert "`#ifdef PTX_AVAILABLE` at line 4" in guarded[("inline-ptx", 5)]
    assert "macros.h:3" in guarded[("inline-ptx", 5)]
    assert "`#if defined(__CUDA_ARCH__)" in guarded[("inline-ptx", 12)]
    # WITH_CUDA: setup.py passes it only when not IS_HIP_EXTENSION.
    assert "only to CUDA builds" in guarded[("hip-stream", 17)]
    assert "pkg/setup.py:10" in guarded[("hip-stream", 17)]
    assert not reported & set(guarded)


def test_fix_leaves_cuda_only_code_and_adds_no_compat_header(tmp_path):
    tree = _tree(tmp_path)
    rules = [r for r in load_catalogue() if r.id == "hip-stream"]
    report = fix_paths(Linter(rules), [tree])
    assert report.errors == []
    assert (tree / "plain.cu").read_text() == KERNEL
    assert not (tree / "cuda2rocm_compat.h").exists()
    # The same code outside the guard is fixed (the rule does fire on it).
    (tree / "plain.cu").write_text(KERNEL.replace("#ifdef WITH_CUDA", "#ifdef OTHER_FLAG"))
    fix_paths(Linter(rules), [tree])
    assert '#include "cuda2rocm_compat.h"' in (tree / "plain.cu").read_text()


def test_an_elif_never_reached_by_hip_is_guarded_and_a_directive_is_not():
    text = (
        "#if defined(__HIP_PLATFORM_AMD__)\nint a;\n#elif __CUDA_ARCH__ >= 800\nint b;\n#endif\n"
        "#if __CUDA_ARCH__ >= 700\nint c;\n#endif\n"
    )
    model = preprocessor.model(text, "k.cu", False)
    assert "always taken" in model.reason(3)  # the #elif is never evaluated on ROCm
    assert model.value(6) is True  # the #if line is processed: a finding on it stays
    assert model.value(7) is False


def test_project_macro_guard_is_not_reported_when_the_build_defines_the_hip_one(tmp_path):
    text = "#ifdef WITH_CUDA\nint cuda_path;\n#endif\n"
    (tmp_path / "a.cu").write_text(text)
    rules = [r for r in load_catalogue() if r.id == "nvcc-only-guard"]
    assert [d.rule for d in run(Linter(rules), [tmp_path]).diagnostics] == ["nvcc-only-guard"]
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "setup.py").write_text(SETUP)  # passes WITH_HIP for ROCm builds
    assert run(Linter(rules), [tmp_path]).diagnostics == []


def test_one_construct_one_finding(tmp_path):
    (tmp_path / "g.cu").write_text(
        "#include <cutlass/gemm/device/gemm.h>\n"
        "using Gemm = cutlass::gemm::device::Gemm<float, cutlass::layout::RowMajor>;\n"
        '__device__ void f(int* a) { asm("mov.u32 %0, %%laneid;" : "=r"(a[0])); '
        'asm("mov.u32 %0, %%laneid;" : "=r"(a[1])); }\n'
    )
    rules = [r for r in load_catalogue() if r.id in ("hip-include", "wmma-cutlass", "inline-ptx")]
    found = [(d.rule, d.position.line) for d in run(Linter(rules), [tmp_path]).diagnostics]
    # CUTLASS: the include is reported, its uses are not reported again; the file's PTX follows
    # that decision (context.library_users), guarded.
    assert found == [("hip-include", 1)]
    without = [r for r in rules if r.id != "wmma-cutlass"]
    result = run(Linter(without), [tmp_path])
    assert [(d.rule, d.position.line) for d in result.guarded] == [("inline-ptx", 3)]
    only_uses = [r for r in rules if r.id == "wmma-cutlass"]
    assert [d.rule for d in run(Linter(only_uses), [tmp_path]).diagnostics] == ["wmma-cutlass"]


def test_cpp_parse_recovery_is_a_notice_not_a_finding(tmp_path):
    (tmp_path / "k.cu").write_text('__global__ void k( { asm("mov.u32 %0, %%laneid;" : "=r"(x));\n')
    rules = [r for r in load_catalogue() if r.id in ("inline-ptx", "parse-error")]
    result = run(Linter(rules), [tmp_path])
    assert [d.rule for d in result.diagnostics] == ["inline-ptx"]
    assert [n.message[:36] for n in result.notices] == ["C++/CUDA syntax not understood at li"]


def test_a_header_change_invalidates_cached_results_of_files_using_its_macros(tmp_path):
    from cuda2rocm.cache import Cache

    (tmp_path / "tree").mkdir()
    tree = _tree(tmp_path / "tree")
    rules = [r for r in load_catalogue() if r.id == "inline-ptx"]

    def lint():
        cache = Cache(tmp_path / "cache", "k")
        result = run(Linter(rules), [tree], cache=cache)
        return cache.hits, {d.position.line for d in result.diagnostics}

    assert lint()[1] == {7}
    assert lint() == (1, {7})  # unchanged tree: served from the cache
    # PTX_AVAILABLE is now defined for ROCm too: plain.cu itself did not change.
    (tree / "macros.h").write_text("#pragma once\n#define PTX_AVAILABLE\n")
    assert lint() == (0, {5})  # and the `#elif` at line 6 is now never reached


def test_cpp_in_a_python_string_is_guarded_with_python_file_lines(tmp_path):
    (tmp_path / "ext.py").write_text(
        "from torch.utils.cpp_extension import load_inline\n"
        'CUDA = """\n'
        "__device__ int lane() {\n"
        "  int id = 0;\n"
        "#ifndef __HIP_PLATFORM_AMD__\n"
        '  asm("mov.u32 %0, %%laneid;" : "=r"(id));\n'
        "#endif\n"
        '  asm("mov.u32 %0, %%warpid;" : "=r"(id));\n'
        "  return id;\n"
        '}\n"""\n'
        'load_inline("m", cpp_sources="", cuda_sources=CUDA)\n'
    )
    # A Python rule too: Python files are read only when some Python rule is selected.
    rules = [r for r in load_catalogue() if r.id in ("inline-ptx", "device-string-hip")]
    result = run(Linter(rules), [tmp_path])
    assert [d.position.line for d in result.diagnostics] == [8]
    assert [(d.position.line, d.guarded) for d in result.guarded] == [
        (6, "the HIP pass skips this: `#ifndef __HIP_PLATFORM_AMD__` at line 5")
    ]
