"""The C++/CUDA front-end and its rules on the kernel corpus: exact positions, nothing inside
comments or strings, idempotent fixes, recovery from syntax errors, build context, targets."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cuda2rocm import compat_header
from cuda2rocm.catalogue import load_catalogue
from cuda2rocm.engine import Linter
from cuda2rocm.fixer import fix_source
from cuda2rocm.frontends import cpp
from cuda2rocm.model import Severity
from cuda2rocm.sources import SourceFile

CORPUS = Path(__file__).parent / "fixtures" / "cuda"
FILES = sorted(CORPUS.glob("*.cu"))
CPP_RULES = [r for r in load_catalogue() if "cuda" in r.languages and r.step != 0]
ALL_RULES = [r for r in load_catalogue() if r.step != 0]


def source(path: Path | str, text: str | None = None) -> SourceFile:
    path = Path(path)
    return SourceFile(path.name, "cuda", path.read_text(encoding="utf-8") if text is None else text)


def opaque_spans(src: SourceFile) -> list[tuple[int, int]]:
    """Character spans of every comment and string literal, straight from tree-sitter."""
    view = cpp.parse(src)
    spans, stack = [], [view.tree.root_node]
    while stack:
        node = stack.pop()
        if node.type in ("comment", "string_literal", "char_literal", "raw_string_literal"):
            spans.append(view.span(node))
        else:
            stack.extend(node.children)
    return spans


def inside(span: tuple[int, int], spans) -> bool:
    start, end = span
    return any(s <= start and end <= e and start < e for s, e in spans)


def offsets(src: SourceFile, d) -> tuple[int, int]:
    p = d.position
    return src.lines.offset(p.line, p.column - 1), src.lines.offset(p.end_line, p.end_column - 1)


@pytest.mark.parametrize("target", ["portable", "hip"])
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_nothing_reported_or_rewritten_in_comments_or_strings(path, target):
    src = source(path)
    opaque = opaque_spans(src)
    for d in Linter(CPP_RULES, target=target).lint_source(src):
        assert not inside(offsets(src, d), opaque), d
        for edit in d.fix.edits if d.fix else ():
            assert not inside((edit.start, max(edit.end, edit.start + 1)), opaque), (d, edit)


def test_a_file_naming_everything_only_in_comments_and_strings_is_clean():
    src = source(CORPUS / "comments_strings.cu")
    assert Linter(ALL_RULES).lint_source(src) == []


@pytest.mark.parametrize("target", ["portable", "hip"])
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_fixes_are_idempotent(path, target):
    linter = Linter(CPP_RULES, target=target)
    first = fix_source(source(path), linter.lint_source, True, linter.syntax_error)
    assert first.refused is None
    again = fix_source(source(path, first.fixed), linter.lint_source, True, linter.syntax_error)
    assert again.fixed == first.fixed


def test_a_syntax_error_is_reported_and_the_file_still_scanned():
    src = source(CORPUS / "broken" / "syntax_error.cu")
    found = Linter(ALL_RULES).lint_source(src)
    rules = {d.rule for d in found}
    assert "parse-error" in rules
    assert "warp-size-32" in rules  # inside the broken function
    stream = [d for d in found if d.rule == "hip-stream"]
    assert stream and stream[0].position.line >= 8  # after the error


def test_positions_are_characters_in_non_ascii_files():
    src = source(CORPUS / "non_ascii.cu")
    found = [d for d in Linter(CPP_RULES).lint_source(src) if d.rule == "warp-size-32"]
    texts = {src.text[slice(*offsets(src, d))] for d in found}
    assert texts == {"31", "threadIdx.x >> 5"}


def test_build_context_decides_severity_and_fix():
    body = "void f(cudaStream_t s) { cudaStreamSynchronize(s); }\n"
    plain = Linter(CPP_RULES).lint_source(source("plain.cu", "#include <cstdio>\n" + body))
    torch = Linter(CPP_RULES).lint_source(source("ext.cu", "#include <torch/extension.h>\n" + body))
    plain = [d for d in plain if d.rule == "hip-stream"]
    torch = [d for d in torch if d.rule == "hip-stream"]
    assert {d.severity for d in plain} == {Severity.WARNING} and all(d.fix for d in plain)
    assert torch == []  # torch's hipify renames them: nothing to do, so no finding


def test_hip_target_renames_tokens_exactly():
    text = (
        "#include <cuda_runtime.h>\n"
        "// cudaStream_t stays in this comment\n"
        '#define CHECK(x) do { if ((x) != cudaSuccess) puts("cudaSuccess?"); } while (0)\n'
        "void f(cudaStream_t s) { CHECK(cudaStreamSynchronize(s)); }\n"
    )
    linter = Linter(CPP_RULES, target="hip")
    fixed = fix_source(source("x.cu", text), linter.lint_source, False, linter.syntax_error).fixed
    assert fixed == (
        "#include <hip/hip_runtime.h>\n"
        "#include <math.h>  // cuda_runtime.h includes it; hip_runtime.h does not\n"
        "// cudaStream_t stays in this comment\n"
        '#define CHECK(x) do { if ((x) != hipSuccess) puts("cudaSuccess?"); } while (0)\n'
        "void f(hipStream_t s) { CHECK(hipStreamSynchronize(s)); }\n"
    )


def test_a_failing_rule_becomes_an_internal_error(monkeypatch):
    linter = Linter(CPP_RULES)

    def boom(self):
        raise RuntimeError("boom")

    monkeypatch.setattr(linter._checks["launch-bounds"], "check", boom)
    found = linter.lint_source(source("k.cu", "__global__ void __launch_bounds__(64, 2) k() {}\n"))
    assert [d.rule for d in found if d.rule == "internal-error"] == ["internal-error"]


def test_prefilter_skips_files_without_tokens():
    linter = Linter(CPP_RULES)
    assert linter.applicable("cuda", b"int add(int a, int b) { return a + b; }\n") == []


def test_prefilter_keeps_a_rule_whose_token_is_inside_a_longer_found_token():
    """`cublas` (vendor-blas-dnn) contains hip-stream's `cu`: a file whose only `cu` is in
    `cublasHandle_t` still runs hip-stream (the alternation reports only the longest)."""
    linter = Linter(CPP_RULES)
    rules = {r.id for r in linter.applicable("cuda", b"void f(cublasHandle_t h);\n")}
    assert {"hip-stream", "vendor-blas-dnn"} <= rules


def test_compat_header_maps_exactly_the_names_used():
    text = "#include <cuda_runtime.h>\nvoid f(cudaStream_t s) { cudaStreamSynchronize(s); }\n"
    used = compat_header.used_names(text)
    assert used == {"cudaStream_t", "cudaStreamSynchronize"}  # headers are mapped in place
    header = compat_header.render(used)
    assert "#define cudaStream_t hipStream_t" in header
    assert "#define cudaStreamSynchronize hipStreamSynchronize" in header
    assert "cudaMalloc" not in header
    assert compat_header.recorded_names(header) == used


def test_compat_header_plan_keeps_recorded_names_and_lands_beside_its_users():
    fixed = '#include "cuda2rocm_compat.h"\nvoid f(cudaEvent_t e);\n'
    existing = compat_header.render({"cudaMalloc"})
    plan = compat_header.plan(
        {"src/a.cu": (fixed, fixed), "src/sub/b.cu": ("int x;\n", "int x;\n")},
        existing={"src/cuda2rocm_compat.h": existing},
    )
    assert list(plan) == ["src/cuda2rocm_compat.h"]
    names = compat_header.recorded_names(plan["src/cuda2rocm_compat.h"])
    assert {"cudaMalloc", "cudaEvent_t"} <= names


@pytest.mark.parametrize(
    "code",
    [
        "template <typename T>\n__global__ void C10_LAUNCH_BOUNDS_1(256) k(T* x) { x[0] = 0; }\n",
        "struct __align__(16) V { float a[4]; };\n",
        "auto f = [] __device__ (float x) { return x; };\n",
        "__global__ void k(const float* __restrict__ a) { extern __shared__ float s[]; }\n",
    ],
)
def test_common_cuda_idioms_are_not_parse_errors(code):
    found = Linter(ALL_RULES).lint_source(source("k.cu", code + "// cudaStream_t\n"))
    assert cpp.syntax_error(source("k.cu", code)) is None
    assert [d for d in found if d.rule == "parse-error"] == []


NOISE = [
    "// cudaMalloc(&p, 4); __shfl_down_sync(0xffffffff, v, 16); lane & 31\n",
    '/* #if __CUDA_ARCH__ >= 800 asm("mov.u32 %0, %%laneid;") */\n',
    'static const char* kNoise = "cudaStream_t __ballot_sync(0xffffffff, p) >> 5";\n',
]


@given(lines=st.lists(st.integers(min_value=0, max_value=400), max_size=6), which=st.data())
@settings(max_examples=40, deadline=None)
def test_cuda_names_in_added_comments_and_strings_change_no_finding(lines, which):
    """Insert comments/strings full of CUDA spellings between lines: the same findings remain."""
    path = CORPUS / "warp_reduce.cu"
    original = path.read_text(encoding="utf-8").splitlines(keepends=True)
    noisy = list(original)
    for line in sorted({min(n, len(original)) for n in lines}, reverse=True):
        noisy.insert(line, which.draw(st.sampled_from(NOISE)))
    linter = Linter(CPP_RULES)

    def summary(text):
        return sorted((d.rule, d.message) for d in linter.lint_source(source("w.cu", text)))

    assert summary("".join(noisy)) == summary("".join(original))


def test_generated_files_are_not_linted():
    header = compat_header.render({"cuda_runtime.h", "cudaStream_t", "cudaMalloc"})
    assert Linter(ALL_RULES).lint_source(source("cuda2rocm_compat.h", header)) == []
    hipified = "// !!! This is a file automatically generated by hipify!!!\n#define WARP_SIZE 32\n"
    assert Linter(ALL_RULES).lint_source(source("k_hip.cu", hipified)) == []


def test_the_generated_marker_is_the_one_the_header_writes():
    assert compat_header.NAMES_LINE in cpp.GENERATED_MARKERS


def test_odd_literals_do_not_break_the_rules():
    code = (
        '#include "cuda2rocm_compat.h"\n__global__ void k(int* x) {\n'
        "  int t = threadIdx.x & 0x1f; x[t] = 0x1F + 010 + 0b11 + 1e5 + 0.5f;\n}\n"
    )
    found = Linter(CPP_RULES).lint_source(source("k.cu", code))
    assert [d.rule for d in found] == ["warp-size-32"]  # 0x1f == 31


def _walked(view: cpp.CppView) -> dict[str, list]:
    """What a preorder walk over every node files: never inside comments and strings, includes
    filed but not entered (`#include MACRO`), asm statements filed but not entered."""
    kinds = {
        "identifiers": {
            "identifier",
            "type_identifier",
            "namespace_identifier",
            "field_identifier",
        },
        "numbers": {"number_literal"},
        "calls": {"call_expression"},
        "includes": {"preproc_include"},
        "conditions": {"preproc_if", "preproc_elif", "preproc_ifdef", "preproc_elifdef"},
        "defines": {"preproc_def", "preproc_function_def"},
        "asm": {"gnu_asm_expression"},
        "declarations": {"declaration", "field_declaration"},
        "loops": {"for_statement"},
        "functions": {"function_definition"},
        "launch_bounds": {"launch_bounds"},
        "using": {"using_declaration"},
    }
    filed: dict[str, list] = {name: [] for name in kinds}
    filed["first_error"] = []
    stack = [view.tree.root_node]
    while stack:
        node = stack.pop()
        if node.type in ("comment", "string_literal", "raw_string_literal", "char_literal"):
            continue
        if node.is_error or node.is_missing:
            filed["first_error"].append(node)
        for name, types in kinds.items():
            if node.type in types:
                filed[name].append(node)
        if node.type not in ("preproc_include", "gnu_asm_expression"):
            stack.extend(reversed(node.children))
    filed["identifiers"].sort(key=lambda n: n.start_byte)
    filed["numbers"].sort(key=lambda n: n.start_byte)
    filed["first_error"] = filed["first_error"][:1]
    return filed


WALK_CASES = [
    "#include HEADER_MACRO\n#include <cuda.h>\nint x = 1; // cudaMalloc(y)\n",
    'void f() { asm volatile("mov.u32 %0, %1;" : "=r"(a) : "r"(b + 2)); g(h(1)(2)); }\n',
    "void f() { int a = 3 + ; if (x { y(1); } }\n",  # errors and missing nodes
    "#define M(a) foo(a, 1) /* c */\n#if defined(X) && Y > 2\nint a;\n#elif Z\n#endif\n",
    "struct S { int a = 0x10; using T = int; };\nfor_each(v, [](int i) { return i; });\n",
    "char c = 'x'; auto s = R\"(int y = 2;)\"; template <int N> __global__ void k() {}\n",
]


@pytest.mark.parametrize(
    "text",
    [*WALK_CASES, *(p.read_text(encoding="utf-8") for p in FILES)],
    ids=[*(f"case{i}" for i in range(len(WALK_CASES))), *(p.name for p in FILES)],
)
def test_the_query_files_what_a_walk_over_every_node_files(text):
    view = cpp.parse(SourceFile("x.cu", "cuda", text))
    walked = _walked(view)
    for name, nodes in walked.items():
        if name == "includes":
            got = [i.node for i in view.includes]
            nodes = [n for n in nodes if n.child_by_field_name("path") is not None]
            nodes = [n for n in nodes if n.child_by_field_name("path").type != "identifier"]
        elif name == "conditions":
            got = [node for node, _ in view.conditions]
        elif name == "first_error":
            got = [] if view.first_error is None else [view.first_error]
        else:
            got = getattr(view, name)
        assert [(n.type, n.start_byte, n.end_byte) for n in got] == [
            (n.type, n.start_byte, n.end_byte) for n in nodes
        ], name
