"""Every fix that adds a `!defined(<HIP macro>)` condition keeps, on ROCm, the code ROCm can run.

A CUDA-only guard is right only around code ROCm cannot run (a name HIP lacks, inline PTX, an
`#error`, nothing), where ROCm compiles another side of the `#if`, or where the CUDA build
skips the branch too (`!defined(__CUDACC__)` -> `... && !defined(__HIPCC__)`: hipcc, a device
compiler, then does what nvcc does). The principle: ROCm compiles what nvcc compiles, unless
ROCm cannot run it. The test enumerates every
such fix the rule catalogue's examples produce (safe and unsafe) and fixtures of its own, and
checks each guarded branch; it also checks that no line a HIP pass compiled before is dropped
after, unless it is CUDA-only."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cuda2rocm.catalogue import load_catalogue
from cuda2rocm.context import preprocessor
from cuda2rocm.discover import language_of
from cuda2rocm.engine import Linter
from cuda2rocm.fixer import fix_source
from cuda2rocm.rocm_runs import cuda_only_reason
from cuda2rocm.sources import SourceFile

RULES = load_catalogue()
LINTABLE = [r for r in RULES if r.step != 0]
HIP_MACROS = ("__HIP__", "__HIP_PLATFORM_AMD__", "__HIP_PLATFORM_HCC__", "__HIPCC__", "USE_ROCM")
_NOT_HIP = re.compile(r"!\s*defined\s*\(?\s*(" + "|".join(HIP_MACROS) + r")\b")
_NESTING = re.compile(r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b", re.M)

#: Fixtures of our own: the issue's kernel launch, in a plain and a torch-built file.
OWN = {
    "launch.cu": """\
#include <cuda_runtime.h>
__global__ void add_one(int* p) { p[threadIdx.x] += 1; }
void go(int* p, cudaStream_t s) {
#if CUDA_VERSION >= 11000
  add_one<<<1, 32, 0, s>>>(p);
#endif
#if CUDART_VERSION > 10020
  cudaMemsetAsync(p, 0, 4, s);
#endif
}
""",
    "csrc/torch_launch.cu": """\
#include <torch/extension.h>
__global__ void twice(float* p) { p[threadIdx.x] *= 2.f; }
void go(float* p) {
#if defined(CUDA_VERSION) && CUDA_VERSION >= 11020
  twice<<<1, 64>>>(p);
#endif
}
""",
}


def _cases():
    for spec in RULES:
        for example in spec.invalid:
            if "cuda" in spec.languages:
                yield pytest.param(spec, example.path, example.code, id=f"{spec.id}:{example.name}")
    for path, code in OWN.items():
        yield pytest.param(None, path, code, id=f"own:{path}")


def _fixed(spec, path: str, code: str, unsafe: bool) -> str:
    linter = Linter([spec] if spec is not None else LINTABLE)
    source = SourceFile(path, language_of(Path(path)), code.lstrip("\n"))
    return fix_source(source, linter.lint_source, unsafe, linter.syntax_error).fixed


def _branch(text: str, line_start: int) -> tuple[str, bool]:
    """The body of the `#if`/`#elif` directive starting at `line_start`, and whether the
    chain continues with an `#else`/`#elif` (another side ROCm may compile)."""
    body_start = text.index("\n", line_start) + 1
    depth = 0
    for m in _NESTING.finditer(text, body_start):
        word = m.group(1)
        if word in ("if", "ifdef", "ifndef"):
            depth += 1
        elif word == "endif":
            if depth == 0:
                return text[body_start : m.start()], False
            depth -= 1
        elif depth == 0:
            return text[body_start : m.start()], True
    return text[body_start:], False


def _added_guards(original: str, fixed: str) -> list[int]:
    """Offsets of directive lines in `fixed` that gained a `!defined(<HIP macro>)`."""
    before = {line.strip() for line in original.splitlines()}
    out, offset = [], 0
    for line in fixed.splitlines(keepends=True):
        stripped = line.strip()
        if stripped.startswith("#") and stripped not in before and _NOT_HIP.search(stripped):
            old = _NOT_HIP.findall(stripped)
            if len(old) > sum(len(_NOT_HIP.findall(b)) for b in before if b[:8] == stripped[:8]):
                out.append(offset)
        offset += len(line)
    return out


#: What nvcc (CUDA 12.4) defines, for the device pass: enough to read the guards the fixes add.
_NVCC = {
    "__CUDACC__": 1,
    "__NVCC__": 1,
    "__CUDA_ARCH__": 800,
    "CUDA_VERSION": 12040,
    "CUDART_VERSION": 12040,
    "__CUDACC_VER_MAJOR__": 12,
}


def _nvcc_skips(directive: str) -> bool:
    """Whether nvcc's build provably skips the branch of this `#if`/`#elif` line."""
    m = re.match(r"\s*#\s*(?:el)?(if|ifdef|ifndef)\s+(.*)", directive)
    if m is None:
        return False
    word, condition = m.groups()
    if word != "if":
        condition = f"{'!' if word == 'ifndef' else ''}defined({condition.strip()})"

    def lookup(name: str) -> preprocessor.Val:
        if name in _NVCC:
            return preprocessor.Val(True, _NVCC[name], _NVCC[name])
        if name in HIP_MACROS or name.startswith("__HIP"):
            return preprocessor.UNDEFINED
        return preprocessor.UNKNOWN

    value, _ = preprocessor.evaluate(condition, lookup)
    return value is False


