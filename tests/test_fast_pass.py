"""The fast pass (frontends/python_fast.py) never changes a finding: both paths, same output.

The fast pass blanks function and class bodies that no selected rule needs before LibCST
parses a file; these tests run every rule example and a generated tree through both paths
(with the size threshold off, so even small files are reduced) and require identical
diagnostics, fixes included.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from cuda2rocm import runner
from cuda2rocm.catalogue import load_catalogue
from cuda2rocm.discover import language_of
from cuda2rocm.engine import Linter
from cuda2rocm.frontends import python, python_fast
from cuda2rocm.sources import SourceFile

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
from generate import generate

RULES = load_catalogue()
LINTABLE = [r for r in RULES if r.step != 0]
PYTHON_RULES = [r for r in LINTABLE if "python" in r.languages]


@pytest.fixture
def reductions(monkeypatch):
    """Every file is eligible; counts the files the fast pass actually reduced."""
    monkeypatch.setattr(python_fast, "MIN_BYTES", 0)
    count = {"reduced": 0}
    original = python_fast.reduce

    def counting(*args, **kwargs):
        result = original(*args, **kwargs)
        count["reduced"] += result is not None
        return result

    monkeypatch.setattr(python_fast, "reduce", counting)
    return count


def _both(monkeypatch, lint):
    monkeypatch.setattr(python, "FAST_PASS", False)
    full = lint()
    monkeypatch.setattr(python, "FAST_PASS", True)
    fast = lint()
    return full, fast


def _json(diagnostics) -> list:
    return [d.to_json() for d in diagnostics]


def _examples():
    for spec in PYTHON_RULES:
        for kind in ("invalid", "valid"):
            for example in getattr(spec, kind):
                if language_of(Path(example.path)) == "python":
                    yield pytest.param(spec, example, id=f"{spec.id}:{kind}:{example.name}")


@pytest.mark.parametrize(("spec", "example"), list(_examples()))
def test_rule_example_same_on_both_paths(spec, example, monkeypatch, reductions):
    source = SourceFile(example.path, "python", example.code.lstrip("\n"))
    # Alone (fewest tokens: the most blanked) and with every rule (the default run).
    for linter in (Linter([spec]), Linter(LINTABLE)):
        full, fast = _both(monkeypatch, lambda linter=linter: linter.lint_source(source))
        assert _json(fast) == _json(full)


def test_examples_do_exercise_the_reduction(monkeypatch, reductions):
    for param in _examples():
        spec, example = param.values
        Linter([spec]).lint_source(SourceFile(example.path, "python", example.code))
    assert reductions["reduced"] > 0  # few examples have bodies no rule needs


def test_generated_tree_same_on_both_paths(tmp_path, monkeypatch, reductions):
    info = generate(tmp_path / "tree", seed=11, python_files=120, cpp_files=6)
    assert info["python_files"] == 120
    linter = Linter([r for r in RULES if r.default])
    full, fast = _both(monkeypatch, lambda: runner.run(linter, [tmp_path / "tree"], jobs=1))
    assert full.diagnostics and _json(fast.diagnostics) == _json(full.diagnostics)
    assert _json(fast.guarded) == _json(full.guarded)
    assert reductions["reduced"] > 0


FAR = """\
from torch.cuda.amp import autocast as ac
import torch

IS_ROCM = False
CAP = torch.cuda.get_device_capability()


def enable():
    global IS_ROCM
    IS_ROCM = torch.version.hip is not None


def unrelated(x):
    y = x + 1
    return y


def far_away(model, batch):
    with ac():
        return model(batch)


def guarded():
    if IS_ROCM:
        return
    torch.backends.cuda.matmul.allow_tf32 = True


def reads_a_module_level_name():
    if CAP >= (8, 0):
        return 1
    return 0


class Holder:
    def method(self):
        return [i for i in range(3)]
