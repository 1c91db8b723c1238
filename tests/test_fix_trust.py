"""Edits that check themselves (issue 14): every edit declares the text it replaces, the fixer
refuses a file where the span holds anything else, and spans are exact for every node shape."""

from __future__ import annotations

import ast

import libcst as cst
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from libcst.metadata import PositionProvider

from cuda2rocm.catalogue import find_rule, load_catalogue, select_rules
from cuda2rocm.engine import Linter
from cuda2rocm.fixer import fix_paths, fix_source
from cuda2rocm.frontends import python
from cuda2rocm.model import Diagnostic, Edit, Fix, Position, Safety, Severity
from cuda2rocm.sources import SourceFile

LINTER = Linter(select_rules(load_catalogue()))

REPRO = """import torch
from torch.utils.cpp_extension import CUDA_HOME, CUDAExtension

if torch.cuda.is_available() and ((CUDA_HOME is not None) or False):
    ext = CUDAExtension
"""


def _fix(text: str, path: str = "setup.py", unsafe: bool = True):
    source = SourceFile(path, "cuda" if path.endswith(".cu") else "python", text)
    return fix_source(source, LINTER.lint_source, unsafe, LINTER.syntax_error)


def test_issue_repro_parenthesised_gate_is_widened_inside_its_parentheses():
    outcome = _fix(REPRO)
    assert outcome.refused is None
    assert "((CUDA_HOME is not None or ROCM_HOME is not None) or False)" in outcome.fixed
    names = {n.id for n in ast.walk(ast.parse(outcome.fixed)) if isinstance(n, ast.Name)}
    assert {"CUDA_HOME", "ROCM_HOME"} <= names and "UDA_HOME" not in names


def test_an_edit_needs_its_original():
    with pytest.raises(TypeError):
        Edit(0, 1, "x")  # type: ignore[call-arg]
    with pytest.raises(ValueError):
        Edit(3, 3, "x", "y")


def _lying_lint(source: SourceFile) -> list[Diagnostic]:
    """A deliberately wrong rule: its edit's span is one character off its declared original."""
    found = LINTER.lint_source(source)
    at = source.text.find("CUDA_HOME is not None")
    if at >= 0:
        edit = Edit(at + 1, at + 22, "X", "CUDA_HOME is not None")
        fix = Fix(Safety.SAFE, (edit,), "wrong span")
        found.append(
            Diagnostic(
                source.path, "test-rule", "CR999", Severity.ERROR, 4, Position(4, 1, 4, 2), "x", fix
            )
        )
    return found


def test_the_fixer_refuses_an_edit_whose_span_differs_from_its_original():
    source = SourceFile("setup.py", "python", REPRO.replace("torch.cuda.is_available() and ", ""))
    outcome = fix_source(source, _lying_lint, unsafe=True)
    assert outcome.refused and "test-rule" in outcome.refused
    assert not outcome.changed and outcome.fixed == source.text
    errors = [d for d in outcome.remaining if d.rule == "internal-error"]
    assert len(errors) == 1 and "rule test-rule" in errors[0].message


def test_fix_paths_writes_nothing_when_an_edit_is_stale(tmp_path, monkeypatch):
    path = tmp_path / "setup.py"
    path.write_text(REPRO, encoding="utf-8")
    linter = Linter(select_rules(load_catalogue()))
    monkeypatch.setattr(linter, "lint_source", _lying_lint)
    report = fix_paths(linter, [tmp_path], unsafe=True)
    assert path.read_text(encoding="utf-8") == REPRO
    assert any(o.refused for o in report.outcomes)


# -- spans of every node shape a Python rule can report ------------------------------------------
class _Probe(python.PythonRule):
    pass


def _check_every_span(text: str) -> int:
    """Every editable node: the edit `replace` makes declares exactly the node's span text."""
    source = SourceFile("x.py", "python", text)
    wrapper = python.parse(source)
    probe = _Probe(find_rule("cuda-home-gate"), source, [])
    probe.context = python.FileContext(source, wrapper)
    checked = 0
    for node in wrapper.resolve(PositionProvider):
        if isinstance(node, python.EDITABLE):
            edit = probe.replace(node, "X")
            assert edit.matches(text), (type(node).__name__, edit, text[edit.start : edit.end])
            assert edit.original == probe.text(node)
            checked += 1
    return checked