def _live_lines(text: str, path: str) -> set[int]:
    torch_built = "torch/" in text or path.startswith("csrc/")
    model = preprocessor.model(text, path, torch_built)
    return {n for n in range(1, text.count("\n") + 2) if model.value(n) is not False}


@pytest.mark.parametrize(("spec", "path", "code"), list(_cases()))
@pytest.mark.parametrize("unsafe", [False, True])
def test_guard_fixes_keep_what_rocm_can_run(spec, path, code, unsafe):
    original = code.lstrip("\n")
    fixed = _fixed(spec, path, original, unsafe)
    for at in _added_guards(original, fixed):
        body, has_other_side = _branch(fixed, at)
        if has_other_side:
            continue  # ROCm compiles a version of the code on the other side
        line = original.count("\n", 0, 0) + fixed.count("\n", 0, at)
        before = original.splitlines()[line] if fixed.count("\n") == original.count("\n") else ""
        if _nvcc_skips(before):
            continue  # nvcc skips it too: hipcc now does what nvcc does
        assert cuda_only_reason(body) is not None, (
            f"a CUDA-only guard around code ROCm can run:\n{fixed[at:]}"
        )
    # Nothing a HIP pass compiled before is dropped after, unless ROCm could not run it.
    if fixed.count("\n") == original.count("\n"):
        lost = _live_lines(original, path) - _live_lines(fixed, path)
        lines = original.splitlines()
        lost = {n for n in lost if not _nvcc_skips(_opening(lines, n))}
        dropped = "\n".join(lines[n - 1] for n in sorted(lost) if n <= len(lines))
        assert not lost or cuda_only_reason(dropped) is not None, dropped


def _opening(lines: list[str], n: int) -> str:
    """The directive whose branch holds line `n` (1-based), as an `#if` line ("" if none): an
    `#else` side reads as the negation of its `#if` (when no `#elif` comes between)."""
    depth, in_else = 0, False
    for k in range(n - 2, -1, -1):
        m = _NESTING.match(lines[k])
        if m is None:
            continue
        word = m.group(1)
        if word == "endif":
            depth += 1
        elif word in ("if", "ifdef", "ifndef") and depth:
            depth -= 1
        elif depth:
            continue
        elif word == "else" and not in_else:
            in_else = True
        elif word == "elif":
            return "" if in_else else lines[k]
        elif not in_else:
            return lines[k]
        else:
            rest = lines[k].split(word, 1)[1].strip()
            if word == "if":
                return f"#if !({rest})"
            return f"#{'ifndef' if word == 'ifdef' else 'ifdef'} {rest}"
    return ""


def test_the_issue_case_gets_no_cuda_only_guard():
    """`#if CUDA_VERSION >= 11000` / launch / `#endif`: no `!defined(__HIP__)`, safe or not;
    the unsafe fix lets ROCm take the branch."""
    safe = _fixed(None, "launch.cu", OWN["launch.cu"], False)
    assert "!defined(__HIP__)" not in safe
    assert "#if CUDA_VERSION >= 11000\n" in safe and "#if CUDART_VERSION > 10020\n" in safe
    unsafe = _fixed(None, "launch.cu", OWN["launch.cu"], True)
    assert "#if CUDA_VERSION >= 11000 || defined(__HIP__)" in unsafe
    assert "#if CUDART_VERSION > 10020 || defined(__HIP__)" in unsafe


def test_some_guard_fix_was_enumerated():
    """The enumeration is not vacuous: the catalogue does hold CUDA-only guard fixes."""
    found = 0
    for spec in RULES:
        for example in spec.invalid:
            if "cuda" not in spec.languages:
                continue
            original = example.code.lstrip("\n")
            found += len(_added_guards(original, _fixed(spec, example.path, original, True)))
    assert found >= 3


def test_a_branch_of_cupti_names_is_cuda_only():
    """CUPTI has no HIP counterpart (ROCm traces with roctracer, another API): a version
    branch of CUPTI enumerators gets the CUDA-only guard, never `|| defined(__HIP__)`."""
    code = (
        "#include <cupti.h>\nconst char* name(int k) {\n  switch (k) {\n"
        "#if CUDART_VERSION >= 12070\n  case CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL:\n"
        '    return "full";\n#endif\n  default:\n    return "?";\n  }\n}\n'
    )
    assert cuda_only_reason("  case CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL:\n")
    fixed = _fixed(None, "strings.cpp", code, True)
    assert "|| defined(__HIP__)" not in fixed
    assert "#if CUDART_VERSION >= 12070 && !defined(__HIP__)" in fixed