"""


def test_aliases_globals_and_guards_keep_their_bodies(monkeypatch, reductions):
    source = SourceFile("far.py", "python", FAR)
    linter = Linter(LINTABLE)
    full, fast = _both(monkeypatch, lambda: linter.lint_source(source))
    assert _json(fast) == _json(full)
    assert {d.rule for d in full} >= {"amp-deprecated-api", "device-capability-gate"}
    assert any(d.rule == "device-capability-gate" and d.position.line == 30 for d in full)
    tree = ast.parse(FAR)
    tokens = {t for r in LINTABLE if "python" in r.languages for t in r.tokens}
    reduced = python_fast.reduce(FAR, tree, tokens)
    assert reduced is not None and len(reduced) == len(FAR)
    assert reduced.splitlines()[:5] == FAR.splitlines()[:5]
    kept = reduced.replace(" ", "")
    # the global, the alias's use and the use of a name bound to a token stay
    assert "global" in kept and "withac()" in kept and "ifCAP>=(8,0)" in kept
    assert "y=x+1" not in kept and "range(3)" not in kept  # bodies no rule needs go
    ast.parse(reduced)  # still Python, with the same lines


def test_parent_below_agrees_with_libcst_parent_provider():
    """Parents found under the node being visited are LibCST's own (ParentNodeProvider), and a
    node outside that subtree is left to the provider."""
    import libcst as cst
    from libcst.metadata import ParentNodeProvider

    from cuda2rocm.frontends import python
    from cuda2rocm.sources import SourceFile

    text = "def f():\n    if x:\n        y = g(a.b, [c, d])\n\nz = 1\n"
    source = SourceFile("m.py", "python", text)
    wrapper = python.parse(source)
    context = python.FileContext(source, wrapper)
    module = wrapper.module
    function = module.body[0]
    context.stack = [module, function]
    expected = wrapper.resolve(ParentNodeProvider)
    below = []
    pending = list(function.children)
    while pending:
        node = pending.pop()
        below.append(node)
        pending.extend(node.children)
    assert len(below) > 20
    for node in below:
        assert context.parent_below(node) is expected[node]
    assert context.parent_below(module.body[1]) is python._MISSING
    assert isinstance(expected[module.body[1]], cst.Module)


NESTED = """\
import torch


@decorator
def main(args):
    x = 1; y = 2
    if args.a:
        torch.backends.cuda.matmul.allow_tf32 = True
    elif args.b:
        z = f(1,
              2)
    else:
        for i in range(3):
            w = i
        else:
            w = 0
    try:
        q = 1
    except ValueError as e:
        q = 2
    except KeyError:
        q = 3
    else:
        q = 4
    finally:
        q = 5
    with open(x) as fh:
        data = fh.read()
    match data:
        case "a":
            r = 1
        case _:
            r = 2
    while x:
        if y: s = 1
        x = 0


class C:
\tdef m(self):
\t\treturn torch.cuda.is_available()
"""


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_nested_line_positions_agree_with_whole_file_positions(newline):
    """Positions computed from one nested statement line alone equal LibCST's whole-file ones,
    for every node of every nested line (blocks, elif/else, handlers, cases, tabs)."""
    import libcst as cst
    from libcst.metadata import PositionProvider

    from cuda2rocm.frontends import python, python_fast
    from cuda2rocm.sources import SourceFile

    text = NESTED.replace("\n", newline)
    source = SourceFile("m.py", "python", text)
    wrapper = python.parse(source)
    full = wrapper.resolve(PositionProvider)
    context = python.FileContext(source, wrapper, python_fast.parse_ast(text))
    pending = [(wrapper.module, None)]
    while pending:
        node, parent = pending.pop()
        context.parents[node] = parent
        pending.extend((child, node) for child in node.children)
    lines = [n for n in context.parents if isinstance(n, cst.SimpleStatementLine)]
    computed = 0
    for line in lines:
        table = context._line_positions(line.body[0])
        if table is None:
            continue
        computed += 1
        for node, where in table.items():
            assert full[node] == where
    assert computed == len(lines) - 1  # all but the top-level `import torch`


STATEMENTS = """\
import torch

AMD = torch.version.hip is not None
ON_AMD = AMD
CAP = torch.cuda.get_device_capability()


