"""cuda-version-macro: vendor version comparisons (`CUDA_VERSION`, `CUDART_VERSION`,
`CUBLAS_VER_MAJOR`, `__CUDACC_VER_MAJOR__`, `CCCL_MAJOR_VERSION`, ...: VERSION_MACRO) in
preprocessor conditions.

The numbers do not map to ROCm: torch's hipify rewrites CUDA_VERSION to TORCH_HIP_VERSION
(ROCm major*100+minor, e.g. 702), and plain hipcc leaves it undefined (0), so `< 12000` is
true and `>= 11000` false on ROCm, whatever the ROCm version supports. The safe fix, from
PyTorch's HIP notes, makes the CUDA-version branch CUDA-only: `(... && !defined(USE_ROCM))` in
torch extensions, `!defined(__HIP__)` (defined by HIP-Clang itself) elsewhere. Conditions that
already mention a HIP or ROCm macro are taken to handle ROCm and are left alone. A condition
with code on both sides (`#else`/`#elif`, see `cpp.has_fallback`) is info: ROCm compiles one
version of the code either way.
"""

from __future__ import annotations

import re

from cuda2rocm.frontends.cpp import (
    HIP_MACROS,
    CppRule,
    has_fallback,
    hip_excluded,
    hip_taken,
    taken_branches,
)
from cuda2rocm.model import Safety, Severity
from cuda2rocm.rocm_runs import cuda_only_reason

#: The vendor version macros of CUDA and its libraries (cuda.h, cuda_runtime_api.h,
#: cublas_api.h's CUBLAS_VER_MAJOR, cusparse.h, cufft.h, curand.h, cusolver_common.h, CCCL's
#: cuda/version CCCL_MAJOR_VERSION, nvcc's __CUDACC_VER_MAJOR__): none is defined by hipcc or by
#: a ROCm library header (HIP 5.2's headers define HIP_VERSION*, hipBLAS hipblasVersionMajor),
#: so under hipcc each is 0 in a test. Not here: CUDNN_* (cudnn-version-gate), NCCL_* (RCCL
#: defines NCCL_VERSION_CODE with NCCL's numbering), THRUST_VERSION (rocThrust defines it).
VERSION_MACRO = re.compile(
    r"^(?:(?:CUDA|CUDART|CUBLAS|CUBLASLT|CUSPARSE|CUSOLVER|CUFFT|CURAND|NVRTC|CUPTI|CCCL)_"
    r"(?:VERSION|VER_MAJOR|VER_MINOR|VER_PATCH|VER_BUILD|MAJOR_VERSION|MINOR_VERSION"
    r"|PATCH_VERSION)|__CUDACC_VER_(?:MAJOR|MINOR|BUILD)__)$"
)


class _Versions:
    """`name in VERSIONS` for every vendor version macro (VERSION_MACRO)."""

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and VERSION_MACRO.match(name) is not None


VERSIONS = _Versions()
COMPARISONS = frozenset({"<", "<=", ">", ">=", "==", "!="})
ROCM_AWARE = HIP_MACROS | {"ROCM_VERSION", "HIP_VERSION", "TORCH_HIP_VERSION", "USE_ROCM"}


