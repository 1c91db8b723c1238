"""fp8-dtype: OCP float8 dtypes, which MI300 (gfx942) does not have.

MI300 supports the FNUZ variants only; OCP float8 arrives with gfx950 and gfx12. A use inside
a branch that already tells the platforms (or the GPU architecture) apart is not reported, nor is
a use that only tests a dtype (`dtype == torch.float8_e4m3fn`, `dtype in (...)`, a dict key):
nothing is created there, and the porter changes the place where the format is chosen.
No automatic fix: the FNUZ formats have a different exponent bias and range, so scales change.
"""

from __future__ import annotations

import libcst as cst

from cuda2rocm.frontends.python import NameAware
from cuda2rocm.frontends.python_guards import HIP, VendorGuard

OCP = {"torch.float8_e4m3fn": "torch.float8_e4m3fnuz", "torch.float8_e5m2": "torch.float8_e5m2fnuz"}


class Rule(NameAware):
    #: findings and their reasons hold a token themselves: no name is followed to one
    FOLLOWS = False

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self._guard = VendorGuard(
            self,
            (HIP, "torch.version.cuda"),
            attributes=("gcnArchName",),
            follow_names=True,
            early_exit=True,
        )

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value in ("float8_e4m3fn", "float8_e5m2"):
            self._check(node)

    def visit_Name(self, node: cst.Name) -> None:
        # `from torch import float8_e4m3fn`; the import itself is not a use.
        if node.value in ("float8_e4m3fn", "float8_e5m2") and not isinstance(
            self.parent(node), (cst.Attribute, cst.ImportAlias)
        ):
            self._check(node)

    def _check(self, node: cst.CSTNode) -> None:
        names = self.qualified_names(node) & set(OCP)
        if not names or self._only_tested(node) or self._guard.rocm_aware(node):
            return
        if self._fnuz_alternative(node):
            return
        ocp = sorted(names)[0]
        self.report(
            node,
            f"{ocp} is the OCP float8 format, which MI300 (gfx942) does not support: it has "
            f"only the FNUZ formats ({OCP[ocp]}), OCP float8 arrives with gfx950/gfx12; choose "
            "the dtype by get_device_properties().gcnArchName on ROCm (exponent bias and range "
            "differ, so scales need review)",
        )

    def _fnuz_alternative(self, node: cst.CSTNode) -> bool:
        """`if supports_fnuz(): dt = torch.float8_e4m3fnuz else: dt = torch.float8_e4m3fn`, or
        `fnuz if cond else fn`: the place where the format is chosen already offers the FNUZ
        one (behind the project's own test): ported, whatever the test's name."""
        if "fnuz" not in self.source.text:
            return False  # no branch's text can hold it (spares positioning the branch)
        for parent in self.ancestors(node):
            if isinstance(parent, cst.IfExp):
                return "fnuz" in self.text(parent)
            if isinstance(parent, cst.If):
                top = parent
                while isinstance(self.parent(top), cst.If) and self.parent(top).orelse is top:
                    top = self.parent(top)
                return "fnuz" in self.text(top)
            if isinstance(parent, (cst.FunctionDef, cst.ClassDef)):
                return False
        return False

    def _only_tested(self, node: cst.CSTNode) -> bool:
        """The dtype is only compared or looked up: an operand of `==`/`!=`/`is`/`in` (also an
        element of the container tested with `in`), or a dict key."""
        child: cst.CSTNode = node
        for parent in self.ancestors(node):
            if isinstance(parent, (cst.Element, cst.Tuple, cst.List, cst.Set)):
                child = parent
                continue
            if isinstance(parent, (cst.Comparison, cst.ComparisonTarget)):
                return True
            if isinstance(parent, cst.DictElement):
                return child is parent.key
            return False
        return False