def train(args, model, dtype=torch.float8_e4m3fn, steps=10):
    noise = compute_noise(args)
    unrelated = [1, 2, 3]
    for step in range(steps):
        loss = model(step)
        loss.backward()
    if ON_AMD:
        return
    torch.backends.cuda.matmul.allow_tf32 = True
    summary = {"loss": 1}
    return summary


def gate(model):
    limit = 5
    unused = "text"
    major = CAP[0]
    helper = model.helper
    if major >= 8:
        use_bf16 = True
    threshold = limit + 1
    if threshold > 3:
        return threshold
    return use_bf16


def declares(model):
    global CAP
    value = model.value
    CAP = value
    other = 2
    return torch.float8_e4m3fn


def loops(model, batches):
    scale = 2
    for batch in batches:
        out = model(batch)
        with torch.no_grad():
            out.backward()
            if torch.cuda.get_device_capability() >= (9, 0):
                scale = 3
        log(out)
    return scale


def counted(model):
    x = model.one
    x = model.two
    total = 0
    if x >= (8, 0) and torch.cuda.get_device_capability() >= (9, 0):
        return total
    return 0
"""


def test_statements_no_rule_needs_are_blanked_inside_kept_bodies(monkeypatch, reductions):
    """Inside a body that holds a token, statements are blanked one by one; guards read through
    a flag (`if ON_AMD: return`), bindings that kept statements read (to a fixpoint, so
    binding counts stay), `global` names and parameters' own defaults are kept."""
    source = SourceFile("statements.py", "python", STATEMENTS)
    specs = [r for r in LINTABLE if r.id in ("tf32-flags", "device-capability-gate", "fp8-dtype")]
    for linter in (Linter(LINTABLE), *(Linter([s]) for s in specs)):
        full, fast = _both(monkeypatch, lambda linter=linter: linter.lint_source(source))
        assert _json(fast) == _json(full)
    full = Linter(LINTABLE).lint_source(source)
    assert {d.rule for d in full} >= {"device-capability-gate", "fp8-dtype"}
    assert not any(d.rule == "tf32-flags" for d in full)  # ROCm returned early
    tokens = {t for s in specs for t in s.tokens}
    reduced = python_fast.reduce(STATEMENTS, ast.parse(STATEMENTS), tokens)
    assert reduced is not None and len(reduced) == len(STATEMENTS)
    ast.parse(reduced)
    kept = reduced.replace(" ", "")
    for line in ("ifON_AMD:", "allow_tf32=True", "major=CAP[0]", "ifmajor>=8:", "globalCAP"):
        assert line in kept
    # `value` is read by the kept `CAP = value`; both bindings of `x` are read by the gate
    for line in ("value=model.value", "CAP=value", "x=model.one", "x=model.two", "total=0"):
        assert line in kept
    for line in ("noise=", "unrelated=", "loss.backward()", "summary=", "unused=", "other=2"):
        assert line not in kept
    assert "limit=5" not in kept and "threshold=limit+1" not in kept
    # a loop or `with` holding a hit keeps its header; its other statements go
    assert "forbatchinbatches:" in kept and "withtorch.no_grad():" in kept
    assert "scale=2" in kept and "scale=3" in kept  # both bindings of a name kept code reads
    assert "out=model(batch)" not in kept and "log(out)" not in kept


def test_parameters_are_bound_to_their_own_defaults():
    """`def f(a, dtype=torch.float8_e4m3fn)`: `dtype` is bound to what holds a token, `a`
    is not (the whole header would bind every parameter)."""
    text = "import torch\n\ndef f(a, b: int = 1, dtype=torch.float8_e4m3fn, *, c=None):\n    pass\n"
    tree = ast.parse(text)
    found = python_fast._bound_names(
        text, tree, python_fast._Offsets(text), {"float8_e4m3fn"}, {"float8_e4m3fn"}
    )
    assert "dtype" in found and not found & {"a", "b", "c"}


