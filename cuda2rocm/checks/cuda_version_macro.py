"""cuda-version-macro: `CUDA_VERSION` / `CUDART_VERSION` comparisons in preprocessor conditions.

The numbers do not map to ROCm: torch's hipify rewrites CUDA_VERSION to TORCH_HIP_VERSION
(ROCm major*100+minor, e.g. 702), and plain hipcc leaves it undefined (0), so `< 12000` is
true and `>= 11000` false on ROCm, whatever the ROCm version supports. The safe fix, from
PyTorch's HIP notes, makes the CUDA-version branch CUDA-only: `(... && !defined(USE_ROCM))` in
torch extensions, `!defined(__HIP__)` (defined by HIP-Clang itself) elsewhere. Conditions that
already mention a HIP or ROCm macro are taken to handle ROCm and are left alone.
"""

from __future__ import annotations

from cuda2rocm.frontends.cpp import HIP_MACROS, CppRule

VERSIONS = frozenset({"CUDA_VERSION", "CUDART_VERSION"})
COMPARISONS = frozenset({"<", "<=", ">", ">=", "==", "!="})
ROCM_AWARE = HIP_MACROS | {"ROCM_VERSION", "HIP_VERSION", "TORCH_HIP_VERSION", "USE_ROCM"}


class Rule(CppRule):
    def check(self) -> None:
        view = self.view
        for _, cond in view.conditions:
            if not any(v in view.text(cond) for v in VERSIONS):
                continue
            idents = {view.text(n) for n in _walk(cond) if n.type == "identifier"}
            if idents & ROCM_AWARE:
                continue
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
                message = (
                    f"`{version}` comparisons do not mean a CUDA version on ROCm (torch hipifies "
                    "it to TORCH_HIP_VERSION, plain hipcc leaves it 0); make this branch "
                    f"CUDA-only with `{guard}`, or add a ROCm version test"
                )
                # Safe only where it changes nothing on ROCm: the comparison is already false
                # there (0 under plain hipcc, a ROCm version such as 702 after torch's
                # hipify). Where it is true (`< 13000`), ROCm takes this (older-API) branch
                # today and the guard would send it to the other one: no fix.
                if _true_on_rocm(view, node, sides, version):
                    self.report(node, message + " (no automatic fix: ROCm takes this branch now)")
                    continue
                self.report(
                    node, message, self.fix(self.replace(node, new), description=f"add {guard}")
                )


_ROCM_VALUES = (0, 500, 702, 1000)
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
    return any(compare(v) for v in _ROCM_VALUES)


def _walk(node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))
