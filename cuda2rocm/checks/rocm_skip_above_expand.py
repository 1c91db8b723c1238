"""rocm-skip-above-expand: a ROCm skip decorator above `@parameterized.expand`.

`parameterized.expand` builds one test per case from the function directly below it, puts
them into the class namespace itself and returns None (parameterized 0.9.0,
`parameterized_expand_wrapper`), so a decorator above it wraps None and never reaches the
generated tests: they run on ROCm although the author meant to skip them there.
"""

from __future__ import annotations

import re

import libcst as cst

from cuda2rocm.frontends.python import NameAware

#: Skip decorators: unittest's and pytest's (`skipIf(cond, ...)`, `mark.skipif(cond, ...)`).
_SKIP_CALLS = frozenset({"skipIf", "skipif", "skipUnless"})
#: A condition or decorator name that speaks of ROCm (`torch.version.hip`, `TEST_WITH_ROCM`,
#: `is_rocm()`, `@skipIfRocm`).
_ROCM_WORD = re.compile(r"(?i)rocm|(?<![a-z])hip(?![a-z])")
_SKIP_NAME = re.compile(r"(?i)^(?:skip\w*(?:rocm|hip)\w*|\w*(?:rocm|hip)\w*skip\w*)$")


def _called(node: cst.BaseExpression) -> str:
    func = node.func if isinstance(node, cst.Call) else node
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return func.value if isinstance(func, cst.Name) else ""


class Rule(NameAware):
    # It reads decorators and module-level skip bindings only: names bound to `.expand(...)`
    # values, and bodies calling a tensor's `.expand(...)` (everywhere in model code), need
    # not be kept by the fast pass.
    FOLLOWS = False
    DECORATORS_ONLY = True

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self._bound: dict[str, str] = {}

    def visit_Module(self, node: cst.Module) -> None:
        # `skip_rocm = unittest.skipIf(torch.version.hip is not None, "...")` at module level.
        for stmt in node.body:
            if not isinstance(stmt, cst.SimpleStatementLine):
                continue
            for small in stmt.body:
                if (
                    isinstance(small, cst.Assign)
                    and len(small.targets) == 1
                    and isinstance(small.targets[0].target, cst.Name)
                    and self._skip_call(small.value)
                ):
                    self._bound[small.targets[0].target.value] = self.text(small.value)

    def _skip_call(self, node: cst.BaseExpression) -> bool:
        if not isinstance(node, cst.Call) or _called(node) not in _SKIP_CALLS or not node.args:
            return False
        return bool(_ROCM_WORD.search(self.text(node.args[0].value)))

    def _rocm_skip(self, decorator: cst.BaseExpression) -> str:
        """What the decorator is when it skips on ROCm, else ""."""
        if self._skip_call(decorator):
            return f"`@{self.text(decorator)}`"
        if isinstance(decorator, cst.Name):
            if decorator.value in self._bound:
                return f"`@{decorator.value}` (= `{self._bound[decorator.value]}`)"
            if _SKIP_NAME.match(decorator.value):
                return f"`@{decorator.value}`"
        return ""

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        decorators = [d.decorator for d in node.decorators]
        expands = [
            i
            for i, d in enumerate(decorators)
            if isinstance(d, cst.Call) and _called(d) == "expand"
        ]
        if not expands:
            return
        for decorator in decorators[: expands[-1]]:
            what = self._rocm_skip(decorator)
            if what:
                self.report(
                    decorator,
                    f"{what} sits above `@parameterized.expand`, which builds the tests from "
                    "the function below it, puts them into the class itself and returns None: "
                    "the skip never reaches them, so they run on ROCm; move the skip below "
                    "`@parameterized.expand` (or skip the whole class)",
                )