WORDS = """\
import torch


def shipping(global_step, chip):
    relationship = global_step + chip
    return relationship


def train(args):
    model = build(args)

    def hook(model, weights=None):
        return weights

    if args.allow_tf32:
        torch.backends.cuda.matmul.allow_tf32 = True
    if IS_HIP:
        return hook
    return model
"""


def test_vendor_words_and_names_match_whole_identifiers(monkeypatch, reductions):
    """`ship`, `chip` and `global_step` are not vendor words or `global`; a nested function's
    parameter `model` is not a read of the enclosing `model`; `IS_HIP` is a vendor word."""
    source = SourceFile("words.py", "python", WORDS)
    for linter in (Linter(LINTABLE), Linter([r for r in LINTABLE if r.id == "tf32-flags"])):
        full, fast = _both(monkeypatch, lambda linter=linter: linter.lint_source(source))
        assert _json(fast) == _json(full)
    reduced = python_fast.reduce(WORDS, ast.parse(WORDS), {"tf32"})
    kept = reduced.replace(" ", "")
    assert "relationship=" not in kept  # the whole body of `shipping` is blanked
    assert "ifIS_HIP:" in kept and "allow_tf32=True" in kept and "defhook(" in kept
    assert "model=build(args)" not in kept and "returnweights" not in kept


def _alternation_rules(linter: Linter, language: str, data: bytes) -> list[str]:
    """The prefilter's meaning: one alternation of every token, longest first, closed under
    containment (what `Linter.applicable` computed before it looked for tokens one by one)."""
    import re

    _, rules = linter._rules_for(language)
    tokens = sorted({t for r in rules for t in r.tokens}, key=len, reverse=True)
    if any(not r.tokens for r in rules):
        return [r.id for r in rules]
    pattern = re.compile(b"|".join(re.escape(t.encode()) for t in tokens))
    found = {m.decode() for m in pattern.findall(data)}
    found |= {t for t in tokens if any(t in f for f in found)}
    return [r.id for r in rules if found.intersection(r.tokens)]


def test_prefilter_finds_what_the_alternation_finds():
    """Tokens looked for one by one give the alternation's verdict, also where one token
    starts inside another (`dim3` then `32` in `dim32`: the alternation reports `dim3` only)."""
    import random

    rng = random.Random(5)
    for linter in (Linter(LINTABLE), Linter([r for r in RULES if r.default])):
        for language in ("python", "cuda", "cmake", "requirements", "dockerfile", "shell"):
            _, rules = linter._rules_for(language)
            tokens = sorted({t for r in rules for t in r.tokens})
            if not tokens:
                continue
            samples = [b"dim32", b"x = 1\n", b""]
            for _ in range(300):
                parts = []
                for _ in range(rng.randint(1, 4)):
                    token = rng.choice(tokens)
                    cut = rng.randint(0, len(token))
                    parts.append(rng.choice([token, token[cut:], token[:cut], " "]))
                samples.append("".join(parts).encode())
            for data in samples:
                expected = _alternation_rules(linter, language, data)
                assert [r.id for r in linter.applicable(language, data)] == expected, data


