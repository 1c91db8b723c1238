"""One rule-selection grammar for the command line and every configuration file.

A selector is a rule id (`warp-size-32`), a code (`CR404`), a code prefix (`CR4`, a whole step)
or `ALL`. Layers apply in order, as in ruff: the configuration file(s), then the command line.
In each, `select` starts over, `extend-select` adds and `ignore` removes, so `--select` on the
command line replaces what the configuration selected (its `extend-select` included). Opt-in
rules are only turned on when named by id or code, or by `ALL`.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

from cuda2rocm.catalogue import RuleSpec, matches
from cuda2rocm.config import Layer


class SelectionError(ValueError):
    pass


def _named(rule: RuleSpec, selectors: Iterable[str]) -> bool:
    return any(
        matches(rule, s)
        and (rule.default or s.strip().upper() in ("ALL", rule.code) or s.strip() == rule.id)
        for s in selectors
    )


def suggest(selector: str, rules: Sequence[RuleSpec]) -> str | None:
    """The closest rule id or code to a mistyped selector, if any is close."""
    names = [r.id for r in rules] + [r.code for r in rules]
    close = difflib.get_close_matches(selector.strip(), names, n=1, cutoff=0.6)
    if not close and selector.strip().upper().startswith("CR"):
        close = difflib.get_close_matches(selector.strip().upper(), names, n=1, cutoff=0.6)
    return close[0] if close else None


def check(selectors: Iterable[str], origin: str, rules: Sequence[RuleSpec]) -> None:
    """Raise a SelectionError naming `origin` (the command line or a file) for an unknown one."""
    for selector in selectors:
        if any(matches(r, selector) for r in rules):
            continue
        hint = suggest(selector, rules)
        message = f"{origin}: unknown rule or prefix '{selector}'"
        if hint:
            message += f"; did you mean '{hint}'?"
        raise SelectionError(message + " (see `cuda2rocm rules`)")


def select(rules: Sequence[RuleSpec], layers: Iterable[Layer]) -> list[RuleSpec]:
    """The rules the layers turn on, in catalogue order."""
    chosen = {r.id for r in rules if r.default}
    for layer in layers:
        check((*layer.select, *layer.extend_select, *layer.ignore), layer.origin, rules)
        if layer.select:
            chosen = {r.id for r in rules if _named(r, layer.select)}
        chosen |= {r.id for r in rules if _named(r, layer.extend_select)}
        chosen -= {r.id for r in rules if any(matches(r, s) for s in layer.ignore)}
    return [r for r in rules if r.id in chosen]


def narrow(
    selected: Sequence[RuleSpec], rules: Sequence[RuleSpec], selectors: Sequence[str], origin: str
) -> list[RuleSpec]:
    """`fix --rule`: the selected rules that `selectors` match, plus any rule named exactly
    (by id or code) even when it is not selected, such as an opt-in rule."""
    check(selectors, origin, rules)
    keep = [r for r in selected if any(matches(r, s) for s in selectors)]
    exact = {s.strip() for s in selectors} | {s.strip().upper() for s in selectors}
    keep += [r for r in rules if r not in keep and (r.id in exact or r.code in exact)]
    return keep
