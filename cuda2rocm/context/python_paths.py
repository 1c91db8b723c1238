"""Which Python statements a ROCm build of PyTorch provably never runs.

One pass of the standard library's `ast` per file, run twice: once with what a ROCm build
defines and once with what a CUDA build defines. Each pass walks the module in order, keeping
what it knows of every name (a constant, "not None and true", unknown) and marking code that
cannot run: a branch whose test is known, the rest of a block after a statement that always
leaves it (`if IS_ROCM: return`; also a call that never returns, `LEAVING`: pytest's `skip`,
`xfail`, `fail` and `exit` raise their outcome exceptions, `self.skipTest` raises
`unittest.SkipTest`, `sys.exit` raises SystemExit, `os._exit` ends the process), the untaken
side of `a if t else b`, the operands after a short-circuited `and`/`or` (also after unknown
ones: an unknown operand may end the chain or not, a later known one ends it where it gets that
far). A finding is *guarded* when its position is dead in the ROCm pass
and not dead in the CUDA pass: the vendor is what takes it off the ROCm path. Code dead on both
(after a plain `return`, or only behind an environment variable) stays reported.

What the passes know (torch 2.13, `torch/version.py`, `torch/utils/cpp_extension.py`):

- `torch.version.hip` is the HIP version string on ROCm, None on CUDA; `torch.version.cuda` is
  None on ROCm, a version string on CUDA (PyTorch's "HIP (ROCm) semantics" notes).
- `cpp_extension.ROCM_HOME = _find_rocm_home() if (torch.cuda._is_compiled() and
  torch.version.hip) else None` (line 352): always None on a CUDA build. On ROCm it is the SDK
  path; a ROCm extension build cannot run without it (torch finds hipcc through it), so it is
  taken as "not None" on ROCm. `IS_HIP_EXTENSION = bool(ROCM_HOME is not None and
  torch.version.hip is not None)` (line 354): True on ROCm with the SDK, False on CUDA. The one
  case this misses is a ROCm wheel *run* on a machine with no ROCm SDK at all, where
  `IS_HIP_EXTENSION` is False; code gated on it is about building extensions, which needs the SDK.
- Names bound from these (`IS_ROCM = torch.version.hip is not None`), followed in program
  order, joined over branches (two branches that bind different values leave it unknown), and
  made unknown by any binding inside a loop, `try`, `with` or by a `global` statement anywhere.
- Project helpers that return them: a function whose live `return`s all give one known value
  (`def is_rocm_pytorch(): return torch.version.hip is not None`), called without arguments,
  as a method of the enclosing class or its bases (`self.is_rocm_pytorch()`), or imported by
  name from another module of the project (`ProjectIndex`, built once per run).
- Build files only (`env_defaults`, used by `context.build`): environment variables take their
  default (`os.getenv("BUILD_TARGET", "auto")`, None without one), i.e. the project's default
  ROCm build, as its documentation describes it. Code dead because of an environment default
  alone is dead on CUDA too, so it is never guarded; but `if not IS_ROCM or os.getenv("X")`
  would be, so runtime code reads every environment variable as unknown.
- Build scripts (`is_build_script`, and build files): an environment variable compared with a
  vendor's name (flash-attention's `BUILD_TARGET = os.environ.get("BUILD_TARGET", "auto")`,
  `if BUILD_TARGET == "cuda":`) is the project's build-target switch: a ROCm build is never one
  whose target says "cuda" (that is a CUDA build), and the reverse. Other values ("auto") and
  other comparisons stay unknown.
- Any code: a flag spelled as a boolean "this is the ROCm build" test (`VENDOR_FLAG`: `is_hip`,
  `IS_ROCM`, `_is_hip`, `on_rocm`, `HIP_BUILD`, `is_rocm_build`), read as a name, an attribute
  of anything but a class's method (`runtime.is_hip`, `backend.is_hip`) or a zero-argument call
  (`is_rocm()`), whose value the pass cannot work out (imported from outside the run, computed
  by an unknown call) is True on ROCm and False on CUDA. The name is the project's statement of
  what the value means; a ROCm run of the project is, by that statement, one where it is true.
  The rule is strict because its risk is a flag that means something else: so options and
  requests (`use_rocm`, `with_hip`: the user may ask for what the build lacks), `hip` or `rocm`
  alone (a module, a version), and CUDA-named flags (`is_cuda`: ROCm reuses "cuda", a tensor's
  `is_cuda` is True there) never count; nor does a function's parameter (`def f(is_hip=False)`:
  a code generator may be asked for HIP code on a CUDA machine), nor a name the project binds to
  different known values by path (`OPAQUE`: its own computation, which the pass followed), and a
  known value always wins over the name. The reason says the flag was read by its name.
- Build files only: a flag or zero-argument helper *named* for the ROCm build (`ROCM_BUILD_NAME`:
  TransformerEngine's `rocm_build()`, `IS_ROCM`, `use_hip`) whose value the pass cannot work
  out (it reads the environment or probes for hipcc/nvcc) is True on ROCm and False on CUDA. The
  project's build helpers decide which build this is; a ROCm build of the project is, by the
  project's own definition, one where its ROCm-build test is true (as `build_defines` reads
  such names for `-D` flags). Runtime code uses the stricter `VENDOR_FLAG` above: an option's
  name (`use_rocm`) may mean anything there.

Tests the project skips on ROCm (unittest's "Skipping tests and expected failures",
https://docs.python.org/3/library/unittest.html#unittest-skipping; pytest's "How to use skip
and xfail", https://docs.pytest.org/en/stable/how-to/skipping.html, and "Marking whole classes
or modules", https://docs.pytest.org/en/stable/example/markers.html):

- `@unittest.skipIf(c, ...)`, `@pytest.mark.skipif(c, ...)` (any of several conditions, or
  `condition=`; a string condition is evaluated as an expression over the module's names, as
  pytest does), `@unittest.skipUnless(c, ...)` with `c` false, `@pytest.mark.xfail(c,
  run=False)` (pytest never runs it), stacked in any order (below the last
  `@parameterized.expand`, which builds its tests from the function below it), on a function or
  a class, directly or through a name bound to one (`Mark`, exported to other modules).
- `pytestmark = marker` or a list of markers: pytest applies them to every test it collects from
  the module or class. A module's: its top-level `test*` functions and test classes (`Test*`, or
  `TestCase` subclasses), by pytest's default `python_functions`/`python_classes`; a test
  another file names stays reported (it may be collected there, without the mark). Only a
  module's one plain `pytestmark = ...` binding counts (under a branch or rebound, its final
  value is not known).
- What a skip takes away: a function's body, and the other decorators' arguments (they only
  parametrize it); a class's methods, nested classes and the statements of its body that call
  nothing. Statements that call something, of a skipped class's body or of a module under
  `pytestmark`, run at import on ROCm too: reported. A top-level string bound once
  (`_data_only_where_dead`: a kernel source) every read of which is dead on ROCm is dead too:
  binding a string runs at import, but it is only data, and only what reads it can hand it to a
  compiler. That needs the whole run (`ProjectIndex.toplevel`: no other file may name it,
  `from .test_ops import KERNEL`), and the string must do nothing but make its value (literals,
  f-strings, `textwrap.dedent`, a literal's own methods); a name also rebound, declared
  `global` or spelled as a string (`__all__`, `getattr`) stays reported.

What is not provable, and so stays reported:

- Runtime code comparing values (`device = "cuda" if torch.version.cuda else "cpu"` ...
  `if device == "cuda":`): such a value is data the report itself often asks to change (the
  first line is a torch-version-cuda finding), not a vendor test, so outside build files only
  truth and `is None` are followed, never `==` between constants.

- `torch.cuda.is_available()`, device counts and properties: true on ROCm as well.
- Import fallbacks, `try: import pynvml` / `except ImportError:`. Whether the import succeeds
  is a fact about the installed packages, not the vendor: pynvml (pure ctypes) imports fine on
  ROCm and fails only at `nvmlInit()`, and NVIDIA-only wheels can be installed anywhere. Neither
  the body nor the handler is provably skipped, and a flag either binds to a known value
  (`IS_HIP = True` after the import) is `OPAQUE`, not read by its name.
- `hasattr(torch.amp, "custom_fwd")` and other feature gates: they test the torch version,
  which is the same question on both vendors.
- `torch.version.hip` compared with a version (`>= "6.0"`): the version is not known.
"""

from __future__ import annotations

import ast
import bisect
import dataclasses
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from cuda2rocm.frontends.python_fast import DECLARATION

ROCM, CUDA = "rocm", "cuda"
VENDOR_NAME = {ROCM: "ROCm", CUDA: "CUDA"}


@dataclass(frozen=True)
class Value:
    """What one pass knows of an expression's value: its truth, whether it is None, and the
    constant itself when known (`const` holds a 1-tuple)."""

    truth: bool | None = None
    none: bool | None = None
    const: tuple | None = None
    #: Read from the environment in a build file (`vendor_named`); its text is not known.
    env: bool = False
    #: Strings a container provably does not hold (`x.remove("paddle")` under a ROCm-true
    #: test and nothing added after), so `"paddle" in x` is False.
    lacks: frozenset = frozenset()
    #: A lower bound an `assert x >= (1, 8)` established (the value is at least this): a later
    #: `x < (1, 7)` is False on every build that got past the assert.
    least: tuple | None = None
    #: Not to be read as a vendor flag by its name (`VENDOR_FLAG`): a function's parameter
    #: (the caller's value), or branches that bind different known values (the project's own
    #: computation, which the pass followed and found to differ by path).
    opaque: bool = False
    #: Read as a ROCm flag by its name alone (`VENDOR_FLAG`): the name, for the reason.
    named: str = dataclasses.field(default="", compare=False)

    @classmethod
    def of(cls, value: object) -> Value:
        return cls(bool(value), value is None, (value,))

    @property
    def known(self) -> bool:
        return self.truth is not None or self.none is not None


