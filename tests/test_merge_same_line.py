"""One construct, one finding: a rule's findings on one line merge (engine.merge_same_line)."""

from __future__ import annotations

from cuda2rocm.engine import merge_same_line
from cuda2rocm.model import Diagnostic, Edit, Fix, Position, Safety, Severity


def _d(message: str, line: int = 3, fix: Fix | None = None, rule: str = "r") -> Diagnostic:
    return Diagnostic(
        "a.cu", rule, "CR1", Severity.WARNING, 1, Position(line, 1, line, 5), message, fix
    )


def _fix(start: int, end: int, new: str) -> Fix:
    return Fix(Safety.SAFE, (Edit(start, end, new, "x" * (end - start)),))


def test_names_on_one_line_become_one_finding_listing_them():
    found = merge_same_line(
        [_d("`cudaDataType_t` does not exist: use X"), _d("`CUDA_R_32F`, a data type: use Y")]
    )
    assert [d.message for d in found] == [
        "`cudaDataType_t` does not exist: use X (also on this line: `CUDA_R_32F`)"
    ]


def test_other_lines_and_rules_stay_apart():
    found = merge_same_line([_d("a: 1"), _d("b: 2", line=4), _d("c: 3", rule="s")])
    assert len(found) == 3


def test_disjoint_fixes_merge_and_keep_every_edit():
    found = merge_same_line([_d("a: 1", fix=_fix(0, 2, "p")), _d("b: 2", fix=_fix(5, 7, "q"))])
    assert len(found) == 1
    assert [e.replacement for e in found[0].fix.edits] == ["p", "q"]


def test_conflicting_fixes_are_both_kept():
    found = merge_same_line([_d("a: 1", fix=_fix(0, 4, "p")), _d("b: 2", fix=_fix(2, 6, "q"))])
    assert [d.message for d in found] == ["a: 1", "b: 2"]


def test_a_fixable_finding_does_not_absorb_an_unfixable_one():
    assert len(merge_same_line([_d("a: 1", fix=_fix(0, 2, "p")), _d("b: 2")])) == 2
