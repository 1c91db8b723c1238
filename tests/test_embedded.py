"""C++/CUDA inside Python strings: exact positions in the Python file, fixes that keep it valid."""

from __future__ import annotations

import ast

from cuda2rocm.catalogue import load_catalogue, select_rules
from cuda2rocm.engine import Linter
from cuda2rocm.fixer import fix_source
from cuda2rocm.sources import SourceFile

LINTER = Linter(select_rules(load_catalogue()))

TRIPLE = '''import torch
from torch.utils.cpp_extension import load_inline

kernels = load_inline(
    name="k",
    cpp_sources="torch::Tensor go(torch::Tensor x);",
    cuda_sources="""
__global__ void lanes(int* out) {
  int lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  out[threadIdx.x] = lane;
}
#if CUDA_VERSION >= 11000
__global__ void newer() {}
#endif
""",
    functions=["go"],
)
'''


def _lint(text: str, path: str = "ext.py"):
    return LINTER.lint_source(SourceFile(path, "python", text))


def _at(found, rule):
    return [
        (d.position.line, d.position.column, d.position.end_column) for d in found if d.rule == rule
    ]


def test_triple_quoted_cuda_sources_are_positioned_in_the_python_file():
    found = _lint(TRIPLE)
    assert _at(found, "inline-ptx") == [(10, 3, 53)]
    assert _at(found, "cuda-version-macro") == [(13, 5, 26)]
    line = TRIPLE.splitlines()[9]
    assert line[2:52].startswith('asm volatile("mov.u32')
    assert all("(C++ in a Python string)" in d.message for d in found if d.rule != "parse-error")


def test_fix_inside_a_triple_quoted_string_keeps_the_python_file_valid():
    outcome = fix_source(
        SourceFile("ext.py", "python", TRIPLE), LINTER.lint_source, True, LINTER.syntax_error
    )
    assert outcome.refused is None
    # A kernel ROCm can run: the (unsafe) fix lets ROCm take the branch, never a CUDA-only guard.
    assert "#if CUDA_VERSION >= 11000 || defined(USE_ROCM)" in outcome.fixed
    ast.parse(outcome.fixed)
    again = fix_source(SourceFile("ext.py", "python", outcome.fixed), LINTER.lint_source, True)
    assert again.fixed == outcome.fixed


def test_escaped_one_line_string_positions_and_fix():
    text = (
        "from torch.utils.cpp_extension import load_inline\n"
        'SRC = "int f();\\n#if CUDA_VERSION >= 11000\\nint g();\\n#endif\\n"\n'
        'load_inline("m", cpp_sources=[SRC], cuda_sources=[])\n'
    )
    found = _lint(text)
    # The comparison starts after `SRC = "int f();\\n#if `: 21 characters into line 2.
    assert _at(found, "cuda-version-macro") == [(2, 22, 43)]
    fixed = fix_source(SourceFile("m.py", "python", text), LINTER.lint_source, True).fixed
    assert ast.literal_eval(fixed.splitlines()[1].split("=", 1)[1].strip()).splitlines()[1] == (
        "#if CUDA_VERSION >= 11000 || defined(USE_ROCM)"
    )


def test_module_level_kernel_strings_and_raw_strings():
    text = (
        'KERNEL = r"""\n'
        "#include <cuda_runtime.h>\n"
        "__global__ void k(float* x) { int lane = threadIdx.x & 31; x[lane] = 0; }\n"
        '"""\n'
    )
    found = _lint(text, "kernels.py")
    assert _at(found, "warp-size-32") == [(3, 56, 58)]
    # Not a load_inline source, so not torch-built: the include needs a port (a warning).
    include = [d for d in found if d.rule == "hip-include"]
    assert include and include[0].severity.value == "warning"


def test_f_strings_bytes_and_other_strings_are_left_alone():
    text = (
        "from torch.utils.cpp_extension import load_inline\n"
        "N = 32\n"
        'load_inline("m", cpp_sources=f"#if CUDA_VERSION >= {N}\\n#endif\\n")\n'
        'DOC = "the asm volatile mov.u32 trick and __global__ kernels"\n'
    )
    assert [d for d in _lint(text) if d.rule != "parse-error"] == []


def test_no_edit_lands_on_an_escape_sequence():
    text = (
        "from torch.utils.cpp_extension import load_inline\n"
        'load_inline("m", cpp_sources="#include \\x3ccuda_runtime.h>\\n")\n'
    )
    found = _lint(text)
    assert all(d.fix is None or all(e.start >= 0 for e in d.fix.edits) for d in found)
    fixed = fix_source(SourceFile("m.py", "python", text), LINTER.lint_source, True).fixed
    ast.parse(fixed)
    assert "\\x3c" in fixed


def test_kernel_templates_handed_to_a_jit_are_linted_without_parse_noise():
    text = (
        "def make(jit, dtype):\n"
        "    return jit.generate_kernel({'dtype': dtype}, '''\n"
        "    #define __dtype @dtype@\n"
        '    extern "C" __global__ __launch_bounds__(1024) void k(__dtype* x) {\n'
        "      unsigned m = __activemask();\n"
        "      x[0] = __shfl_down_sync(m, x[0], 16);\n"
        "    }\n"
        "    ''')\n"
        "NOTE = 'the __global__ keyword marks kernels'\n"
    )
    found = _lint(text, "jit.py")
    assert {d.position.line for d in found if d.rule == "warp-mask-32bit"} == {5, 6}
    assert not [d for d in found if d.rule == "parse-error"]
    assert all(d.position.line != 9 for d in found)


JIT_KERNEL = """from tutel_like import create_cuda_kernel

reduce = create_cuda_kernel('''
extern "C" __global__ void k(float *x) {
  float v = x[blockIdx.x];
#if !defined(__HIPCC__)
  unsigned int mask = __activemask();
  v += __shfl_down_sync(mask, v, 16, 32);
#else
  v += 1.0f;
#endif
  x[blockIdx.x] = v;
}
''')
"""


def test_a_kernel_string_is_preprocessed_as_the_gpu_compiler_sees_it():
    """A string that defines a kernel goes to hipcc or hiprtc on ROCm (never the plain C++
    compiler): its `#if !defined(__HIPCC__)` branch is one no ROCm compile takes."""
    found = _lint(JIT_KERNEL, "moe.py")
    shuffles = [d for d in found if d.rule == "warp-mask-32bit"]
    assert {d.position.line for d in shuffles} == {7, 8}
    assert all("the HIP pass skips this" in d.guarded for d in shuffles)
    assert "`#if !defined(__HIPCC__)` at line 6" in shuffles[0].guarded


def test_a_jit_kernel_string_is_not_told_to_include_the_runtime_header():
    """The run-time compiler's driver supplies the prelude (hiprtc's builtins; a JIT that
    writes the string to a file adds its include): `blockIdx` alone says nothing."""
    found = _lint(JIT_KERNEL, "moe.py")
    assert not [d for d in found if d.rule == "hip-include"]
    # A .cu file with the same code is compiled as it is: the runtime header is missing.
    body = JIT_KERNEL.split("'''")[1]
    cu = LINTER.lint_source(SourceFile("moe.cu", "cuda", body))
    assert [d.rule for d in cu if d.rule == "hip-include"] == ["hip-include"]