HEADERS = """\
import torch


def main(args, cap):
    if cap >= (8, 0) and args.x:  # a comment
        y = 1
    elif cap < (7, 0):
        y = 2
    else:
        y = 3
    for i, (a, b) in enumerate(zip(args.a, args.b)):
        while i > cap[0]:
            i -= 1
        else:
            pass
    with torch.autocast("cuda", dtype=torch.bfloat16) as ctx, open(
        args.path
    ) as fh:
        if (
            cap[0]
            >= 9
        ): z = 1
    async def inner():
        async for q in source():
            if q: pass
        async with lock() as held:
            pass
    try:
        if cap:
            pass
    except ValueError:
        pass


class C:
\tdef m(self):
\t\tif self.cap >= 8:
\t\t\treturn 1
"""


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_header_positions_agree_with_whole_file_positions(newline):
    """Positions computed from a nested `if`/loop/`with` header alone (its blocks left out)
    equal LibCST's whole-file ones for every node that gets them; `elif` headers do not."""
    import libcst as cst
    from libcst.metadata import PositionProvider

    from cuda2rocm.frontends import python, python_fast
    from cuda2rocm.sources import SourceFile

    text = HEADERS.replace("\n", newline)
    source = SourceFile("m.py", "python", text)
    wrapper = python.parse(source)
    full = wrapper.resolve(PositionProvider)
    context = python.FileContext(source, wrapper, python_fast.parse_ast(text))
    pending = [(wrapper.module, None)]
    while pending:
        node, parent = pending.pop()
        context.parents[node] = parent
        pending.extend((child, node) for child in node.children)
    checked = set()
    for node in list(context.parents):
        if isinstance(node, cst.Module):
            continue
        table = context._line_positions(node)
        if table is not None and node in table:
            assert full[node] == table[node], node
            checked.add(type(node).__name__)
    headers = {type(n).__name__ for n in context._header_tables if context._header_tables[n]}
    assert headers >= {"If", "For", "While", "With"}
    assert "Comparison" in checked and "Call" in checked
    elif_test = next(
        n
        for n in context.parents
        if isinstance(n, cst.If)
        and n.test.__class__ is cst.Comparison
        and "7" in cst.Module([]).code_for_node(n.test)
    )
    assert context._line_positions(elif_test.test) is None


CALLERS = """\
import os
import subprocess

IS_HIP = os.environ.get("USE_HIP") == "1"


def add_flags(flags):
    flags.append("--use_fast_math")
    subprocess.run(["nvcc", "--version"])


def helper():
    x = 1
    add_flags([])
    return x


def unrelated():
    y = 2
    return y


def main():
    if not IS_HIP:
        add_flags([])
    helper()
"""


def test_callers_of_functions_holding_a_finding_are_kept(monkeypatch, reductions):
    """nvcc-flags and nvcc-invocation ask where a function holding a finding is called from:
    every call of it stays (and the calls of its callers), other bodies still go."""
    source = SourceFile("build.py", "python", CALLERS)
    specs = [r for r in LINTABLE if r.id in ("nvcc-flags", "nvcc-invocation")]
    for linter in (Linter(LINTABLE), *(Linter([s]) for s in specs)):
        full, fast = _both(monkeypatch, lambda linter=linter: linter.lint_source(source))
        assert _json(fast) == _json(full)
    assert {d.rule for d in Linter(LINTABLE).lint_source(source)} >= {"nvcc-invocation"}
    tokens = {t for s in specs for t in s.tokens}
    reduced = python_fast.reduce(CALLERS, ast.parse(CALLERS), tokens, callers=True)
    kept = reduced.replace(" ", "")
    assert "add_flags([])\n" in kept and "helper()\n" in kept  # callers, and theirs
    assert "y=2" not in kept and "x=1" not in kept
    alone = python_fast.reduce(CALLERS, ast.parse(CALLERS), tokens).replace(" ", "")
    assert "helper()\n" not in alone and alone.count("add_flags([])") == 1


VALUES = """\
import torch

CAP = torch.cuda.get_device_capability()[0]
TILE = 2 * 128 if CAP == 10 else 128
MAJOR = CAP


def tiles(n):
    width = TILE * n
    return width


def gate():
    if MAJOR >= 9:
        return 1
    return 0
"""


def test_value_following_rules_follow_plain_values_only(monkeypatch, reductions):
    """device-capability-gate follows a name into its value through names, attributes,
    subscripts, arithmetic, tuples and callees only: `TILE = ... if CAP == 10 else ...`
    gives TILE no capability, so a body reading TILE alone is blanked; MAJOR = CAP is
    followed."""
    source = SourceFile("values.py", "python", VALUES)
    spec = next(r for r in LINTABLE if r.id == "device-capability-gate")
    for linter in (Linter(LINTABLE), Linter([spec])):
        full, fast = _both(monkeypatch, lambda linter=linter: linter.lint_source(source))
        assert _json(fast) == _json(full)
    assert any(d.position.line == 14 for d in Linter([spec]).lint_source(source))
    tree = ast.parse(VALUES)
    reduced = python_fast.reduce(VALUES, tree, spec.tokens, (), follows_values=spec.tokens)
    kept = reduced.replace(" ", "")
    assert "ifMAJOR>=9:" in kept and "width=TILE*n" not in kept
    broad = python_fast.reduce(VALUES, tree, spec.tokens).replace(" ", "")
    assert "width=TILE*n" in broad  # any identifier: TILE reads CAP