UNKNOWN = Value()
OPAQUE = Value(opaque=True)
#: Why a branch is dead on every build: an earlier `assert` bounds the value it tests.
RULED_OUT = "false on every build the earlier `assert` admits"
SOME_TRUE = Value(True, False)  # a non-empty string whose text is not known (a version)

#: Qualified name -> its value on each vendor's build (see the module docstring).
FACTS: dict[str, dict[str, Value]] = {
    "torch.version.hip": {ROCM: SOME_TRUE, CUDA: Value.of(None)},
    "torch.version.cuda": {ROCM: Value.of(None), CUDA: SOME_TRUE},
    "torch.utils.cpp_extension.ROCM_HOME": {ROCM: SOME_TRUE, CUDA: Value.of(None)},
    "torch.utils.cpp_extension.IS_HIP_EXTENSION": {ROCM: Value.of(True), CUDA: Value.of(False)},
}
#: The tests true exactly on ROCm builds (shared with the rule-level `VendorGuard`).
ROCM_FLAGS = frozenset(
    name for name, v in FACTS.items() if v[ROCM].truth is True and v[CUDA].truth is False
)
#: Build files only: a project flag or zero-argument helper named for the ROCm build
#: (`rocm_build()`, `IS_ROCM`, `is_rocm_pytorch()`, `USE_HIP`) whose value is not otherwise known.
ROCM_BUILD_NAME = re.compile(
    r"^(?:(?:is|use|with|build|enable)_(?:rocm|hip)(?:_build|_pytorch|_extension|_enabled)?"
    r"|(?:rocm|hip)_(?:build|pytorch|extension|enabled))$",
    re.I,
)
#: Build files only: an environment variable compared with a vendor's name
#: (`BUILD_TARGET == "cuda"`) is a build-target switch; see the module docstring.
VENDOR_NAMES = {"cuda": CUDA, "nvidia": CUDA, "rocm": ROCM, "hip": ROCM, "amd": ROCM}
#: Any code: a name or attribute spelled as a boolean "this is the ROCm build" flag (`is_hip`,
#: `IS_ROCM`, `_is_hip`, `on_rocm`, `HIP_BUILD`) whose value is not otherwise known is true
#: exactly on ROCm; not options (`use_rocm`), not `hip` alone. See the module docstring.
VENDOR_FLAG = re.compile(r"^_*(?:(?:is|on)_(?:rocm|hip)(?:_build)?|(?:rocm|hip)_build)$", re.I)
_FLAG_WORD = r"(?<!\w)_*(?:(?:is|on)_(?:rocm|hip)(?:_build)?|(?:rocm|hip)_build)(?!\w)"
#: Calls that never return (pytest's outcomes raise, `sys.exit` raises SystemExit, `os._exit`
#: ends the process): like `raise`, they always leave the block.
LEAVING = frozenset(
    ("pytest.skip", "pytest.xfail", "pytest.fail", "pytest.exit", "sys.exit", "os._exit")
)
#: Test-skip markers -> whether a true condition skips (`skipUnless` skips on a false one).
SKIP_MARKS = {"skipIf": True, "skipif": True, "skipUnless": False, "xfail": True}
#: A file that reads none of these cannot have a vendor branch (cheap prefilter).
TOKENS = ("version.hip", "version.cuda", "ROCM_HOME", "IS_HIP_EXTENSION", "version import")
_FLAG_TEXT = re.compile(_FLAG_WORD, re.I)
_FLAG_BYTES = re.compile(_FLAG_WORD.encode(), re.I)


@dataclass(frozen=True)
class Module:
    """A name bound to a module or an imported object we only know by its qualified name."""

    name: str


@dataclass(frozen=True)
class Mark:
    """A test-skip marker bound to a name (`skip_rocm = unittest.skipIf(IS_ROCM, ...)`) that
    skips this vendor's tests; `why` names it and its condition."""

    why: str


@dataclass(frozen=True)
class Helper:
    """A function whose result is known: called with no arguments it gives `value`."""

    value: Value


@dataclass(frozen=True)
class ClassInfo:
    """Methods with a known result, looked up through the bases as Python would."""

    methods: dict
    bases: tuple

    def method(self, name: str):
        """The method's known result, from this class or the first base that has it (None
        when no class defines it; UNKNOWN when the one that does has no known result)."""
        if name in self.methods:
            return _resolved(self.methods[name])
        for base in self.bases:
            found = base.method(name)
            if found is not None:
                return found
        return None


class _LazyHelper:
    """A function's `Helper`, worked out the first time something calls it: most functions
    are never called in a test, and working out each one's result walked every body again.
    It sees the names (and the class's methods) as they were where the function was
    defined."""

    __slots__ = ("classes", "env", "node", "owner", "result")

    def __init__(self, owner: _Pass, node: ast.AST, env: Env, classes: list) -> None:
        self.owner, self.node, self.env, self.classes = owner, node, env, classes
        self.result: object = None

    def get(self):
        """The `Helper`, or UNKNOWN (also while it is being worked out: recursion)."""
        if self.result is None:
            self.result = UNKNOWN
            found = self.owner.helper(self.node, self.env, self.classes)
            self.result = found if found is not None else UNKNOWN
            self.owner = self.env = self.classes = None  # the result is all that is needed
        return self.result


def _resolved(value):
    """`value`, a lazy helper replaced by what it gives."""
    return value.get() if isinstance(value, _LazyHelper) else value


def _concrete(value):
    """`value` with every lazy helper worked out, in classes too (the index keeps it)."""
    value = _resolved(value)
    if isinstance(value, ClassInfo):
        methods = {k: _concrete(m) for k, m in value.methods.items()}
        return ClassInfo(
            {k: m for k, m in methods.items() if isinstance(m, Helper)},
            tuple(_concrete(b) for b in value.bases),
        )
    return value


@dataclass(frozen=True)
class Region:
    start: tuple[int, int]  # (line, 0-based UTF-8 column) as `ast` gives them
    end: tuple[int, int]
    reason: str

    def contains(self, line: int, column: int) -> bool:
        return self.start <= (line, column) < self.end


def _span(nodes: list[ast.AST] | ast.AST) -> tuple[tuple[int, int], tuple[int, int]]:
    """A block's span (a list: from the decorators of its first statement, which `lineno`
    leaves out, on), or one node's."""
    block = isinstance(nodes, list)
    nodes = nodes if block else [nodes]
    first, last = nodes[0], nodes[-1]
    start = min(
        [(first.lineno, first.col_offset)]
        + [(d.lineno, 0) for d in getattr(first, "decorator_list", ()) if block]
    )
    return start, (last.end_lineno, last.end_col_offset)


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


Env = dict  # name -> Value | Module | Helper | ClassInfo | Mark