class Rule(CppRule):
    def check(self) -> None:
        self._conditions()
        self._values()
        self._unparsed_conditions()

    # -- version macros used as values --------------------------------------------------------
    def _values(self) -> None:
        """`return CUDA_VERSION;`: hipcc defines none of these macros, so the use does not
        compile (checked with hipcc 5.2.3: "use of undeclared identifier"); torch's hipify
        turns CUDA_VERSION into TORCH_HIP_VERSION, which torch's extension build does not
        define either."""
        view = self.view
        table: dict[str, str] = self.spec.tables["value_macros"]
        spans = [view.span(cond) for _, cond in view.conditions]
        uses = [(n, view.text(n), view.span(n)) for n in view.identifiers]
        uses += [(None, t.name, (t.start, t.end)) for t in view.macro_tokens]
        lines: set[int] = set()
        used: set[str] = set()
        for node, name, (start, end) in sorted(uses, key=lambda u: u[2]):
            if name not in VERSIONS or any(a <= start and end <= b for a, b in spans):
                continue
            if _directive_at(view.source.text, start):
                continue  # an `#if` the parser kept inside an expression: a condition
            if (
                node is not None
                and node.parent is not None
                and node.parent.type
                in (
                    "preproc_def",
                    "preproc_function_def",
                    "preproc_call",
                )
            ):
                continue  # the macro's own #define (a header that provides it), or #undef
            line = view.source.lines.position(start, end).line
            if line in lines:
                continue  # one finding per line
            if node is not None and (hip_excluded(view, node) or self._tested(node, name)):
                continue
            if node is None and self._defined_in_macro_guard(start, name):
                continue
            note = (
                " (torch's hipify renames it TORCH_HIP_VERSION, which its extension build does "
                "not define either)"
                if name == "CUDA_VERSION" and view.torch_built
                else ""
            )
            lines.add(line)
            used.add(name)
            self.report(
                (start, end),
                f"`{name}` used as a value: hipcc does not define it, so this line does not "
                f"compile on ROCm{note}; "
                + table.get(name, "guard the use under __HIP_PLATFORM_AMD__ (or USE_ROCM)"),
                severity=Severity.ERROR,
            )
        self._version_only_includes(used)

    def _version_only_includes(self, used: set[str]) -> None:
        """`#include <cuda.h>` kept only to read CUDA_VERSION is half of the same edit: the ROCm
        build reads HIP_VERSION from <hip/hip_version.h> instead (HIP 5.2 ships that header;
        hip_runtime.h includes it). A note, since torch's hipify maps the include itself."""
        if not used:
            return
        view = self.view
        code = _COMMENT.sub(" ", view.source.text)
        others = {m.group(0) for m in _CUDA_API.finditer(code)} - set(
            self.spec.tables["value_macros"]
        )
        if others:
            return  # the header provides more than the version here
        for inc in view.includes:
            provides = _VERSION_HEADERS.get(inc.name)
            if (
                provides is None
                or not (provides & used)
                or hip_excluded(view, (inc.start, inc.end))
            ):
                continue
            self.report(
                (inc.start, inc.end),
                f"<{inc.name}> is included here only for {', '.join(sorted(provides & used))}; "
                "on ROCm include <hip/hip_version.h> and use HIP_VERSION (under "
                "__HIP_PLATFORM_AMD__ / USE_ROCM)",
                severity=Severity.INFO,
            )

    def _tested(self, node, name: str) -> bool:
        """Inside `#ifdef NAME` / `#if defined(NAME)`: left out wherever NAME is undefined."""
        view = self.view
        for parent in taken_branches(node):
            head = view.text(parent.child(0)).strip()
            cond = parent.child_by_field_name("name") or parent.child_by_field_name("condition")
            text = view.text(cond) if cond is not None else ""
            if head in ("#ifdef", "#elifdef") and text == name:
                return True
            if head in ("#if", "#elif") and f"defined({name})" in text.replace(" ", ""):
                return True
        return False

    def _defined_in_macro_guard(self, start: int, name: str) -> bool:
        for node in self.view.defines:
            a, b = self.view.span(node)
            if a <= start < b:
                return hip_excluded(self.view, node) or self._tested(node, name)
        return False

    def _unparsed_conditions(self) -> None:
        """`#if CUDART_VERSION >= 13000` inside a call's argument list (a
        `gpuMemAdvise(p, n, advice,` / `#if ... #else ... #endif` / `));`): the parser keeps
        such a directive as tokens of the expression, so `_conditions` never sees it. Read from
        the text: a condition that names a ROCm macro is left alone; otherwise the comparison
        is reported as in `_conditions` (info when the `#if` has an `#else`/`#elif`), without a
        fix."""
        view = self.view
        text = view.source.text
        spans = [view.span(cond) for _, cond in view.conditions]
        for m in _DIRECTIVE.finditer(text):
            condition = _COMMENT.sub(" ", m.group(2))
            start = m.start(2) + len(m.group(2)) - len(m.group(2).lstrip())
            if any(a <= start < b for a, b in spans):
                continue
            words = set(re.findall(r"\w+", condition))
            version = next((v for v in sorted(words) if v in VERSIONS), None)
            if version is None or words & ROCM_AWARE:
                continue
            if not re.search(
                rf"\b{version}\s*(?:[<>]=?|[!=]=)|(?:[<>]=?|[!=]=)\s*{version}\b", condition
            ):
                continue
            guard = "!defined(USE_ROCM)" if view.torch_built else "!defined(__HIP__)"
            message = _message(version, guard)
            severity = None
            if _has_alternative(text, m.end()):
                severity = Severity.INFO
                message += "; ROCm compiles the other side of this `#if`, so nothing is lost"
            end = m.start(2) + len(m.group(2).rstrip())
            self.report((m.start(), end), message, severity=severity)

    # -- version comparisons in #if ------------------------------------------------------------
    def _with_error(self, branch, node) -> tuple[int, int]:
        """The comparison, through the `#error` it guards (`#if CUDA_VERSION < 8000` /
        `#error ...`: under hipcc the test is true and the build stops there)."""
        start, end = self.view.span(node)
        error = _error_directive(self.view, branch)
        if error is not None:
            a, b = self.view.span(error)
            end = a + len(self.view.source.text[a:b].rstrip())
        return start, end

    def _conditions(self) -> None:
        view = self.view
        for branch, cond in view.conditions:
            idents = {view.text(n) for n in _walk(cond) if n.type == "identifier"}
            if not any(v in VERSIONS for v in idents):
                continue
            if idents & ROCM_AWARE:
                continue
            if "||" in view.text(cond) and hip_taken(view, branch):
                continue  # `CUDA_VERSION >= 9000 || defined(<ROCm macro>)`: true on ROCm
            if _nvcc_only_conjunct(view, cond):
                continue  # `defined(__CUDA_ARCH__) && ...`: false on ROCm whatever the version
            guard = "!defined(USE_ROCM)" if view.torch_built else "!defined(__HIP__)"
            for node in _walk(cond):
                if node.type != "binary_expression":
                    continue
                op = node.child_by_field_name("operator")
                if op is None or view.text(op) not in COMPARISONS:
                    continue
                sides = (node.child_by_field_name("left"), node.child_by_field_name("right"))
                names = [view.text(s) for s in sides if s is not None and s.type == "identifier"]
                version = next((n for n in names if n in VERSIONS), None)
                if version is None:
                    continue
                text = view.text(node)
                new = f"{text} && {guard}" if node == cond else f"({text} && {guard})"
                message = _message(version, guard)
                # Safe only where it changes nothing on ROCm: the comparison is already false
                # there (0 under plain hipcc, a ROCm version such as 702 after torch's
                # hipify). Where it is true (`< 13000`), ROCm takes this (older-API) branch
                # today and the guard would send it to the other one: no fix.
                where = self._with_error(branch, node)
                # A branch that opens with `#error` stops the ROCm build today: sending ROCm
                # away from it is the point of the fix, so it stays.
                stops = _error_directive(view, branch) is not None
                # `#if CUDART_VERSION >= X newer-API #else older-API #endif`: whichever side the
                # misread version picks, ROCm compiles a version of the code (the older-API
                # side for `>=`, the tested side for `<`): info, the fixes unchanged.
                severity = Severity.INFO if has_fallback(view, branch) else None
                if severity is not None:
                    message += "; ROCm compiles the other side of this `#if`, so nothing is lost"
                true_on_rocm = _true_on_rocm(view, node, sides, version)
                if not true_on_rocm and node == cond and _rocm_branch_follows(view, branch):
                    # `#if CUDART_VERSION >= 12000 <cuda_fp8.h> #elif defined(USE_ROCM) ...
                    # <hip/hip_fp8.h>`: false on ROCm, which goes on to its own branch.
                    break
                if true_on_rocm and not stops:
                    self.report(
                        where,
                        message + " (no automatic fix: ROCm takes this branch now)",
                        severity=severity,
                    )
                    continue
                if node == cond and not stops:
                    # False on ROCm: the finding spans the branch ROCm skips, so the code a
                    # porting engineer must look at (it never builds on ROCm) is in view.
                    end = _body_end(view, branch)
                    if end is not None and end > where[1]:
                        lines = view.source.text.count("\n", where[0], end)
                        where = (where[0], end)
                        message += f"; ROCm skips the {lines} line(s) of this branch"
                fix = self.fix(self.replace(node, new), description=f"add {guard}")
                if not stops and severity is None:
                    # The guard would state that the branch is CUDA-only: right only when ROCm
                    # could not run it anyway (rocm_runs). A kernel launch or a call HIP maps
                    # is code ROCm should take, not lose for good with the finding silenced.
                    reason = cuda_only_reason(_body_text(view, branch, cond))
                    if reason is None:
                        fix, message = self._take_on_rocm(branch, node, cond, version, message)
                    else:
                        message += f"; {reason}, so the guard loses nothing on ROCm"
                self.report(where, message, fix, severity=severity)

    def _take_on_rocm(self, branch, node, cond, version: str, message: str):
        """The branch holds code ROCm can run: no CUDA-only guard. Where the comparison is the
        whole condition (`_whole`) and the chain tests no platform yet (`_platform_tested`),
        the unsafe fix lets ROCm take the branch (`|| defined(__HIP__)`, or `USE_ROCM` in
        torch builds): the code it holds must then build and work with HIP."""
        side = "defined(USE_ROCM)" if self.view.torch_built else "defined(__HIP__)"
        message = message.replace(
            "make this branch CUDA-only with", "do not make this branch CUDA-only with"
        )
        message += (
            "; the branch holds code ROCm can run (HIP has every name it uses), so ROCm "
            f"should take it: `|| {side}` or a ROCm version test"
        )
        if not _whole(self.view, cond, node, version) or self._platform_tested(branch):
            return None, message
        text = self.view.text(cond)
        edit = self.replace(cond, f"{text} || {side}")
        return self.fix(edit, description=f"add || {side}", safety=Safety.UNSAFE), message

    def _platform_tested(self, branch) -> bool:
        """The condition of `branch`, or of an arm before it in its `#if` chain, names a
        platform test (the rule's `platform_tests`)."""
        view = self.view
        tests = frozenset(self.spec.tables.get("platform_tests", ()))
        arm = branch
        while arm is not None and arm.type in _CHAIN:
            cond = arm.child_by_field_name("condition") or arm.child_by_field_name("name")
            if (
                cond is not None
                and {view.text(n) for n in _walk(cond) if n.type == "identifier"} & tests
            ):
                return True
            arm = arm.parent if arm.type in ("preproc_elif", "preproc_elifdef") else None
        return False