DECORATED = """\
import unittest

import torch
from parameterized import parameterized

skip_rocm = unittest.skipIf(torch.version.hip is not None, "flaky on ROCm")


def widen(x):
    y = x.expand(4, 4)
    return y


class Cases(unittest.TestCase):
    @skip_rocm
    @parameterized.expand([(1,), (2,)])
    def test_sizes(self, n):
        z = torch.ones(n).expand(2, n)
        self.assertEqual(z.shape[0], 2)

    def test_plain(self):
        w = torch.ones(3).expand(2, 3)
        self.assertEqual(w.shape[1], 3)


def factory():
    class Inner(unittest.TestCase):
        @unittest.skipIf(torch.version.hip, "no ROCm")
        @parameterized.expand([(3,)])
        def test_inner(self, n):
            self.assertTrue(n)

    return Inner
"""


def test_decorator_only_tokens_keep_decorated_bodies_only(monkeypatch, reductions):
    """rocm-skip-above-expand reports decorators: a body that calls a tensor's `.expand`
    is blanked, a body holding an `expand` decorator (a class made in a function) is kept."""
    source = SourceFile("test_cases.py", "python", DECORATED)
    spec = next(r for r in LINTABLE if r.id == "rocm-skip-above-expand")
    for linter in (Linter(LINTABLE), Linter([spec])):
        full, fast = _both(monkeypatch, lambda linter=linter: linter.lint_source(source))
        assert _json(fast) == _json(full)
    found = {d.position.line for d in Linter([spec]).lint_source(source)}
    assert found == {15, 28}  # the skips
    tree = ast.parse(DECORATED)
    kept = python_fast.reduce(DECORATED, tree, (), (), decorator_tokens=spec.tokens)
    kept = kept.replace(" ", "")
    assert "y=x.expand(4,4)" not in kept and "w=torch.ones(3)" not in kept
    assert "z=torch.ones(n)" not in kept  # a decorated method's own body goes too
    assert "@parameterized.expand([(3,)])" in kept and "classInner(" in kept
    as_token = python_fast.reduce(DECORATED, tree, spec.tokens, ()).replace(" ", "")
    assert "y=x.expand(4,4)" in as_token  # an ordinary token keeps every body spelling it


MULTI_LINE_DECORATORS = """\
class Cases:
    @(
        parameterized
        .expand
    )([(1,)])
    def test_a(self, n):
        pass

    @parameterized.expand(
        [(2,)],
        name_func=lambda f, n, p: "x",
    )
    async def test_b(self, n):
        pass


@parameterized \\
    .expand([(3,)])
def test_c(n):
    return n.expand(1)
"""


@pytest.mark.parametrize(
    "text",
    [DECORATED, MULTI_LINE_DECORATORS, "x = a\n@b.expand\ndef f(): pass\n"]
    + [p.values[1].code for p in _examples()],
)
def test_the_text_check_is_a_superset_of_the_decorator_check(text):
    """`may_decorate` (text only) says yes wherever `decorator_hits` (the parsed tree) finds
    a decorator spelling the token: a rule it leaves out has nothing to find."""
    tree = python_fast.parse_ast(text)
    if tree is None:
        return
    for token in ("expand", "parameterized", "skip"):
        if python_fast.decorator_hits(text, tree, [token]):
            assert python_fast.may_decorate(text, [token]), token
    assert not python_fast.may_decorate("y = x.expand(2)\n# @expand\n", ["expand"])