class _Pass:
    """One walk of a module for one vendor; collects dead regions and known names."""

    def __init__(
        self,
        tree: ast.Module,
        text: str,
        vendor: str,
        index: ProjectIndex | None,
        path: Path | None,
        env_defaults: bool = False,
        shared: _Shared | None = None,
        wanted: frozenset[int] | None = None,
    ) -> None:
        self.text, self.vendor, self.index, self.path = text, vendor, index, path
        #: The lines whose deadness is asked (None: all): a function holding none of them
        #: is not walked (what its body knows stays inside it).
        self.wanted = wanted
        self.wanted_sorted = sorted(wanted) if wanted is not None else []
        self.env_defaults = env_defaults
        #: A build script run for one vendor's build (`Paths(build_file=True)`).
        self.build_file = False
        self.dead: list[Region] = []
        #: Comparisons an `assert` bound decided (`RULED_OUT`).
        self.ruled_out: set[int] = set()
        #: What depends on the tree alone, computed once for every pass over it.
        self.shared = shared if shared is not None else _Shared(tree, text)
        self.globals_declared = self.shared.globals_declared
        self.module_env: Env = {}
        self.returns: list[Value] | None = None
        self.classes: list[ClassInfo] = []
        self.tree = tree
        #: The module's one `pytestmark = ...` statement (`_sole_binding`), and why the marks
        #: it binds skip this vendor's tests ("" when they may not).
        self.module_mark_stmt: ast.stmt | None = None
        self.module_mark = ""
        #: Whether a value that lacks items may be in an environment of this pass (set where
        #: one is made or bound; it never goes back): until then no statement can release one.
        self.lacking = False

    # -- entry ---------------------------------------------------------------------------
    def run(self) -> Env:
        env: Env = {}
        self.module_env = env
        # Functions are walked after the module body, with the module's final names.
        self.deferred: list[tuple[ast.AST, Env, list]] = []
        if "pytestmark" not in self.globals_declared:
            self.module_mark_stmt = _sole_binding(self.tree.body, "pytestmark")
        self.block(self.tree.body, env)
        if self.module_mark:
            self.skip_module_tests(self.module_mark)
        for name in self.globals_declared:
            env[name] = UNKNOWN
        while self.deferred:
            node, outer, classes = self.deferred.pop(0)
            if self.wanted is None or _holds_line(node, self.wanted):
                self.function(node, outer, classes)
        return env

    # -- statements ----------------------------------------------------------------------
    def block(self, body: list[ast.stmt], env: Env) -> str | None:
        """Walk `body`; the reason it always leaves (None when it may fall through)."""
        for i, stmt in enumerate(body):
            leaves = self.statement(stmt, env)
            if leaves is not None:
                rest = body[i + 1 :]
                if rest:
                    start, end = _span(rest)
                    self.dead.append(Region(start, end, leaves))
                return leaves
        return None

    def statement(self, stmt: ast.stmt, env: Env) -> str | None:
        if self.lacking and any(isinstance(v, Value) and v.lacks for v in env.values()):
            self.release(stmt, env)
        removed = _removal(stmt)
        if removed is not None:
            name, item = removed
            self.expressions(stmt, env)
            env[name] = _lacking(env.get(name), item)
            self.lacking = True
            return None
        if isinstance(stmt, (ast.Return, ast.Raise, ast.Continue, ast.Break)):
            self.expressions(stmt, env)
            if isinstance(stmt, ast.Return) and self.returns is not None:
                self.returns.append(
                    self.value(stmt.value, env) if stmt.value is not None else Value.of(None)
                )
            return "plain"
        if isinstance(stmt, ast.If):
            return self.if_(stmt, env)
        if isinstance(stmt, ast.Assert):
            self.expressions(stmt, env)
            bound = _lower_bound(stmt.test)
            if bound is not None:
                name, least = bound
                old = env.get(name)
                old = old if isinstance(old, Value) else UNKNOWN
                env[name] = dataclasses.replace(old, least=least)
            return None
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            self.expressions(stmt, env)
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            value = self.value(stmt.value, env) if stmt.value is not None else UNKNOWN
            self.lacking = self.lacking or bool(value.lacks)
            if stmt is self.module_mark_stmt:
                self.module_mark = self.marks_reason(stmt, env)
            why = self.skip_reason(stmt.value, env, "") if len(targets) == 1 else ""
            for target in targets:
                if isinstance(target, ast.Name):
                    env[target.id] = Mark(why) if why else value if len(targets) == 1 else UNKNOWN
                else:
                    self.forget(target, env)
            return None
        if isinstance(stmt, ast.Expr) and self.never_returns(stmt.value, env):
            self.expressions(stmt, env)
            return "plain"
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            self.imports(stmt, env)
            return None
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            env[stmt.name] = UNKNOWN
            self.deferred.append((stmt, env, self.classes))
            if all(_harmless_decorator(d) for d in stmt.decorator_list):
                env[stmt.name] = _LazyHelper(self, stmt, dict(env), self.classes)
            return None
        if isinstance(stmt, ast.ClassDef):
            self.class_(stmt, env)
            return None
        if isinstance(stmt, ast.While):
            self.forget_all(stmt, env)
            test = self.value(stmt.test, env)
            if test.truth is False:
                self.mark_dead(stmt.body, stmt, "body", env)
            else:
                self.block(stmt.body, dict(env))
            self.block(stmt.orelse, dict(env))
            self.forget_all(stmt, env)
            return None
        if isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            self.forget_all(stmt, env)
            inner = dict(env)
            self.block(stmt.body, inner)
            handled = [dict(env) for _ in stmt.handlers]
            for handler, scope in zip(stmt.handlers, handled, strict=True):
                self.block(handler.body, scope)
            self.block(stmt.orelse, inner)
            self.block(stmt.finalbody, dict(env))
            self.forget_all(stmt, env)
            _worked_out(env, self.shared.bound_by(stmt), [inner, *handled])
            return None
        # for, with, match and the rest: their blocks run maybe, maybe more than once.
        self.expressions(stmt, env)
        self.forget_all(stmt, env)
        for field in ("body", "orelse", "finalbody"):
            self.block(getattr(stmt, field, None) or [], dict(env))
        for case in getattr(stmt, "cases", []):
            self.block(case.body, dict(env))
        self.forget_all(stmt, env)
        return None

    def release(self, stmt: ast.stmt, env: Env) -> None:
        """Forget what a container lacks once `stmt` may add to it: any use of its name but
        `"item" in name` (and the removal itself, and `return name`)."""
        if isinstance(stmt, ast.Return):
            return
        node = stmt.test if isinstance(stmt, ast.If) else stmt
        skip = _removal(stmt)
        for name, v in list(env.items()):
            if isinstance(v, Value) and v.lacks and _escapes(node, name, skip):
                env[name] = UNKNOWN

    def if_(self, stmt: ast.If, env: Env) -> str | None:
        self.expressions(stmt.test, env)
        test = self.value(stmt.test, env)
        if test.truth is True:
            if stmt.orelse:
                self.mark_dead(stmt.orelse, stmt, "else", env)
            note = self.by_name(stmt.test, env)
            leaves = self.block(stmt.body, env)
            return self.exit_reason(stmt, leaves, "true" + note)
        if test.truth is False:
            self.mark_dead(stmt.body, stmt, "body", env)
            note = self.by_name(stmt.test, env) if stmt.orelse else ""
            leaves = self.block(stmt.orelse, env)
            return self.exit_reason(stmt, leaves, "false" + note) if stmt.orelse else None
        left, right = dict(env), dict(env)
        membership = _membership(stmt.test)
        if membership is not None:  # where `"item" in name` is false, name lacks item
            item, name, negated = membership
            side = left if negated else right
            side[name] = _lacking(side.get(name), item)
            self.lacking = True
        a, b = self.block(stmt.body, left), self.block(stmt.orelse, right)
        if a is not None and b is None:
            env.clear(), env.update(right)
        elif b is not None and a is None:
            env.clear(), env.update(left)
        else:
            _join(env, left, right)
        return "plain" if a is not None and b is not None else None

    def exit_reason(self, stmt: ast.If, leaves: str | None, truth: str) -> str | None:
        if leaves is None:
            return None
        return (
            f"after `if {self.source(stmt.test)}:` (line {stmt.lineno}), {truth} on ROCm, "
            "which always leaves the block: ROCm never runs this"
        )

    def mark_dead(self, body: list[ast.stmt], stmt: ast.stmt, which: str, env: Env) -> None:
        if not body:
            return
        keyword = "while" if isinstance(stmt, ast.While) else "if"
        test = f"`{keyword} {self.source(stmt.test)}:`"
        note = self.by_name(stmt.test, env)
        if which == "else":
            where = f"inside the else branch of {test} (line {stmt.lineno}), true on ROCm{note}"
        elif any(id(n) in self.ruled_out for n in ast.walk(stmt.test)):
            where = f"inside {test} (line {stmt.lineno}), {RULED_OUT}"
        else:
            where = f"inside {test} (line {stmt.lineno}), false on ROCm{note}"
        start, end = _span(body)
        self.dead.append(Region(start, end, f"{where}: ROCm never runs this"))

    def class_(self, stmt: ast.ClassDef, env: Env) -> None:
        self.expressions(stmt, env)
        skipped = self.skipped(stmt, env)
        own_mark = _sole_binding(stmt.body, "pytestmark")
        bases = tuple(env.get(b.id) for b in stmt.bases if isinstance(b, ast.Name))
        info = ClassInfo({}, tuple(b for b in bases if isinstance(b, ClassInfo)))
        inner = dict(env)
        saved = self.classes
        self.classes = [*saved, info]
        for child in stmt.body:
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.deferred.append((child, env, self.classes))
                if all(_harmless_decorator(d) for d in child.decorator_list):
                    # It sees the methods defined above it (`ClassInfo` as it is now).
                    now = [*saved, ClassInfo(dict(info.methods), info.bases)]
                    info.methods[child.name] = _LazyHelper(self, child, dict(env), now)
                else:
                    info.methods.pop(child.name, None)
            elif isinstance(child, ast.ClassDef):
                self.class_(child, inner)
            else:
                if child is own_mark and not skipped:
                    why = self.marks_reason(child, inner)
                    skipped = bool(why) and self.mark_skipped(stmt, why)
                self.statement(child, inner)
        self.classes = saved
        env[stmt.name] = info

    def function(self, node: ast.AST, outer: Env, classes: list) -> None:
        env = self.scope(node, outer)
        saved, self.classes = self.classes, classes
        if not self.skipped(node, outer):
            self.block(node.body, env)
        self.classes = saved

    def scope(self, node: ast.AST, outer: Env) -> Env:
        """The names a function's body starts with: the enclosing ones it does not bind, and
        its parameters as `OPAQUE` (a parameter named `is_hip` holds what the caller
        passes)."""
        local = self.shared.locals_of(node)
        env = {k: v for k, v in outer.items() if k not in local}
        for name in self.globals_declared:
            env[name] = UNKNOWN
        for arg in _arguments(node.args):
            env.setdefault(arg.arg, OPAQUE)
        return env

    def skip_reason(self, node: ast.AST | None, env: Env, at: str = "@") -> str:
        """Why a test marker skips on this vendor (unittest's "Skipping tests and expected
        failures", pytest's "How to use skip and xfail"): `unittest.skipIf(c, ...)` and
        `pytest.mark.skipif(c, ...)` with `c` known true (pytest: any of its conditions, a
        string one evaluated as pytest does), `skipUnless(c, ...)` with `c` known false,
        `pytest.mark.xfail(c, run=False)` (never run) with `c` true, or a name bound to one
        (`Mark`); "" otherwise."""
        if isinstance(node, ast.Name):
            mark = _resolved(env.get(node.id))
            if isinstance(mark, Mark):
                return f"`{at}{node.id}` (line {node.lineno}) = {mark.why}"
            return ""
        if not isinstance(node, ast.Call):
            return ""
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name not in SKIP_MARKS or (name == "xfail" and not _keyword_is(node, "run", False)):
            return ""
        truths = [self.condition(c, env, name) for c in _conditions(node, name)]
        skips = True in truths if SKIP_MARKS[name] else truths == [False]
        if not skips:
            return ""
        what = "true" if SKIP_MARKS[name] else "false"
        vendor, note = VENDOR_NAME[self.vendor], self.by_name(node, env)
        return f"`{at}{self.source(node)}` (line {node.lineno}), {what} on {vendor}{note}"

    def condition(self, node: ast.AST, env: Env, mark: str) -> bool | None:
        """A marker condition's truth; pytest evaluates a string condition as an expression
        over the module's names ("Conditions as strings"), unittest takes any value."""
        if (
            mark in ("skipif", "xfail")
            and isinstance(node, ast.Constant)
            and isinstance(node.value, str)
        ):
            try:
                node = ast.parse(node.value.strip(), mode="eval").body
            except SyntaxError:
                return None
        return self.value(node, env).truth

    def marks_reason(self, stmt: ast.Assign, env: Env) -> str:
        """Why the markers `pytestmark = ...` binds (one or a list of them) skip here, or ""."""
        value = stmt.value
        marks = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]
        why = next((w for w in (self.skip_reason(m, env, "") for m in marks) if w), "")
        return f"`pytestmark` (line {stmt.lineno}) = {why}" if why else ""

    def skipped(self, node: ast.AST, env: Env) -> bool:
        """Mark what a skip decorator of a test function or class skips here as dead. A
        skip above `@parameterized.expand` does not reach the tests it generates (expand puts
        them into the class namespace from the function below it and returns None), so only
        decorators below the last `expand` count."""
        decorators = list(getattr(node, "decorator_list", ()))
        expands = [i for i, d in enumerate(decorators) if _is_expand(d)]
        for decorator in decorators[expands[-1] + 1 :] if expands else decorators:
            why = self.skip_reason(decorator, env)
            if why:
                return self.mark_skipped(node, why, decorator)
        return False

    def mark_skipped(self, node: ast.AST, why: str, by: ast.AST | None = None) -> bool:
        """Mark what a skip of the test function or class `node` takes off this vendor: a
        function's body; a class's methods, nested classes and the statements of its body
        that call nothing (one that calls runs when the class is created, at import). The
        other decorators' arguments (`@given(x=... if torch.version.cuda else ...)`, expand's
        cases) run at import too, but only parametrize the skipped test."""
        reason = f"skipped by {why}: ROCm never runs this"
        if isinstance(node, ast.ClassDef):
            parts = [[c] for c in node.body if _makes_no_call(c)]
        else:
            parts = [node.body]
        for part in parts:
            if part:
                self.dead.append(Region(*_span(part), reason))
        for other in getattr(node, "decorator_list", ()):
            if other is not by and isinstance(other, ast.Call):
                why_other = f"parametrizes a test skipped by {why}: ROCm never runs this"
                self.dead.append(Region(*_span(other), why_other))
        return True

    def skip_module_tests(self, why: str) -> None:
        """A module's `pytestmark` applies its marks to every test pytest collects from it
        (pytest's "Marking whole classes or modules"): the `test*` functions and the test
        classes (`Test*`, or `unittest.TestCase` subclasses) at its top level. A test whose
        name another file of the run mentions may be imported and collected there, without
        this module's marks: it stays reported (when the run is known: `ProjectIndex`).
        Module-level statements still run at import, so they stay live."""
        functions = getattr(self.index, "foreign", None) or frozenset()
        toplevel = getattr(self.index, "toplevel", None)
        classes = toplevel[1] if toplevel else frozenset()  # see `ProjectIndex.toplevel`
        tests: set[str] = set()
        for stmt in self.tree.body:
            named = classes if isinstance(stmt, ast.ClassDef) else functions
            if _is_test(stmt, tests) and stmt.name not in named:
                self.mark_skipped(stmt, why)

    def helper(self, node: ast.AST, env: Env, classes: list) -> Helper | None:
        """The function's result when called without arguments, if every live `return`
        gives one known value and the body cannot fall off its end."""
        # Only its returns are read: no regions wanted (expressions are not searched).
        sub = _Pass(
            self.tree,
            self.text,
            self.vendor,
            self.index,
            self.path,
            self.env_defaults,
            self.shared,
            frozenset(),
        )
        sub.build_file = self.build_file
        sub.module_env, sub.deferred, sub.classes = self.module_env, [], classes
        sub.returns = []
        sub.lacking = self.lacking
        inner = self.scope(node, env)
        if sub.block(node.body, inner) is None or not sub.returns:
            return None
        first = sub.returns[0]
        if first.truth is None:
            common = frozenset.intersection(*(r.lacks for r in sub.returns))
            return Helper(Value(lacks=common)) if common else None
        if any(r.truth != first.truth for r in sub.returns):
            return None
        return Helper(
            Value(
                first.truth, first.none if all(r.none == first.none for r in sub.returns) else None
            )
        )

    def imports(self, stmt: ast.Import | ast.ImportFrom, env: Env) -> None:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname:
                    env[alias.asname] = Module(alias.name)
                else:
                    root = alias.name.split(".")[0]
                    env[root] = Module(root)
            return
        module = stmt.module or ""
        exported = None
        if (
            self.index is not None
            and self.path is not None
            and (stmt.level or module.split(".")[0] != "torch")
        ):
            exported = self.index.lookup(self.path, module, stmt.level, self.vendor)
        for alias in stmt.names:
            local = alias.asname or alias.name
            if alias.name == "*":
                continue
            if exported is not None and alias.name in exported:
                env[local] = exported[alias.name]
            elif stmt.level:
                env[local] = UNKNOWN
            else:
                env[local] = self.attribute(Module(module), alias.name)

    def never_returns(self, node: ast.AST, env: Env) -> bool:
        """A call that always raises or ends the process (`LEAVING`, imported under any name;
        `self.skipTest(...)`, which raises `unittest.SkipTest`)."""
        if not isinstance(node, ast.Call):
            return False
        func = node.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr == "skipTest"
            and isinstance(func.value, ast.Name)
            and func.value.id in ("self", "cls")
        ):
            return True
        target = self.evaluate(func, env)
        return isinstance(target, Module) and target.name in LEAVING

    def flag(self, name: str) -> Value:
        """A vendor flag named for ROCm (`VENDOR_FLAG`): true exactly in the ROCm pass."""
        return dataclasses.replace(Value.of(self.vendor == ROCM), named=name)

    def by_name(self, node: ast.AST, env: Env) -> str:
        """A note for a reason whose test reads a flag by its name alone, else "" (the CUDA
        pass gives no reasons)."""
        if self.vendor != ROCM:
            return ""
        for sub in ast.walk(node):
            if isinstance(sub, (ast.Name, ast.Attribute, ast.Call)):
                found = self.evaluate(sub, env)
                if isinstance(found, Value) and found.named:
                    return f" (`{found.named}` read as the ROCm-build flag its name says)"
        return ""

    def forget(self, target: ast.AST, env: Env) -> None:
        """An assignment target other than a plain name: the names it rebinds are unknown.
        `x[k] = v` and `x.a = v` rebind no name but change what `x` holds, so `x` is unknown,
        unless `x` is a module (`os.environ["CC"] = "g++"` sets an environment variable; the
        pass reads `os.getenv` the same way after it)."""
        if isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self.forget(element, env)
            return
        if isinstance(target, ast.Starred):
            self.forget(target.value, env)
            return
        base = target
        while isinstance(base, (ast.Subscript, ast.Attribute)):
            base = base.value
        if isinstance(base, ast.Name) and not (
            base is not target and isinstance(env.get(base.id), Module)
        ):
            env[base.id] = UNKNOWN

    def forget_all(self, stmt: ast.AST, env: Env) -> None:
        for name in self.shared.bound_by(stmt):
            env[name] = UNKNOWN

    # -- expressions ---------------------------------------------------------------------
    def expressions(self, node: ast.AST, env: Env) -> None:
        """Dead parts of the expressions of a live statement (not of nested blocks); none
        looked for where no wanted line is (they only add regions there)."""
        if self.wanted is not None and not _touches(node, self.wanted_sorted):
            return
        for sub in _expression_nodes(node):
            if isinstance(sub, ast.IfExp):
                test = self.value(sub.test, env)
                if test.truth is not None:
                    dead, which = (sub.orelse, "else") if test.truth else (sub.body, "if")
                    start, end = _span(dead)
                    self.dead.append(
                        Region(
                            start,
                            end,
                            (
                                f"the {which} side of `... if {self.source(sub.test)} else ...` "
                                f"(line {sub.lineno}), {str(test.truth).lower()} on ROCm"
                                f"{self.by_name(sub.test, env)}: ROCm never evaluates this"
                            ),
                        )
                    )
            elif isinstance(sub, ast.BoolOp):
                stop = isinstance(sub.op, ast.Or)
                for i, operand in enumerate(sub.values[:-1]):
                    truth = self.value(operand, env).truth
                    if truth is stop:
                        start, end = _span(sub.values[i + 1 :])
                        op = "or" if stop else "and"
                        self.dead.append(
                            Region(
                                start,
                                end,
                                (
                                    f"after `{self.source(operand)} {op}` (line {operand.lineno}), "
                                    f"{str(stop).lower()} on ROCm{self.by_name(operand, env)}: "
                                    "ROCm never evaluates this"
                                ),
                            )
                        )
                        break
                    # An unknown operand may stop the chain or not: a later known one still
                    # stops it where the chain gets that far (`x and IS_CUDA and f()`).

    def value(self, node: ast.AST | None, env: Env) -> Value:
        v = self.evaluate(node, env)
        return v if isinstance(v, Value) else UNKNOWN

    def evaluate(self, node: ast.AST | None, env: Env):
        if node is None:
            return UNKNOWN
        if isinstance(node, ast.Constant):
            return Value.of(node.value)
        if isinstance(node, ast.Name):
            if node.id in self.globals_declared:  # rebound from some function: any value
                return UNKNOWN
            bound = env.get(node.id, UNKNOWN)
            found = _resolved(bound)
            if found in (UNKNOWN, OPAQUE) and self.env_defaults and ROCM_BUILD_NAME.match(node.id):
                return Value.of(self.vendor == ROCM)  # build files: see the module docstring
            if found == UNKNOWN and not isinstance(bound, (_LazyHelper, Helper)):
                return self.flag(node.id) if VENDOR_FLAG.match(node.id) else found
            return found
        if isinstance(node, ast.Subscript) and self.build_file:  # os.environ["BUILD_TARGET"]
            base = self.evaluate(node.value, env)
            if isinstance(base, Module) and base.name == "os.environ":
                return Value(env=True)
        if isinstance(node, ast.Attribute):
            return self.attribute(self.evaluate(node.value, env), node.attr)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            v = self.value(node.operand, env)
            return Value.of(not v.truth) if v.truth is not None else UNKNOWN
        if isinstance(node, ast.BoolOp):
            return self.boolean(node, env)
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            return self.compare(node, env)
        if isinstance(node, ast.Call):
            return self.call(node, env)
        if isinstance(node, ast.IfExp):
            test = self.value(node.test, env)
            if test.truth is not None:
                return self.value(node.body if test.truth else node.orelse, env)
        return UNKNOWN

    def attribute(self, base, attr: str):
        """`base.attr`; an attribute named as a ROCm flag (`runtime.is_hip`) of anything but a
        class method is one (`VENDOR_FLAG`)."""
        if isinstance(base, Module):
            name = f"{base.name}.{attr}"
            if name in FACTS:
                return FACTS[name][self.vendor]
            return self.flag(attr) if VENDOR_FLAG.match(attr) else Module(name)
        if isinstance(base, ClassInfo):
            found = base.method(attr)
            if found is not None:
                return found
        return self.flag(attr) if VENDOR_FLAG.match(attr) else UNKNOWN

    def boolean(self, node: ast.BoolOp, env: Env) -> Value:
        stop = isinstance(node.op, ast.Or)  # `or` stops at the first true operand
        values = [self.value(v, env) for v in node.values]
        for v in values:
            if v.truth is None:
                break
            if v.truth is stop:
                return v
        else:
            return values[-1]
        # An unknown operand: every way the chain can end has this truth.
        if any(v.truth is stop for v in values):
            return Value(stop)
        return UNKNOWN

    def compare(self, node: ast.Compare, env: Env) -> Value:
        op, left = node.ops[0], self.value(node.left, env)
        right = self.value(node.comparators[0], env)
        if left.least is not None and len(node.ops) == 1:
            literal = _version_literal(node.comparators[0])
            if literal is not None and isinstance(op, (ast.Lt, ast.LtE)):
                below = literal <= left.least if isinstance(op, ast.Lt) else literal < left.least
                if below:
                    self.ruled_out.add(id(node))
                    return Value.of(False)  # the assert already ruled it out
        if (
            isinstance(op, (ast.In, ast.NotIn))
            and left.const is not None
            and isinstance(left.const[0], str)
            and left.const[0] in right.lacks
        ):
            return Value.of(isinstance(op, ast.NotIn))
        if isinstance(op, (ast.Is, ast.IsNot, ast.Eq, ast.NotEq)):
            for a, b in ((left, right), (right, left)):
                if b.const == (None,) and a.none is not None:
                    same = a.none
                    return Value.of(same if isinstance(op, (ast.Is, ast.Eq)) else not same)
                if a.env and isinstance(op, (ast.Eq, ast.NotEq)) and b.const is not None:
                    target = VENDOR_NAMES.get(str(b.const[0]).lower())
                    if target is not None:
                        same = target == self.vendor
                        return Value.of(same if isinstance(op, ast.Eq) else not same)
            if (
                self.env_defaults  # build files only: see the module docstring
                and left.const is not None
                and right.const is not None
                and isinstance(op, (ast.Eq, ast.NotEq))
            ):
                try:
                    equal = bool(left.const[0] == right.const[0])
                except Exception:
                    return UNKNOWN
                return Value.of(equal if isinstance(op, ast.Eq) else not equal)
        return UNKNOWN

    def call(self, node: ast.Call, env: Env) -> Value:
        func = node.func
        if isinstance(func, ast.Name) and func.id == "hasattr" and len(node.args) == 2:
            # `hasattr(torch.version, "hip")`: both attributes exist on every build (None
            # when not that vendor's), as torch/version.py declares them.
            base, attr = self.evaluate(node.args[0], env), node.args[1]
            if (
                isinstance(base, Module)
                and base.name == "torch.version"
                and isinstance(attr, ast.Constant)
                and f"torch.version.{attr.value}" in FACTS
            ):
                return Value.of(True)
            return UNKNOWN
        if isinstance(func, ast.Name) and func.id == "bool" and len(node.args) == 1:
            v = self.value(node.args[0], env)
            return Value.of(v.truth) if v.truth is not None else UNKNOWN
        if self.env_defaults and _is_env_get(self, func, env) and len(node.args) >= 1:
            default = node.args[1] if len(node.args) > 1 else None
            for kw in node.keywords:
                if kw.arg == "default":
                    default = kw.value
            if default is None:
                return Value.of(None)
            if isinstance(default, ast.Constant):
                return Value.of(default.value)
            return UNKNOWN
        if self.build_file and _is_env_get(self, func, env):
            return Value(env=True)
        if node.args or node.keywords:
            return UNKNOWN
        target = (
            self.evaluate(func, env)
            if not isinstance(func, ast.Attribute)
            or not (isinstance(func.value, ast.Name) and func.value.id in ("self", "cls"))
            else self.own_method(func.attr)
        )
        if isinstance(target, Helper):
            return target.value
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        if not isinstance(target, ClassInfo) and VENDOR_FLAG.match(name):
            return self.flag(f"{name}()")  # `is_hip()`: see the module docstring
        if (
            self.env_defaults
            and isinstance(func, ast.Name)
            and ROCM_BUILD_NAME.match(func.id)
            and not isinstance(target, (Module, ClassInfo))
        ):
            return Value.of(self.vendor == ROCM)  # `rocm_build()`: see the module docstring
        return UNKNOWN

    def own_method(self, name: str):
        for info in reversed(self.classes):
            found = info.method(name)
            if found is not None:
                return found
            break  # only the innermost class is `self`
        return UNKNOWN

    def source(self, node: ast.AST) -> str:
        return _short(self.shared.segment(node) or ast.unparse(node))