_ROCM_VALUES = (0, 500, 702, 1000)
_CHAIN = ("preproc_if", "preproc_ifdef", "preproc_elif", "preproc_elifdef")


def _bare(node):
    """`node` without the parentheses around it."""
    while node is not None and node.type == "parenthesized_expression" and node.named_children:
        node = node.named_children[0]
    return node


def _whole(view, cond, node, version: str) -> bool:
    """The comparison is the whole condition: alone, in parentheses, or after a
    `defined(<the same macro>) &&` that only keeps the test off where it is undefined."""
    bare = _bare(cond)
    if bare == node:
        return True
    if bare is None or bare.type != "binary_expression":
        return False
    op = bare.child_by_field_name("operator")
    if op is None or view.text(op) != "&&":
        return False
    left, right = _bare(bare.child_by_field_name("left")), _bare(bare.child_by_field_name("right"))
    guard = "".join(view.text(left).split()) if left is not None else ""
    return right == node and guard in (f"defined({version})", f"defined{version}")


def _message(version: str, guard: str) -> str:
    why = (
        "torch hipifies it to TORCH_HIP_VERSION, plain hipcc leaves it 0"
        if version == "CUDA_VERSION"
        else "neither hipcc nor a ROCm library defines it, so it is 0 in the test"
    )
    return (
        f"`{version}` comparisons do not mean a CUDA version on ROCm ({why}); make this "
        f"branch CUDA-only with `{guard}`, or add a ROCm version test"
    )