def test_a_decorator_only_rule_with_no_such_decorator_parses_nothing(monkeypatch):
    """A file that spells `expand` only in tensor calls gives rocm-skip-above-expand nothing
    to find: with no other rule on it, LibCST never parses it (and both paths agree)."""
    text = "import torch\n\n\ndef widen(x):\n    return x.expand(4, 4)\n"
    source = SourceFile("widen.py", "python", text)
    spec = next(r for r in LINTABLE if r.id == "rocm-skip-above-expand")
    parsed = []
    original = python.parse
    monkeypatch.setattr(python, "parse", lambda *a: parsed.append(a) or original(*a))
    full, fast = _both(monkeypatch, lambda: Linter([spec]).lint_source(source))
    assert _json(full) == _json(fast) == []
    assert len(parsed) == 1  # the full path only


WHOLE_IDENTIFIERS = """\
import torch
from torch.backends import cudnn as dnn

VERSION = torch.backends.cudnn.version()
ALIASED = dnn.version()
OUT = torch.ops.aten._scaled_dot_product_cudnn_attention(1, 2, 3)


def gate():
    if VERSION < 8000:
        return 1
    return 0


def aliased():
    return ALIASED >= 8900


def attention():
    result = OUT[0] + 1
    return result
"""


def test_value_following_starts_from_whole_identifiers(monkeypatch, reductions):
    """cudnn-version-gate follows names bound to `torch.backends.cudnn.version()` (the token
    as a whole identifier, through an import alias too), not to a call that merely spells
    `cudnn` inside its name: `attention` reads only such a name and is blanked."""
    source = SourceFile("gates.py", "python", WHOLE_IDENTIFIERS)
    spec = next(r for r in LINTABLE if r.id == "cudnn-version-gate")
    for linter in (Linter(LINTABLE), Linter([spec])):
        full, fast = _both(monkeypatch, lambda linter=linter: linter.lint_source(source))
        assert _json(fast) == _json(full)
    assert {d.position.line for d in Linter([spec]).lint_source(source)} == {10, 16}
    tree = ast.parse(WHOLE_IDENTIFIERS)
    kept = python_fast.reduce(WHOLE_IDENTIFIERS, tree, spec.tokens, (), follows_values=spec.tokens)
    kept = kept.replace(" ", "")
    assert "ifVERSION<8000:" in kept and "returnALIASED>=8900" in kept
    assert "result=OUT[0]+1" not in kept


LOCAL_FLAGS = """\
import torch

IS_ROCM = torch.version.hip is not None


def expected(pipe):
    output = 0.9 if IS_ROCM else 1.0
    if output > 0.5:
        torch.backends.cuda.matmul.allow_tf32 = True
    return output


def other(pipe):
    output = pipe(2)
    torch.backends.cudnn.allow_tf32 = True
    return output


def third(pipe):
    flag = IS_ROCM
    def inner():
        if flag:
            return 1
        torch.backends.cuda.matmul.allow_tf32 = False
    return inner
"""


def test_a_functions_own_vendor_flags_keep_only_its_body(monkeypatch, reductions):
    """`output` is bound to a vendor test inside `expected` only: `other`'s own `output` says
    nothing of the vendor, so its unrelated statements go; a closure reading its enclosing
    function's flag stays. Both paths agree."""
    source = SourceFile("flags.py", "python", LOCAL_FLAGS)
    spec = next(r for r in LINTABLE if r.id == "tf32-flags")
    for linter in (Linter(LINTABLE), Linter([spec])):
        full, fast = _both(monkeypatch, lambda linter=linter: linter.lint_source(source))
        assert _json(fast) == _json(full)
    tree = ast.parse(LOCAL_FLAGS)
    kept = python_fast.reduce(LOCAL_FLAGS, tree, spec.tokens, ()).replace(" ", "")
    assert "ifoutput>0.5:" in kept and "returnoutput\n" in kept  # expected's flag
    assert "output=pipe(2)" not in kept  # other's output is its own
    assert "ifflag:" in kept
    shared = LOCAL_FLAGS.replace("def other(pipe):\n", "def other(pipe):\n    global output\n")
    kept = python_fast.reduce(shared, ast.parse(shared), spec.tokens, ()).replace(" ", "")
    assert "output=pipe(2)" in kept  # `global`: one scope, as before