class _Shared:
    """What every pass over one tree asks again and again, computed once: the names `global`
    and `nonlocal` declare, the names each block binds, the text's lines."""

    def __init__(self, tree: ast.Module, text: str) -> None:
        self.text = text
        self.globals_declared = (
            {
                n
                for node in ast.walk(tree)
                if isinstance(node, (ast.Global, ast.Nonlocal))
                for n in node.names
            }
            if DECLARATION.search(text)
            else set()
        )
        self._bound: dict[int, tuple[ast.AST, set[str]]] = {}
        self._locals: dict[int, tuple[ast.AST, set[str]]] = {}
        self._lines: list[str] | None = None

    def bound_by(self, stmt: ast.AST) -> set[str]:
        """`_bound_names([stmt])`, built from its nested statements' own (each statement's
        subtree is walked once, not once per statement enclosing it). The node is kept
        alongside, so its id stays its own."""
        hit = self._bound.get(id(stmt))
        if hit is None:
            hit = self._bound[id(stmt)] = (stmt, self._statement_names(stmt))
        return hit[1]

    def _statement_names(self, stmt: ast.AST) -> set[str]:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return {stmt.name}
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            return {alias.asname or alias.name.split(".")[0] for alias in stmt.names}
        names: set[str] = set()
        stack = list(ast.iter_child_nodes(stmt))
        while stack:
            node = stack.pop()
            if isinstance(node, ast.stmt):
                names |= self.bound_by(node)
                continue
            if isinstance(node, ast.Lambda):
                continue
            _add_bound(node, names)
            stack.extend(ast.iter_child_nodes(node))
        return names

    def locals_of(self, function: ast.AST) -> set[str]:
        """The names a function's body and parameters bind."""
        hit = self._locals.get(id(function))
        if hit is None:
            names = {a.arg for a in _arguments(function.args)}
            for stmt in function.body:
                names |= self.bound_by(stmt)
            hit = self._locals[id(function)] = (function, names)
        return hit[1]

    def segment(self, node: ast.AST) -> str | None:
        """`ast.get_source_segment(text, node)`, without splitting the text on every call."""
        if getattr(node, "end_lineno", None) is None or node.end_col_offset is None:
            return None
        if self._lines is None:
            self._lines = _LINES.findall(self.text)
        lines, first, last = self._lines, node.lineno - 1, node.end_lineno - 1
        if first == last:
            return lines[first].encode()[node.col_offset : node.end_col_offset].decode()
        head = lines[first].encode()[node.col_offset :].decode()
        tail = lines[last].encode()[: node.end_col_offset].decode()
        return "".join([head, *lines[first + 1 : last], tail])


