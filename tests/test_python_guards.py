"""The shared "is this already ROCm-aware?" helpers used by the Python rules."""

from __future__ import annotations

import libcst as cst
import pytest

from cuda2rocm.catalogue import load_catalogue
from cuda2rocm.frontends.python import NameAware, run_rules
from cuda2rocm.frontends.python_guards import VendorGuard, torch_name
from cuda2rocm.sources import SourceFile

SPEC = next(r for r in load_catalogue() if r.id == "device-capability-gate")


def _aware_lines(code: str, **options) -> dict[int, bool]:
    """For every call to `use()`, its line and whether the guard calls it ROCm-aware."""
    seen: dict[int, bool] = {}

    class Probe(NameAware):
        def __init__(self, *args) -> None:
            super().__init__(*args)
            self.guard = VendorGuard(self, **options)

        def visit_Call(self, node: cst.Call) -> None:
            if isinstance(node.func, cst.Name) and node.func.value == "use":
                line = self.source.lines.position(*self.span(node)).line
                seen[line] = self.guard.rocm_aware(node)

    source = SourceFile("probe.py", "python", code)
    _, failed = run_rules(source, [(SPEC, Probe)])
    assert not failed
    return seen


def test_branches_conditions_and_chains():
    code = """\
import torch
if torch.version.hip:
    use()
elif x:
    use()
else:
    use()
y = use() if torch.version.hip else 0
ok = torch.version.hip is None and use()
use()
"""
    assert _aware_lines(code) == {3: True, 5: True, 7: True, 8: True, 9: True, 10: False}


def test_flags_are_followed_only_when_asked():
    code = """\
import torch
IS_ROCM = torch.version.hip is not None
if IS_ROCM:
    use()
"""
    assert _aware_lines(code) == {4: False}
    assert _aware_lines(code, follow_names=True) == {4: True}


@pytest.mark.parametrize(
    ("test", "aware"),
    [
        ("torch.version.hip", True),
        ("torch.version.hip is not None", True),
        ("IS_ROCM", True),
        ("not torch.version.hip", False),  # CUDA leaves: the rest is the ROCm path
        ("torch.version.hip and fast", False),  # ROCm does not always leave
        ("torch.version.cuda", False),
    ],
)
def test_early_exit_counts_only_when_rocm_always_leaves(test, aware):
    code = f"""\
import torch
IS_ROCM = torch.version.hip is not None
def f():
    if {test}:
        return 1
    use()
"""
    assert _aware_lines(code, follow_names=True, early_exit=True) == {6: aware}
    assert _aware_lines(code, follow_names=True) == {6: False}


def test_torch_name():
    assert torch_name(cst.parse_module("import os\nimport torch as T\n")) == "T"
    assert torch_name(cst.parse_module("import torch\n")) == "torch"
    assert torch_name(cst.parse_module("from torch import nn\n")) is None
