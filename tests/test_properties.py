"""Property-based tests: random programs and mutations of our examples never break the tool.

Not raising is not enough, since the engine turns a crashing rule into a diagnostic: no input may
produce an `internal-error` either. Fix output must parse when the input did, be idempotent, and
every position must point inside the file.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuda2rocm.catalogue import load_catalogue, select_rules
from cuda2rocm.discover import language_of
from cuda2rocm.engine import Linter
from cuda2rocm.fixer import fix_source
from cuda2rocm.sources import SourceFile

CATALOGUE = load_catalogue()
LINTER = Linter(select_rules(CATALOGUE, select=["ALL"]))
SEEDS = [
    (example.path, example.code)
    for rule in CATALOGUE
    for example in (*rule.invalid, *rule.valid)
    if language_of(Path(example.path)) is not None
]
ALPHABET = st.sampled_from(
    [
        *list("()[]{}:.,;=+-*/%<>!&|^~#'\"\\ \t\n\r_xyzAB019"),
        "torch",
        "cuda",
        "hip",
        "amp",
        "version",
        "é",
        "__global__",
        "#if",
        "asm(",
    ]
)


@st.composite
def mutated(draw):
    path, code = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["insert", "delete", "duplicate", "swap"]))
        if not code:
            break
        i = draw(st.integers(0, len(code)))
        if kind == "insert":
            code = code[:i] + "".join(draw(st.lists(ALPHABET, max_size=6))) + code[i:]
        elif kind == "delete":
            j = draw(st.integers(i, min(len(code), i + 12)))
            code = code[:i] + code[j:]
        else:
            lines = code.splitlines(keepends=True)
            if len(lines) > 1:
                a = draw(st.integers(0, len(lines) - 1))
                b = draw(st.integers(0, len(lines) - 1))
                if kind == "duplicate":
                    lines.insert(b, lines[a])
                else:
                    lines[a], lines[b] = lines[b], lines[a]
                code = "".join(lines)
    return path, code


def _check(path: str, code: str) -> None:
    source = SourceFile(path, language_of(Path(path)), code)
    found = LINTER.lint_source(source)
    internal = [d.message for d in found if d.rule == "internal-error"]
    assert not internal, internal
    lines = source.lines
    for d in found:
        p = d.position
        assert 1 <= p.line <= len(lines.starts), (p, d.rule)
        assert 1 <= p.end_line <= len(lines.starts)
        assert (p.line, p.column) <= (p.end_line, p.end_column)
        if d.fix:
            for e in d.fix.edits:
                assert 0 <= e.start <= e.end <= len(code)
    broken_before = LINTER.syntax_error(source)
    outcome = fix_source(source, LINTER.lint_source, True, LINTER.syntax_error)
    if outcome.refused is None and broken_before is None:
        fixed = SourceFile(path, source.language, outcome.fixed)
        assert LINTER.syntax_error(fixed) is None
        again = fix_source(fixed, LINTER.lint_source, True, LINTER.syntax_error)
        assert again.fixed == outcome.fixed, "fix is not idempotent"


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutated_examples_never_break_the_tool(case):
    _check(*case)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(["a.py", "k.cu", "Dockerfile", "run.sh", "requirements.txt", "CMakeLists.txt"]),
    st.lists(ALPHABET, max_size=120).map("".join),
)
def test_random_text_in_every_language_never_breaks_the_tool(path, code):
    _check(path, code)


def test_deep_nesting_is_reported_not_raised():
    code = "import torch\nx = " + "(" * 3000 + "torch.version.cuda" + ")" * 3000 + "\n"
    found = LINTER.lint_source(SourceFile("deep.py", "python", code))
    assert [d.rule for d in found] == ["parse-error"] or all(
        d.rule != "internal-error" for d in found
    )
    cpp = "void f() {" + "{" * 3000 + "cudaMalloc(0, 0);" + "}" * 3000 + "}\n"
    found = LINTER.lint_source(SourceFile("deep.cu", "cuda", cpp))
    assert all(d.rule != "internal-error" for d in found)