#: Lines with their ends, split where `ast.get_source_segment` splits (not at form feeds).
_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def _version_literal(node: ast.AST) -> tuple | None:
    """`[1, 7]`, `(1, 7)`, `1`: a version as a tuple of ints, or None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return (node.value,)
    if isinstance(node, (ast.List, ast.Tuple)) and all(
        isinstance(e, ast.Constant) and isinstance(e.value, int) and not isinstance(e.value, bool)
        for e in node.elts
    ):
        return tuple(e.value for e in node.elts)
    return None


def _lower_bound(test: ast.AST) -> tuple[str, tuple] | None:
    """`assert torch_ver >= [1, 8]` (or `>`): (name, bound)."""
    if (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], (ast.GtE, ast.Gt))
        and isinstance(test.left, ast.Name)
    ):
        literal = _version_literal(test.comparators[0])
        if literal is not None:
            return test.left.id, literal
    return None


def _is_env_get(p: _Pass, func: ast.AST, env: Env) -> bool:
    target = p.evaluate(func, env)
    return isinstance(target, Module) and target.name in ("os.getenv", "os.environ.get")


def _join(env: Env, left: Env, right: Env) -> None:
    for name in left.keys() | right.keys():
        a, b = left.get(name, UNKNOWN), right.get(name, UNKNOWN)
        if a is b:
            env[name] = a
            continue
        a, b = _resolved(a), _resolved(b)
        env[name] = a if a == b else _differing(a, b)
        if a != b and isinstance(a, Value) and isinstance(b, Value) and a.lacks & b.lacks:
            env[name] = Value(lacks=a.lacks & b.lacks)


def _worked_out(env: Env, names: set[str], scopes: list[Env]) -> None:
    """Names a `try` binds to a known value on some path are `OPAQUE`, not unknown: whether
    `try: import x; IS_HIP = True` / `except ImportError: IS_HIP = False` takes the handler is
    a fact about the installed packages, which the pass followed; the name says nothing more."""
    for name in names:
        if any(
            isinstance(s.get(name), Value) and (s[name].known or s[name].opaque) for s in scopes
        ):
            env[name] = OPAQUE


def _differing(a: object, b: object) -> Value:
    """The join of two different values: `OPAQUE` when either is a value the pass knows or
    worked out (the project computes it, path by path), else unknown."""
    worked_out = any(isinstance(v, Value) and (v.known or v.opaque) for v in (a, b))
    return OPAQUE if worked_out else UNKNOWN


def _lacking(old: object, item: str) -> Value:
    return Value(lacks=(old.lacks if isinstance(old, Value) else frozenset()) | {item})


def _removal(stmt: ast.stmt) -> tuple[str, str] | None:
    """(name, item) of a statement `name.remove("item")`."""
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "remove"
        and isinstance(call.func.value, ast.Name)
        and len(call.args) == 1
        and not call.keywords
        and isinstance(call.args[0], ast.Constant)
        and isinstance(call.args[0].value, str)
    ):
        return call.func.value.id, call.args[0].value
    return None


def _membership(test: ast.AST) -> tuple[str, str, bool] | None:
    """(item, name, negated) of a test `"item" in name` / `"item" not in name`."""
    if (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], (ast.In, ast.NotIn))
        and isinstance(test.left, ast.Constant)
        and isinstance(test.left.value, str)
        and isinstance(test.comparators[0], ast.Name)
    ):
        return test.left.value, test.comparators[0].id, isinstance(test.ops[0], ast.NotIn)
    return None


def _escapes(node: ast.AST, name: str, removal: tuple[str, str] | None) -> bool:
    """`node` uses `name` other than as the container of an `in` test (or its own removal)."""
    allowed = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Compare) and all(
            isinstance(o, (ast.In, ast.NotIn)) for o in sub.ops
        ):
            allowed.update(id(c) for c in sub.comparators if isinstance(c, ast.Name))
        if (
            removal is not None
            and isinstance(sub, ast.Attribute)
            and isinstance(sub.value, ast.Name)
            and sub.value.id == removal[0] == name
            and sub.attr == "remove"
        ):
            allowed.add(id(sub.value))
    return any(
        isinstance(sub, ast.Name) and sub.id == name and id(sub) not in allowed
        for sub in ast.walk(node)
    )


def _arguments(args: ast.arguments) -> list[ast.arg]:
    found = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    return found + [a for a in (args.vararg, args.kwarg) if a is not None]


_HARMLESS = {
    "lru_cache",
    "cache",
    "staticmethod",
    "classmethod",
    "functools.lru_cache",
    "functools.cache",
}


def _is_expand(node: ast.AST) -> bool:
    """`@parameterized.expand(...)` (or `@expand(...)`)."""
    func = node.func if isinstance(node, ast.Call) else node
    return (isinstance(func, ast.Attribute) and func.attr == "expand") or (
        isinstance(func, ast.Name) and func.id == "expand"
    )


def _keyword_is(call: ast.Call, name: str, value: object) -> bool:
    """The call passes `name=<value>`, a constant."""
    return any(
        k.arg == name and isinstance(k.value, ast.Constant) and k.value.value is value
        for k in call.keywords
    )


def _conditions(call: ast.Call, mark: str) -> list[ast.AST]:
    """A skip marker's conditions: pytest's `skipif`/`xfail` take any number of positional
    ones (or `condition=`), unittest's `skipIf`/`skipUnless` one (then the reason)."""
    given = [k.value for k in call.keywords if k.arg == "condition"]
    if given:
        return given
    return list(call.args) if mark in ("skipif", "xfail") else call.args[:1]