_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(if|elif)\b([^\n]*)", re.M)
_NESTING = re.compile(r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b", re.M)


def _directive_at(text: str, offset: int) -> bool:
    """Whether `offset` lies on an `#if`/`#elif` line."""
    start = text.rfind("\n", 0, offset) + 1
    return bool(re.match(r"[ \t]*#[ \t]*(?:if|elif)\b", text[start:offset]))


def _has_alternative(text: str, offset: int) -> bool:
    """Whether the `#if` whose line ends at `offset` has an `#else`/`#elif` of its own."""
    depth = 0
    for m in _NESTING.finditer(text, offset):
        word = m.group(1)
        if word in ("if", "ifdef", "ifndef"):
            depth += 1
        elif word == "endif":
            if depth == 0:
                return False
            depth -= 1
        elif depth == 0:
            return True
    return False


# The CUDA headers that define each version macro (CUDA 13: cuda.h defines CUDA_VERSION,
# cuda_runtime_api.h CUDART_VERSION, which cuda_runtime.h includes; g++ -I cuda/include).
_VERSION_HEADERS = {
    "cuda.h": frozenset({"CUDA_VERSION"}),
    "cuda_runtime_api.h": frozenset({"CUDART_VERSION"}),
    "cuda_runtime.h": frozenset({"CUDART_VERSION"}),
}
_CUDA_API = re.compile(r"\b(?:cu[A-Z]\w*|CU[A-Z_]\w*|cuda[A-Z]\w*|__cuda\w*)\b")
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"", re.S)


