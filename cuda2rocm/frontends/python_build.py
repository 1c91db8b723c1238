"""setup.py and build-script helpers shared by the extension-build rules (never executed).

- `import_edit`: make a name of `torch.utils.cpp_extension` (IS_HIP_EXTENSION, ROCM_HOME)
  available, by extending an existing `from torch.utils.cpp_extension import ...`, by using a
  module alias (`cpp_extension.ROCM_HOME`), or by adding an import after the last top-level one.
- `under_vendor_test`: a node inside a branch or conditional expression that already tests
  IS_HIP_EXTENSION or torch.version.hip; `under_vendor_branch`: one whose test names the ROCm
  side in any spelling (`if rocm_build():`, `if IS_ROCM:`).
"""

from __future__ import annotations

import re

import libcst as cst

from cuda2rocm.frontends.python import ParentAware, dotted
from cuda2rocm.model import Edit

CPP_EXTENSION = "torch.utils.cpp_extension"
#: Names whose presence in a test makes it tell ROCm from CUDA.
VENDOR_TESTS = ("IS_HIP_EXTENSION", "torch.version.hip")


def _module_name(node: cst.BaseExpression | None) -> str | None:
    return dotted(node) if node is not None else None


def import_edit(rule: ParentAware, module: cst.Module, name: str) -> tuple[str | None, Edit | None]:
    """How to spell `name` of torch.utils.cpp_extension here, and the edit that imports it;
    (None, None) when the module imports nothing from torch: a build script of another
    framework (TransformerEngine's Paddle build uses paddle.utils.cpp_extension) must not
    gain a torch import, which fails where torch is not installed and says nothing about
    that framework's build."""
    last_import: cst.SimpleStatementLine | None = None
    from_import: cst.ImportFrom | None = None
    module_alias: str | None = None
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.ImportFrom):
                last_import = statement
                source = _module_name(small.module)
                if small.relative or isinstance(small.names, cst.ImportStar):
                    continue
                if source == CPP_EXTENSION:
                    for alias in small.names:
                        if alias.evaluated_name == name:
                            return alias.evaluated_alias or name, None
                    from_import = from_import or small
                elif source == "torch.utils":
                    for alias in small.names:
                        if alias.evaluated_name == "cpp_extension":
                            module_alias = alias.evaluated_alias or "cpp_extension"
            elif isinstance(small, cst.Import):
                last_import = statement
                for alias in small.names:
                    if alias.evaluated_name == CPP_EXTENSION:
                        module_alias = alias.evaluated_alias or CPP_EXTENSION
    if from_import is not None and not isinstance(from_import.names, cst.ImportStar):
        last = from_import.names[-1]
        anchor = last.asname.name if last.asname is not None else last.name
        return name, rule.insert_after(anchor, f", {name}")
    if module_alias is not None:
        return f"{module_alias}.{name}", None
    if not _imports_torch(module):
        return None, None
    text = rule.source.text
    newline = "\r\n" if "\r\n" in text else "\n"
    line = f"from {CPP_EXTENSION} import {name}{newline}"
    # Insertions at a line start (offset 0, just after a newline, or the end of the file):
    # they replace nothing, so their original is "".
    if last_import is None:
        return name, Edit(0, 0, line, "")
    _, end = rule.span(last_import)
    at = text.find("\n", max(end - 1, 0))
    at = len(text) if at < 0 else at + 1
    if at == len(text) and not text.endswith("\n"):
        return name, Edit(at, at, newline + line.rstrip("\r\n"), "")
    return name, Edit(at, at, line, "")


class _TorchImport(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.found = False

    def visit_Import(self, node: cst.Import) -> None:
        self.found |= any(_is_torch(a.evaluated_name) for a in node.names)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.found |= not node.relative and _is_torch(_module_name(node.module) or "")


def _is_torch(name: str) -> bool:
    return name == "torch" or name.startswith("torch.")


def _imports_torch(module: cst.Module) -> bool:
    """Whether the module imports torch anywhere (top level, a function, a try block)."""
    finder = _TorchImport()
    module.visit(finder)
    return finder.found


def _branch_test(node: cst.CSTNode) -> cst.BaseExpression | None:
    """The test that decides whether code under `node` runs (`if`, conditional expression,
    `while`, or a boolean operation's own operands), or None."""
    if isinstance(node, (cst.If, cst.IfExp, cst.While)):
        return node.test
    if isinstance(node, cst.BooleanOperation):
        return node
    return None


def under_vendor_test(
    rule: ParentAware, node: cst.CSTNode, names: tuple[str, ...] = VENDOR_TESTS
) -> bool:
    for ancestor in rule.ancestors(node):
        test = _branch_test(ancestor)
        if test is not None and any(v in rule.text(test) for v in names):
            return True
    return False


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def names_vendor(text: str) -> bool:
    """Whether an expression's identifiers name the ROCm side: `rocm_build()`, `IS_ROCM`,
    `is_hip`, `torch.version.hip`, `IS_HIP_EXTENSION` (project helpers are often imported from
    another module, so their names are the evidence)."""
    for word in _IDENTIFIER.findall(text):
        lower = word.lower()
        if "rocm" in lower or "hip" in lower.split("_"):
            return True
    return False


def under_vendor_branch(rule: ParentAware, node: cst.CSTNode) -> bool:
    """`under_vendor_test` for tests that name the ROCm side in any spelling (`names_vendor`).

    The body of `if cuda_ok or rocm_ok:` runs on both vendors, so an `or` test decides only
    for its `else` branch."""
    child: cst.CSTNode = node
    for ancestor in rule.ancestors(node):
        test = _branch_test(ancestor)
        if test is not None and test is not child and names_vendor(rule.text(test)):
            either = isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or)
            in_else = isinstance(ancestor, (cst.If, cst.IfExp)) and child is ancestor.orelse
            if not either or in_else:
                return True
        child = ancestor
    return False
