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
                self.report(
                    node,
                    f"`{version}` comparisons do not mean a CUDA version on ROCm (torch hipifies "
                    "it to TORCH_HIP_VERSION, plain hipcc leaves it 0); make this branch "
                    f"CUDA-only with `{guard}`, or add a ROCm version test",
                    self.fix(self.replace(node, new), description=f"add {guard}"),
                )


def _walk(node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))