def _rocm_branch_follows(view, branch) -> bool:
    """A later `#elif` of the chain tests a ROCm/HIP macro: the project routes ROCm there."""
    alternative = branch.child_by_field_name("alternative")
    while alternative is not None and alternative.type == "preproc_elif":
        cond = alternative.child_by_field_name("condition")
        if (
            cond is not None
            and {view.text(n) for n in _walk(cond) if n.type == "identifier"} & ROCM_AWARE
        ):
            return True
        alternative = alternative.child_by_field_name("alternative")
    return False


def _body_text(view, branch, cond) -> str:
    """The text of the branch's own lines: after its condition, up to its `#else`/`#elif`/
    `#endif` (the whole rest of the node when it has none)."""
    text = view.source.text
    start = view.char(cond.end_byte)
    end = _body_end(view, branch)
    return text[start : end if end is not None else view.char(branch.end_byte)]


def _body_end(view, branch) -> int | None:
    """Character offset where the branch's own lines end (its `#else`/`#elif`/`#endif`)."""
    alternative = branch.child_by_field_name("alternative")
    if alternative is not None:
        stop = alternative.start_byte
    elif branch.children and branch.children[-1].type == "#endif":
        stop = branch.children[-1].start_byte
    else:
        return None
    text = view.source.text
    end = view.char(stop)
    return len(text[:end].rstrip())


_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}


def _true_on_rocm(view, node, sides, version: str) -> bool:
    """Whether `version <op> N` holds for a value the macro has on ROCm (True if unknown)."""
    left, right = sides
    op = view.text(node.child_by_field_name("operator"))
    other = right if view.text(left) == version else left
    if other is left:  # `N < version`: read it as `version > N`
        op = _FLIPPED[op]
    try:
        bound = int(view.text(other).rstrip("uUlL"), 0)
    except ValueError:
        return True
    compare = {
        "<": lambda v: v < bound,
        "<=": lambda v: v <= bound,
        ">": lambda v: v > bound,
        ">=": lambda v: v >= bound,
        "==": lambda v: v == bound,
        "!=": lambda v: v != bound,
    }[op]
    # Only CUDA_VERSION is renamed by torch's hipify (TORCH_HIP_VERSION, a ROCm version);
    # every other vendor version macro is 0 in a test under hipcc.
    values = _ROCM_VALUES if version == "CUDA_VERSION" else (0,)
    return any(compare(v) for v in values)


#: Macros no HIP pass defines (HIP-Clang defines __HIP__ / __HIPCC__ instead).
_NVCC_ONLY = frozenset({"__CUDA_ARCH__", "__NVCC__", "__CUDACC__"})


def _nvcc_only_conjunct(view, cond) -> bool:
    """Whether one `&&` operand of the condition tests only an nvcc-only macro
    (`defined(__CUDA_ARCH__) && __CUDACC_VER_MAJOR__ >= 11`): every HIP pass skips the branch
    whatever the version says, and cuda-arch-macro speaks for that test."""
    stack = [cond]
    while stack:
        node = stack.pop()
        if node.type == "parenthesized_expression":
            stack.extend(node.named_children)
            continue
        op = node.child_by_field_name("operator")
        if node.type == "binary_expression" and op is not None and view.text(op) == "&&":
            stack += [node.child_by_field_name("left"), node.child_by_field_name("right")]
            continue
        idents = {view.text(n) for n in _walk(node) if n.type == "identifier"}
        if idents and idents <= _NVCC_ONLY and node.type != "unary_expression":
            return True
    return False


def _walk(node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def _error_directive(view, branch):
    """The `#error` that opens the branch: what fires on ROCm when the test misfires."""
    cond = branch.child_by_field_name("condition") or branch.child_by_field_name("name")
    for child in branch.named_children:
        if (cond is not None and child.start_byte <= cond.start_byte) or child.type == "comment":
            continue
        if child.type == "preproc_call" and view.text(child).lstrip().startswith("#error"):
            return child
        return None
    return None
