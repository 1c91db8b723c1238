"""Every rule's catalogue examples are tests: what fires, what must not, and the exact rewrite."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2rocm.catalogue import load_catalogue
from cuda2rocm.discover import language_of
from cuda2rocm.engine import Linter
from cuda2rocm.fixer import fix_source
from cuda2rocm.sources import SourceFile
from cuda2rocm.targets import Targets

RULES = load_catalogue()
LINTABLE = [r for r in RULES if r.step != 0]


def _linter(spec, example=None):
    """The example's own assumptions: its targets (`rocm-version`, `offload-arch`) and fix
    target; the defaults otherwise. General rules (parse errors...) appear only while some
    real rule parses the file."""
    rules = [*LINTABLE, spec] if spec.step == 0 else [spec]
    if example is None:
        return Linter(rules)
    arch = list(example.offload_arch) if example.offload_arch is not None else None
    targets = Targets.parse(example.rocm_version, arch)
    return Linter(rules, target=example.target, targets=targets)


def _contract(example, found) -> None:
    """The severity and message words the example states hold for every finding."""
    for d in found:
        if example.severity is not None:
            assert d.severity.value == example.severity, (d.severity.value, d.message)
        for word in example.message:
            assert word in d.message, (word, d.message)


def _cases(kind: str):
    for spec in RULES:
        for example in getattr(spec, kind):
            yield pytest.param(spec, example, id=f"{spec.id}:{example.name}")


def _source(example) -> SourceFile:
    path = example.path
    return SourceFile(path, language_of(Path(path)), example.code.lstrip("\n"))


def _own(spec, diagnostics):
    """The rule's reported findings (guarded ones, in code ROCm never compiles, are not)."""
    return [d for d in diagnostics if d.rule == spec.id and not d.guarded]


@pytest.mark.parametrize(("spec", "example"), list(_cases("invalid")))
def test_invalid_example_fires_and_fixes_exactly(spec, example):
    linter = _linter(spec, example)
    source = _source(example)
    found = _own(spec, linter.lint_source(source))
    if example.count is None:
        assert found, f"{spec.id} did not fire on {example.name}"
    else:
        assert len(found) == example.count, [d.message for d in found]
    _contract(example, found)
    for d in found:
        p = d.position
        assert (p.line, p.column) <= (p.end_line, p.end_column)
        assert 1 <= p.line <= len(source.lines.starts)

    def lint(s):
        return _own(spec, linter.lint_source(s))

    outcome = fix_source(source, lint, example.unsafe, linter.syntax_error)
    expected = (example.fixed if example.fixed is not None else example.code).lstrip("\n")
    assert outcome.refused is None
    assert outcome.fixed == expected
    if example.fixed is not None:
        # Idempotent: a second run changes nothing.
        again = SourceFile(source.path, source.language, outcome.fixed)
        assert fix_source(again, lint, example.unsafe).fixed == outcome.fixed


@pytest.mark.parametrize(("spec", "example"), list(_cases("valid")))
def test_valid_example_does_not_fire(spec, example):
    found = _own(spec, _linter(spec, example).lint_source(_source(example)))
    assert found == [], [d.message for d in found]


@pytest.mark.parametrize("spec", LINTABLE, ids=lambda s: s.id)
def test_every_rule_is_documented_and_exemplified(spec):
    assert spec.invalid, "a rule needs examples that fire"
    assert spec.valid, "a rule needs examples that must not fire"
    assert spec.summary and len(spec.explanation) > 200
    assert spec.references
    if spec.fix != "none":
        assert any(e.fixed for e in spec.invalid), "a fixable rule shows its rewrite"
    assert spec.tokens, "a rule declares the tokens it can fire on (prefilter)"


@pytest.mark.parametrize("spec", LINTABLE, ids=lambda s: s.id)
def test_prefilter_tokens_cover_every_firing_example(spec):
    """A file the prefilter skips must never be one the rule would fire on."""
    linter = Linter([spec])
    for example in spec.invalid:
        source = _source(example)
        assert linter.applicable(source.language, source.text.encode()), example.name