def _sole_binding(body: list[ast.stmt], name: str) -> ast.Assign | None:
    """The statement of `body` that binds `name`, when it is the block's only binding of it
    (nested functions and classes aside) and a plain `name = ...` directly in `body`: a
    binding under a branch, a loop or a second one leaves its final value unknown."""
    stores = [n for n in _walk_block(body) if isinstance(n, ast.Name) and n.id == name]
    stores = [n for n in stores if not isinstance(n.ctx, ast.Load)]
    for stmt in body:
        if (
            len(stores) == 1
            and isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and stmt.targets[0] is stores[0]
        ):
            return stmt
    return None


def _walk_block(body: list[ast.stmt]) -> Iterator[ast.AST]:
    """Every node of `body`, not entering nested functions' and classes' bodies (their
    decorators, bases and defaults are walked: they run in the block)."""
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stack.extend(node.decorator_list)
            continue
        if isinstance(node, ast.Lambda):
            continue
        stack.extend(ast.iter_child_nodes(node))


def _makes_no_call(stmt: ast.stmt) -> bool:
    """A definition, or a statement that calls nothing (data: a constant, a docstring)."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return True
    return not any(isinstance(n, ast.Call) for n in ast.walk(stmt))


def _is_test(stmt: ast.stmt, tests: set[str]) -> bool:
    """A test pytest collects by default (`python_functions = test`, `python_classes =
    Test`, and `unittest.TestCase` subclasses, also through a test class of this module,
    whose name `tests` collects)."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return stmt.name.startswith("test")
    if not isinstance(stmt, ast.ClassDef):
        return False
    bases = [b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", "") for b in stmt.bases]
    if stmt.name.startswith("Test") or any(b.endswith("TestCase") or b in tests for b in bases):
        tests.add(stmt.name)
        return True
    return False


def _harmless_decorator(node: ast.AST) -> bool:
    if isinstance(node, ast.Call):
        node = node.func
    return ast.unparse(node) in _HARMLESS


def _bound_names(body: Iterable[ast.AST]) -> set[str]:
    """Names a block binds (not counting nested functions' and classes' own bodies)."""
    names: set[str] = set()
    stack = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                names.add(alias.asname or alias.name.split(".")[0])
        _add_bound(node, names)
        stack.extend(ast.iter_child_nodes(node))
    return names


def _add_bound(node: ast.AST, names: set[str]) -> None:
    """Add the name `node` itself binds: a name stored or deleted, an `except` clause's name,
    a walrus target."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
        names.add(node.id)
    elif isinstance(node, ast.ExceptHandler) and node.name:
        names.add(node.name)
    elif isinstance(node, ast.NamedExpr):
        names.add(node.target.id)


def _expression_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """Expressions under `node`, not entering nested statements."""
    stack = (
        [node]
        if isinstance(node, ast.expr)
        else [c for c in ast.iter_child_nodes(node) if isinstance(c, ast.expr)]
    )
    while stack:
        current = stack.pop()
        yield current
        stack.extend(c for c in ast.iter_child_nodes(current) if isinstance(c, ast.expr))


# -- the project index ---------------------------------------------------------------------
class ProjectIndex:
    """Module-level flags and helpers with known values, per Python file of the run, so that
    `from .utils import IS_ROCM` in another file is understood. Built once per run; its
    `digest` is part of every Python file's cache key."""

    def __init__(
        self,
        exports: dict[str, dict[str, dict[str, object]]],
        foreign: frozenset[str] | None = None,
        defined: frozenset[str] | None = None,
        toplevel: tuple[frozenset[str], frozenset[str]] | None = None,
    ) -> None:
        #: resolved path (posix) -> vendor -> name -> Value | Helper | ClassInfo | Mark
        self.exports = exports
        #: Names some file of the run mentions without defining them (`def name`): a function
        #: of that name may be called from there. None: not known (every name may be).
        self.foreign = foreign
        #: Every `def` name of the run's files, or None (not known). `foreign` is only ever
        #: asked about such names, so only those of them go into the digest: a new word in a
        #: comment does not change every Python file's cache key.
        self.defined = defined
        #: (names some file binds at its top level to a string or a class, those of them a
        #: file that does not bind it mentions), or None (not known): `_data_only_where_dead`
        #: and `skip_module_tests` follow only the first less the second.
        self.toplevel = toplevel
        self._by_suffix: dict[str, list[str]] = {}
        for path in exports:
            parts = Path(path).with_suffix("").parts
            if parts and parts[-1] == "__init__":
                parts = parts[:-1]
            for k in range(1, len(parts) + 1):
                self._by_suffix.setdefault(".".join(parts[-k:]), []).append(path)

    @classmethod
    def build(
        cls, files: Iterable[tuple[Path, bytes]], build_files: bool = False, memo=None
    ) -> ProjectIndex:
        """`build_files`: the files are build helpers, run for one vendor's build at a time
        (`Paths(env_defaults=True)`), so every file is read, not only those naming a flag.
        `memo` (warm.FactsMemo): each file's words and passes are kept per file, so a changed
        file derives only its own (a pass that looked up another module's exports is kept
        only while those lookups still give what they gave)."""
        from cuda2rocm.cache import content_hash

        memo = memo if memo is not None else NoMemo()
        candidates = []
        foreign: set[str] = set()
        defined: set[str] = set()
        per_file: list[tuple[str, str]] = []
        for path, data in files:
            digest = content_hash(data)
            others, defs, flagged, bound = memo.per_file(
                "names", (digest,), lambda data=data: _words(data)
            )
            if defs:
                defined.update(defs.split("\n"))
            if others:
                foreign.update(others.split("\n"))
            per_file.append((others, bound))
            if not build_files and not flagged:
                continue
            candidates.append((path.resolve(), data, digest))
        trees: dict[Path, tuple | None] = {}

        def parsed(resolved: Path, data: bytes):
            if resolved not in trees:
                text = data.decode("utf-8", "replace")
                tree = _parse(text)
                trees[resolved] = None if tree is None else (text, tree, _Shared(tree, text))
            return trees[resolved]

        def run(resolved: Path, data: bytes, vendor: str, index: ProjectIndex | None):
            """(lookups it made, exported names), or None: the file does not parse."""
            found = parsed(resolved, data)
            if found is None:
                return None
            text, tree, shared = found
            recorder = None if index is None else _Lookups(index)
            try:
                p = _Pass(tree, text, vendor, recorder, resolved, build_files, shared, frozenset())
                p.build_file = build_files
                env = p.run()
            except (RecursionError, ValueError, TypeError, AttributeError):
                env = {}  # a pathological file: left out of the index
            concrete = {k: _concrete(v) for k, v in env.items()}
            exported = {
                k: v
                for k, v in concrete.items()
                if (isinstance(v, Value) and v.known) or isinstance(v, (Helper, ClassInfo, Mark))
            }
            return (tuple(recorder.seen) if recorder is not None else (), exported)

        def still(index: ProjectIndex | None, resolved: Path, vendor: str):
            def valid(kept) -> bool:
                return kept is None or all(
                    index is not None and index.lookup(resolved, *asked, vendor) == answer
                    for asked, answer in kept[0]
                )

            return valid

        names = frozenset(defined)
        toplevel = _bound_elsewhere(per_file)
        index = None
        for round_ in range(2):  # the second follows flags re-exported from another module
            exports: dict[str, dict[str, dict[str, object]]] = {}
            for resolved, data, digest in candidates:
                per_vendor = {}
                for vendor in (ROCM, CUDA):
                    kept = memo.per_file(
                        "pass",
                        (resolved.as_posix(), digest, vendor, build_files, round_),
                        lambda r=resolved, d=data, v=vendor, i=index: run(r, d, v, i),
                        still(index, resolved, vendor),
                    )
                    if kept is None:
                        break
                    per_vendor[vendor] = kept[1]
                if any(per_vendor.values()):
                    exports[resolved.as_posix()] = per_vendor
            index = cls(exports, frozenset(foreign), names, toplevel)
            if not exports:
                break
        return index if index is not None else cls({}, frozenset(foreign), names, toplevel)

    @property
    def digest(self) -> str:
        import hashlib

        return hashlib.blake2b(
            repr(
                (
                    sorted(
                        (p, v, sorted((k, repr(x)) for k, x in names.items()))
                        for p, vendors in self.exports.items()
                        for v, names in vendors.items()
                    ),
                    None
                    if self.foreign is None
                    else sorted(
                        self.foreign if self.defined is None else self.foreign & self.defined
                    ),
                    # A file's own top-level names come from its text (in its own key).
                    None if self.toplevel is None else sorted(self.toplevel[1]),
                )
            ).encode(),
            digest_size=8,
        ).hexdigest()

    def lookup(self, importer: Path, module: str, level: int, vendor: str) -> dict | None:
        if level:
            base = Path(importer).resolve().parent
            for _ in range(level - 1):
                base = base.parent
            target = base.joinpath(*module.split(".")) if module else base
            for candidate in (target.with_suffix(".py"), target / "__init__.py"):
                if candidate.as_posix() in self.exports:
                    return self.exports[candidate.as_posix()][vendor]
            return None
        paths = self._by_suffix.get(module, [])
        found = [self.exports[p][vendor] for p in paths]
        if len(found) == 1 or (found and all(f == found[0] for f in found)):
            return found[0]
        return None


_WORD = re.compile(rb"[A-Za-z_]\w*")
_DEF = re.compile(rb"\bdef\s+([A-Za-z_]\w*)")
#: A top-level class, or binding to a string (`KERNEL = r"""...`, `= textwrap.dedent(`).
_TOP_BINDING = re.compile(
    rb"^(?:class[ \t]+([A-Za-z_]\w*)|([A-Za-z_]\w*)[ \t]*=[ \t]*"
    rb"(?:\(|(?:textwrap\.)?dedent\(|inspect\.cleandoc\()?\s*[rRuUbBfF]{0,2}[\"'])",
    re.M,
)


def _words(data: bytes) -> tuple[str, str, bool, str]:
    """(names the file mentions but does not `def`, names it `def`s, whether it names one of
    `TOKENS` or a `VENDOR_FLAG`, the classes and strings it binds at its top level), the
    names joined by newlines: one string per file is what a tree's kept facts hold in the
    least memory."""
    words = set(_WORD.findall(data))
    defs = set(_DEF.findall(data))
    return (
        b"\n".join(sorted(words - defs)).decode(),
        b"\n".join(sorted(defs)).decode(),
        any(t.encode() in data for t in TOKENS) or _FLAG_BYTES.search(data) is not None,
        b"\n".join(sorted({a or b for a, b in _TOP_BINDING.findall(data)})).decode(),
    )


def _bound_elsewhere(per_file: list[tuple[str, str]]) -> tuple[frozenset, frozenset]:
    """(every file's top-level class and string names, those a file mentions that does not
    bind it): another module may import such a name (`from .kernels import SRC`)."""
    bound = {n for _, names in per_file if names for n in names.split("\n")}
    elsewhere: set[str] = set()
    for others, names in per_file:
        own = set(names.split("\n")) if names else set()
        if others:
            elsewhere.update(n for n in others.split("\n") if n in bound and n not in own)
    return frozenset(bound), frozenset(elsewhere)


class NoMemo:
    """`warm.FactsMemo.per_file` without keeping anything (no cache)."""

    def per_file(self, kind: str, key: tuple, compute, valid=None):
        return compute()


class _Lookups:
    """The index as a pass sees it, recording what the pass looked up and got."""

    def __init__(self, index: ProjectIndex) -> None:
        self.index = index
        self.seen: list[tuple[tuple[str, int], dict | None]] = []

    def lookup(self, importer: Path, module: str, level: int, vendor: str) -> dict | None:
        found = self.index.lookup(importer, module, level, vendor)
        self.seen.append(((module, level), found))
        return found


def _parse(text: str) -> ast.Module | None:
    from cuda2rocm.frontends.python_fast import parse_ast

    return parse_ast(text)


# -- the question the engine asks ----------------------------------------------------------
class Paths:
    """The dead regions of one file, for both vendors; `reason(line, column)` answers."""

    def __init__(
        self,
        text: str,
        path: str | Path | None = None,
        index: ProjectIndex | None = None,
        tree: ast.Module | None = None,
        env_defaults: bool = False,
        build_file: bool = False,
        lines: Iterable[int] | None = None,
    ) -> None:
        """`lines`: the only lines `reason` will be asked about (None: any), so functions
        holding none of them need not be walked."""
        self.text = text
        tree = tree if tree is not None else _parse(text)
        self.rocm: list[Region] = []
        self.cuda: list[Region] = []
        self.envs: dict[str, Env] = {}
        if tree is None:
            return
        where = Path(path) if path is not None else None
        shared = _Shared(tree, text)
        lines = None if lines is None else frozenset(lines)
        data = _data_names(tree, index)
        if lines is not None:
            lines = lines | _data_use_lines(data, lines)
        calls = _Calls.of(tree, index, lines)
        wanted = None if lines is None else _wanted(lines, calls)
        for vendor, sink in ((ROCM, self.rocm), (CUDA, self.cuda)):
            p = _Pass(tree, text, vendor, index, where, env_defaults, shared, wanted)
            p.build_file = build_file or env_defaults
            self.envs[vendor] = p.run()
            sink.extend(r for r in p.dead if r.reason != "plain")
        self._lines = text.splitlines()
        if self.rocm and calls is not None:
            _called_only_where_dead(calls, self)
        if self.rocm and data:
            _data_only_where_dead(data, self)
        if where is not None and where.name == "setup.py":
            _never_called(tree, self, index)

    def _ast_column(self, line: int, column: int) -> int:
        """A 1-based character column as `ast`'s 0-based UTF-8 byte offset."""
        if 0 < line <= len(self._lines):
            return len(self._lines[line - 1][: column - 1].encode("utf-8"))
        return column - 1

    def reason(self, line: int, column: int) -> str:
        """Why ROCm never runs the code at (line, 1-based character column); "" if it may."""
        if not self.rocm:
            return ""
        at = (line, self._ast_column(line, column))
        hits = [r for r in self.rocm if r.contains(*at)]
        if not hits:
            return ""
        if any(r.contains(*at) for r in self.cuda) and not any(RULED_OUT in r.reason for r in hits):
            return ""  # dead for CUDA too: not a ROCm fact (unless an assert rules it out)
        outer = min(hits, key=lambda r: r.start)
        return outer.reason

    def dead_on_rocm_only(self, node: ast.AST) -> str:
        """The reason the start of `node` is dead on ROCm (and not on CUDA), else ""."""
        line, col = node.lineno, node.col_offset
        if any(r.contains(line, col) for r in self.cuda):
            return ""
        hits = [r for r in self.rocm if r.contains(line, col)]
        return min(hits, key=lambda r: r.start).reason if hits else ""


@dataclass
class _Calls:
    """The functions `_called_only_where_dead` may find dead, and every use of each."""

    candidates: dict[str, ast.AST]
    uses: dict[str, list[ast.AST]]
    called: set[int]

    @classmethod
    def of(
        cls, tree: ast.Module, index: ProjectIndex | None, lines: frozenset[int] | None = None
    ) -> _Calls | None:
        """None when no function can be (the whole run is not known, or none qualifies), or
        none that holds one of `lines` (when given: only such a function's deadness, through
        the functions calling it, can answer for them)."""
        if index is None or index.foreign is None:
            return None
        functions: dict[str, ast.AST] = {}
        bound: dict[str, int] = {}
        for stmt in tree.body:
            for name in _bound_names([stmt]):
                bound[name] = bound.get(name, 0) + 1
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and not (
                stmt.decorator_list
            ):
                functions[stmt.name] = stmt
        candidates = {
            n: f for n, f in functions.items() if bound.get(n) == 1 and n not in index.foreign
        }
        methods = _self_called_methods(tree, index.foreign, set(bound))
        candidates.update(methods)
        if not candidates or (
            lines is not None and not any(_holds_line(f, lines) for f in candidates.values())
        ):
            return None
        uses: dict[str, list[ast.AST]] = {n: [] for n in candidates}
        called: set[int] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)):
                func = node.func
                if isinstance(func, ast.Name) or (
                    isinstance(func.value, ast.Name) and func.value.id in ("self", "cls")
                ):
                    called.add(id(func))
            if isinstance(node, ast.Name) and node.id in uses:
                uses[node.id].append(node)
            elif isinstance(node, ast.Attribute) and node.attr in methods:
                uses[node.attr].append(node)
            elif isinstance(node, ast.Constant) and node.value in methods:
                uses[node.value].append(node)  # getattr(self, "name"): not a direct call
        return cls(candidates, uses, called)