EXPRESSIONS = [
    "CUDA_HOME is not None",
    "CUDA_HOME",
    "torch.version.cuda",
    "torch.version.cuda is None",
    "foo(a, b=1)",
    "a and not b",
    "x[1:2]",
    '"é→ü"',
    "café + 1",
    "[1, 2,]",
    "lambda: 0",
    "()",
]
GAPS = ["", " ", "  ", "\t", "\n", " # note é\n", "\n\t\t"]


@st.composite
def _programs(draw):
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    indent = draw(st.sampled_from(["    ", "\t", "  "]))
    expr = draw(st.sampled_from(EXPRESSIONS))
    for _ in range(draw(st.integers(0, 3))):
        expr = f"({draw(st.sampled_from(GAPS))}{expr}{draw(st.sampled_from(GAPS))})"
    lead = draw(st.sampled_from(["", '"ü" and ', "\\\n" + indent + indent]))
    header = draw(st.sampled_from(["", "# -*- coding: utf-8 -*-\n", '"""dóc"""\n', "x = '\t'\n"]))
    body = (
        f"{header}import torch\nfrom torch.utils.cpp_extension import CUDA_HOME\n\n"
        f"def f():\n{indent}if True:\n{indent}{indent}y = {lead}{expr}\n"
        f"if {expr}:\n{indent}pass\n"
    )
    return body.replace("\n", newline)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_programs())
def test_every_edit_span_is_the_node_source(text):
    try:
        compile(text, "x.py", "exec")
    except SyntaxError:
        return  # e.g. a comment inside an unparenthesised expression
    assert _check_every_span(text) > 0


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(0, 3),
    st.sampled_from(GAPS),
    st.sampled_from(["\n", "\r\n"]),
    st.sampled_from(["    ", "\t"]),
)
def test_gate_fix_keeps_the_expression_whole(levels, gap, newline, indent):
    expr = "CUDA_HOME is not None"
    for _ in range(levels):
        expr = f"({gap}{expr}{gap})"
    text = (
        "import torch\nfrom torch.utils.cpp_extension import CUDA_HOME\n\n"
        f"if torch.cuda.is_available() and {expr}:\n{indent}ext = 1\n"
    ).replace("\n", newline)
    try:
        compile(text, "x.py", "exec")
    except SyntaxError:
        return
    outcome = _fix(text)
    assert outcome.refused is None
    tree = ast.parse(outcome.fixed)
    names = [n.id for n in ast.walk(tree) if isinstance(n, ast.Name)]
    assert names.count("CUDA_HOME") == 1 and names.count("ROCM_HOME") == 1  # the test only
    test = tree.body[-1].test
    assert isinstance(test, ast.BoolOp) and isinstance(test.values[1], ast.BoolOp)
    assert ast.unparse(test.values[1]) == "CUDA_HOME is not None or ROCM_HOME is not None"


def test_cpp_edits_declare_their_original():
    text = "#include <cuda_runtime.h>\n// é\nvoid f() { cudaStream_t s; cudaMalloc(0, 0); }\n"
    source = SourceFile("k.cu", "cuda", text)
    found = LINTER.lint_source(source)
    edits = [e for d in found if d.fix for e in d.fix.edits]
    assert edits
    assert all(e.matches(text) for e in edits)
    assert any(e.original for e in edits)


def test_libcst_span_excludes_own_parentheses():
    """The fact the fix of cuda-home-gate rests on: PositionProvider covers `x`, not `((x))`."""
    wrapper = cst.MetadataWrapper(cst.parse_module("y = ((x))\n"))
    positions = wrapper.resolve(PositionProvider)
    name = wrapper.module.body[0].body[0].value
    assert (positions[name].start.column, positions[name].end.column) == (6, 7)