LOCAL_TORCH = """\
import os

FLAGS = ["-O3", "--use_fast_math"]


def unrelated():
    value = os.getcwd()
    return value


def extension():
    import torch.utils.cpp_extension as ce

    return ce.CUDAExtension("x", ["k.cu"], extra_compile_args={"nvcc": FLAGS})
"""


def test_a_torch_import_anywhere_stays(monkeypatch, reductions):
    """A fix that adds `from torch.utils.cpp_extension import ...` asks whether the file
    imports torch anywhere: a function's own torch import stays while unrelated bodies go."""
    source = SourceFile("setup.py", "python", LOCAL_TORCH)
    specs = [r for r in LINTABLE if r.id in ("nvcc-flags", "nvcc-invocation")]
    for linter in (Linter(LINTABLE), *(Linter([s]) for s in specs)):
        full, fast = _both(monkeypatch, lambda linter=linter: linter.lint_source(source))
        assert _json(fast) == _json(full)
    tree = ast.parse(LOCAL_TORCH)
    kept = python_fast.reduce(LOCAL_TORCH, tree, {"tf32"}).replace(" ", "")
    assert "importtorch.utils.cpp_extensionasce" in kept and "value=os.getcwd()" not in kept


@pytest.mark.parametrize(
    "text",
    [
        "IS_HIP = 1; ship = torch.version.hip; global_step = 2\nglobal x; nonlocal y\n",
        "# café ROCm HIP_VISIBLE_DEVICES éhip\nx = 'naïve rocr'\n",
        "# İstanbul: lowering changes the length\nIS_HIP = 'İ' + 'hip'\n",
    ],
)
def test_vendor_word_hits_cover_the_context_pattern(text):
    """The `str.find` search for vendor words finds every place the CONTEXT pattern does."""
    import re

    expected = {m.start() for m in re.finditer(python_fast.CONTEXT, text)}
    found = set(python_fast._context_hits(python_fast._Offsets(text)))
    assert expected and expected <= found


DECLARATIONS = """\
counter = 0


def one():
    global counter
    counter += 1


def two(): global counter; counter = 2


def three():
    x = 1; global counter
    def inner():
        nonlocal x
        if x: nonlocal x
        x = 3
    return inner


def unrelated(global_step):
    # the global batch size, not a declaration
    return global_step * 2
"""


def test_declaration_statements_are_found_and_words_are_not():
    """Every `global`/`nonlocal` statement's keyword is a hit (in any statement position the
    grammar allows); the word in a comment or an identifier is not, so `unrelated` goes."""
    tree = ast.parse(DECLARATIONS)
    offsets = python_fast._Offsets(DECLARATIONS)
    found = {m.start(1) for m in python_fast.DECLARATION.finditer(DECLARATIONS)}
    statements = [
        offsets.start(n) for n in ast.walk(tree) if isinstance(n, (ast.Global, ast.Nonlocal))
    ]
    assert len(statements) == 5 and set(statements) == found
    kept = python_fast.reduce(DECLARATIONS, tree, {"tf32"}).replace(" ", "")
    assert "returnglobal_step*2" not in kept and "counter+=1" in kept


@pytest.mark.parametrize(
    "segment",
    ["x = 1", "if a:\n    b = 2\n    c = 3", "f(\r\n  1)", "s = 'é'\nt = 'ü'\n  u = 1", "ab\n"],
)
def test_a_blanked_segment_keeps_every_line_end_in_place(segment):
    """Blanking keeps the length and every line end's offset (positions stay exact)."""
    blank = python_fast._blank(segment)
    assert len(blank) == len(segment)
    assert [i for i, c in enumerate(blank) if c in "\r\n"] == [
        i for i, c in enumerate(segment) if c in "\r\n"
    ]
    assert ast.parse(blank)  # one statement that holds nothing