def _touches(node: ast.AST, lines: list[int]) -> bool:
    """Whether the node's lines include one of `lines` (sorted)."""
    i = bisect.bisect_left(lines, node.lineno)
    return i < len(lines) and lines[i] <= node.end_lineno


def _holds_line(node: ast.AST, lines: frozenset[int]) -> bool:
    """Whether a function or class (its decorators included) spans one of `lines`."""
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
    return any(first <= line <= node.end_lineno for line in lines)


def _wanted(lines: frozenset[int], calls: _Calls | None) -> frozenset[int]:
    """`lines`, and the lines of every use of a function that holds a wanted line (to a
    fixpoint): whether such a function is dead depends on whether its uses are."""
    if calls is None:
        return lines
    pending = dict(calls.candidates)
    changed = True
    while changed:
        changed = False
        for name, function in list(pending.items()):
            if _holds_line(function, lines):
                lines = lines | {u.lineno for u in calls.uses[name]}
                del pending[name]
                changed = True
    return lines


def _called_only_where_dead(calls: _Calls, paths: Paths) -> None:
    """Module-level functions every use of which is a call ROCm never runs (flash-attention's
    `check_if_cuda_home_none` is called only under `if not IS_ROCM:`): their bodies are dead on
    ROCm too. Only when the whole run is known (`index.foreign`): a function whose name another
    file mentions without defining it may be called from there, and stays reported; so does
    one that is decorated, bound twice, never used, or used other than by a direct call
    (passed as a value, `getattr`). Followed to a fixpoint: a helper called only from such a
    function is dead too."""
    candidates, uses, called = dict(calls.candidates), calls.uses, calls.called
    changed = True
    while changed:
        changed = False
        for name, function in list(candidates.items()):
            found = uses[name]
            if not found or any(id(u) not in called for u in found):
                del candidates[name]
                continue
            reasons = [paths.dead_on_rocm_only(u) for u in found]
            if all(reasons):
                start, end = _span(function)
                lines = ", ".join(str(u.lineno) for u in found)
                paths.rocm.append(
                    Region(
                        start,
                        end,
                        f"`{name}()` is called only where ROCm never runs (line {lines}: "
                        f"{reasons[0].split(': ROCm never', 1)[0]}): ROCm never runs this",
                    )
                )
                del candidates[name]
                changed = True