WARP_KERNEL = "__global__ void k(int* o) { o[threadIdx.x] = threadIdx.x & 31; }\n"


@pytest.mark.parametrize(
    "head",
    [
        "// This file is auto-generated. DO NOT EDIT.\n",
        "#include <sycl/sycl.hpp>\n",
        "// @generated by gen_kernels.py\n",
    ],
)
def test_no_compat_header_fix_in_generated_or_sycl_files(head):
    source = SourceFile("k.cu", "cuda", head + "#include <cuda_runtime.h>\n" + WARP_KERNEL)
    found = [d for d in LINTER.lint_source(source) if d.rule == "warp-size-32"]
    assert found and all(d.fix is None for d in found)
    outcome = _fix(source.text, "k.cu")
    assert "cuda2rocm" not in outcome.fixed


def test_compat_header_fix_still_offered_in_ordinary_files():
    text = "#include <cuda_runtime.h>\n" + WARP_KERNEL
    outcome = _fix(text, "k.cu")
    assert '#include "cuda2rocm_compat.h"' in outcome.fixed


# -- the compatibility header before a project header that declares a CUDA name --------------
PARAMS_H = (
    "#pragma once\nstruct CUstream_st;\nusing cudaStream_t = CUstream_st *;\n"
    "void launch(cudaStream_t s);\n"
)
MASK_KERNEL = """
__global__ void k(float* o) {
  unsigned int mask = 0xFFFFFFFFu;
  float v = o[threadIdx.x];
  for (int d = 16; d > 0; d >>= 1) v += __shfl_xor_sync(mask, v, d);
  o[threadIdx.x] = v;
}
"""


def _fix_file(path, unsafe: bool = True):
    source = SourceFile(str(path), "cuda", path.read_text(encoding="utf-8"))
    return fix_source(source, LINTER.lint_source, unsafe, LINTER.syntax_error)


def test_no_compat_header_before_a_header_that_declares_a_cuda_name(tmp_path):
    """gsplat's lidar_kernel_backward.cu: the header went first, so under hipcc its
    `#define cudaStream_t hipStream_t` turned lidar_params.h's alias into a redefinition of
    HIP's typedef (hipcc 5.2: "typedef redefinition with different types")."""
    (tmp_path / "params.h").write_text(PARAMS_H, encoding="utf-8")
    (tmp_path / "kernel.cuh").write_text('#pragma once\n#include "params.h"\n', encoding="utf-8")
    unit = tmp_path / "k.cu"
    unit.write_text('#include "kernel.cuh"\n' + MASK_KERNEL, encoding="utf-8")
    outcome = _fix_file(unit)
    assert "cuda2rocm" not in outcome.fixed  # no header, and no name that needs it
    found = [d for d in outcome.remaining if d.rule == "warp-mask-32bit"]
    assert found and all(d.fix is None for d in found)


def test_compat_header_after_a_declaring_header_is_still_offered(tmp_path):
    """The replaced runtime include comes after the declaring header: its alias is declared
    before the mapping exists, so nothing is redeclared."""
    (tmp_path / "params.h").write_text(PARAMS_H, encoding="utf-8")
    unit = tmp_path / "k.cu"
    unit.write_text('#include "params.h"\n#include <cuda_runtime.h>\n' + MASK_KERNEL)
    outcome = _fix_file(unit)
    assert '#include "params.h"\n#include "cuda2rocm_compat.h"\n' in outcome.fixed
    assert "cuda2rocm_shfl_xor_sync" in outcome.fixed


def test_no_compat_name_in_a_file_that_declares_a_cuda_name_itself(tmp_path):
    """The header may not go into such a file; a fix that writes `CUDA2ROCM_*` without it
    would not compile on either vendor."""
    unit = tmp_path / "k.cuh"
    unit.write_text(PARAMS_H + MASK_KERNEL, encoding="utf-8")
    outcome = _fix_file(unit)
    assert "cuda2rocm" not in outcome.fixed.lower()
