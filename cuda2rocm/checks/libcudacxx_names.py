"""libcudacxx-names: uses of libcu++ (`cuda::std::...`, `cuda::atomic_ref`, `cuda::barrier`, ...).

libcu++ (NVIDIA CCCL) is not part of ROCm's HIP headers, and neither HIPIFY's tables nor
torch's hipify map its names, so every use is a line to change: standard-library names to
`std::` (the host standard library serves device code under HIP-Clang for constexpr/type traits),
the CUDA-specific ones to a HIP construct. One finding per line; `at::cuda::...` and other
namespaces named `cuda` inside another namespace are not libcu++. Code that only a test on
CCCL's version macros enables (`#if CCCL_MAJOR_VERSION >= 3`, and `#ifdef X` for an X defined
only there) is left out: no ROCm header defines CCCL_*.
"""

from __future__ import annotations

from cuda2rocm.frontends.cpp import CppRule, taken_branches


class Rule(CppRule):
    def check(self) -> None:
        view = self.view
        table: dict[str, str] = self.spec.tables["names"]
        lines: set[int] = set()
        self._cccl_macros: set[str] = set()
        self._cccl_macros = {
            view.text(d.child_by_field_name("name"))
            for d in view.defines
            if d.child_by_field_name("name") is not None and self._under_cccl(d)
        }
        for node in view.identifiers:
            if node.type != "namespace_identifier" or view.text(node) != "cuda":
                continue
            qualified = node.parent
            if qualified is None or qualified.type != "qualified_identifier":
                continue
            outer = qualified.parent
            if outer is not None and outer.type == "qualified_identifier":
                scope = outer.child_by_field_name("scope")
                if scope is not None and scope != qualified and view.text(scope):
                    continue  # at::cuda::..., c10::cuda::...: not libcu++
            name = qualified.child_by_field_name("name")
            if name is None:
                continue
            head = view.text(name).split("::", 1)[0].split("<", 1)[0].strip()
            advice = table.get(head)
            if advice is None or self._under_cccl(node):  # skipped by HIP: engine guards it
                continue
            start, _ = view.span(node)
            _, end = view.span(name)
            line = view.source.lines.position(start, end).line
            if line in lines:
                continue
            lines.add(line)
            self.report(
                (start, min(end, start + len(view.text(qualified)))),
                f"`cuda::{head}` is libcu++ (CCCL), which ROCm's HIP headers do not provide "
                f"and no hipify maps; {advice}",
                data={"cuda_name": f"cuda::{head}"},
            )

    def _under_cccl(self, node) -> bool:
        """In the taken branch of a test on CCCL's version macros (`#if CCCL_MAJOR_VERSION >=
        3`), which no ROCm header defines, or of `#ifdef X` where X is defined only there."""
        view = self.view
        for parent in taken_branches(node):
            cond = parent.child_by_field_name("condition") or parent.child_by_field_name("name")
            text = view.text(cond) if cond is not None else ""
            negated = view.text(parent.child(0)).strip() in ("#ifndef", "#elifndef")
            if "CCCL_" in text and not text.lstrip().startswith("!"):
                return True
            if not negated and text.strip() in self._cccl_macros:
                return True
        return False