def _data_names(
    tree: ast.Module, index: ProjectIndex | None
) -> dict[str, tuple[ast.Assign, list[ast.Name]]]:
    """Top-level names bound once to a string that is only data (`_is_data`), each with
    every read of it in the module: `_data_only_where_dead` may find them unused on ROCm.
    Only when the run's top-level names are known (`index.toplevel`) and no other file
    mentions this one; a name also written elsewhere in the module, declared `global`, or
    spelled as a string (`getattr(module, "SRC")`, `__all__`) is left out."""
    toplevel = getattr(index, "toplevel", None)
    if toplevel is None:
        return {}
    bound, elsewhere = toplevel
    found: dict[str, ast.Assign] = {}
    for stmt in tree.body:
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and stmt.targets[0].id in bound
            and stmt.targets[0].id not in elsewhere
            and _is_data(stmt.value)
        ):
            found[stmt.targets[0].id] = stmt
    if not found:
        return {}
    uses: dict[str, list[ast.Name]] = {n: [] for n in found}
    spoiled: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in uses:
            if isinstance(node.ctx, ast.Load):
                uses[node.id].append(node)
            elif node is not found[node.id].targets[0]:
                spoiled.add(node.id)
        elif isinstance(node, ast.Constant) and node.value in uses:
            spoiled.add(node.value)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            spoiled.update(node.names)
    return {n: (s, uses[n]) for n, s in found.items() if n not in spoiled and uses[n]}


def _is_data(node: ast.AST) -> bool:
    """A string expression that does nothing when evaluated but make the value: literals,
    names, f-strings, operators, `textwrap.dedent` and a string literal's own methods
    (`"...".format(...)`), over such arguments."""
    has_string = False
    for sub in ast.walk(node):
        if isinstance(sub, (ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom, ast.Lambda)):
            return False
        if isinstance(sub, ast.Call) and not _string_call(sub):
            return False
        has_string = has_string or (isinstance(sub, ast.Constant) and isinstance(sub.value, str))
    return has_string


def _string_call(call: ast.Call) -> bool:
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, (ast.Constant, ast.JoinedStr)):
        return True
    return ast.unparse(func) in ("textwrap.dedent", "dedent", "inspect.cleandoc")


def _data_use_lines(data: dict, lines: frozenset[int]) -> frozenset[int]:
    """The lines of every read of a data name whose binding holds one of `lines`: whether
    the string is dead depends on whether they are."""
    return frozenset(
        u.lineno
        for stmt, uses in data.values()
        if any(stmt.lineno <= line <= stmt.end_lineno for line in lines)
        for u in uses
    )


def _data_only_where_dead(data: dict, paths: Paths) -> None:
    """A top-level string every read of which is code ROCm never runs (a kernel source used
    only by tests skipped on ROCm): binding it runs at import, but a string is only data, so
    what it holds (CUDA spellings, headers) never reaches a ROCm compiler. To a fixpoint: a
    string read only by such a string (`SRC = HEADER + BODY`) is unused too."""
    pending = dict(data)
    changed = True
    while changed:
        changed = False
        for name, (stmt, uses) in list(pending.items()):
            reasons = [paths.dead_on_rocm_only(u) for u in uses]
            if all(reasons):
                head = reasons[0].split(": ROCm never", 1)[0]
                lines = ", ".join(str(u.lineno) for u in uses)
                paths.rocm.append(
                    Region(
                        *_span(stmt),
                        f"`{name}` is read only where ROCm never runs (line {lines}: {head}): "
                        "ROCm never uses this string",
                    )
                )
                del pending[name]
                changed = True


def _self_called_methods(
    tree: ast.Module, foreign: frozenset[str], module_names: set[str]
) -> dict[str, ast.AST]:
    """Methods of the module's classes (no decorator, one definition in the file, a name no
    other file mentions and no module-level name shares) that `_called_only_where_dead` may
    follow through `self.name(...)` calls: a test class's helper used only by tests that are
    skipped on ROCm (FBGEMM's `_test_against_reference`). Test entry points (`test*`, `setUp`,
    dunders) are called by the framework, not through `self`: never candidates."""
    from cuda2rocm.frontends.python_fast import statements

    counts: dict[str, int] = {}
    found: dict[str, ast.AST] = {}
    for node in statements(tree.body):  # classes are statements, at any depth
        if not isinstance(node, ast.ClassDef):
            continue
        for child in node.body:
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                counts[child.name] = counts.get(child.name, 0) + 1
                if not child.decorator_list:
                    found[child.name] = child
    return {
        n: f
        for n, f in found.items()
        if counts[n] == 1
        and n not in foreign
        and n not in module_names
        and not (n.startswith(("test", "setUp", "tearDown")) or n.startswith("__"))
    }


def _never_called(tree: ast.Module, paths: Paths, index: ProjectIndex | None) -> None:
    """Module-level functions of a `setup.py` that nothing calls: a setup.py is run, never
    imported, so a function its own module never names and no other file of the run mentions
    (flash-attention's `check_cuda_torch_binary_vs_bare_metal`, left over from apex) runs in no
    build. Only when the whole run is known (`index.foreign`); a decorated function (a
    registration) or one bound twice stays reported."""
    if index is None or index.foreign is None:
        return
    named = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    named |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    named |= {
        n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    }
    bound: dict[str, int] = {}
    for stmt in tree.body:
        for name in _bound_names([stmt]):
            bound[name] = bound.get(name, 0) + 1
    for stmt in tree.body:
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) or stmt.decorator_list:
            continue
        name = stmt.name
        if name in named or name in index.foreign or bound.get(name) != 1:
            continue
        start, end = _span(stmt)
        reason = (
            f"`{name}()` is defined in setup.py and called nowhere in the project (a setup.py "
            "is run, never imported): no build runs this"
        )
        paths.rocm.append(Region(start, end, reason))


def is_build_script(text: str) -> bool:
    """A script that builds extensions (it imports torch's cpp_extension and calls setup() or
    an extension builder): run for one vendor's build at a time."""
    return "cpp_extension" in text and ("setup(" in text or "Extension(" in text)


_VERSION_ASSERT = re.compile(r"^\s*assert\s+\w+\s*>=?\s*[\[(\d]", re.M)


def might_branch(text: str) -> bool:
    return (
        any(t in text for t in TOKENS)
        or _FLAG_TEXT.search(text) is not None
        or ("assert" in text and _VERSION_ASSERT.search(text) is not None)
    )


def guard(diagnostics: list, text: str, path: str, index: ProjectIndex | None = None) -> list:
    """`diagnostics` with `guarded` set on those ROCm provably never runs."""
    if not diagnostics or not (might_branch(text) or _imports_flag(text, index)):
        return diagnostics
    lines = {d.position.line for d in diagnostics}
    paths = Paths(text, path, index, build_file=is_build_script(text), lines=lines)
    out = []
    for d in diagnostics:
        if not d.guarded and d.rule not in ("internal-error", "read-error"):
            why = paths.reason(d.position.line, d.position.column)
            if why:
                d = dataclasses.replace(d, guarded=why)
        out.append(d)
    return out


def _imports_flag(text: str, index: ProjectIndex | None) -> bool:
    """The file may import a project flag (a cheap test: the index is not empty and the file
    imports something)."""
    return bool(index is not None and index.exports and "import" in text)
