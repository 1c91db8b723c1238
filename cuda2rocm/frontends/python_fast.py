"""The fast pass: which parts of a Python file LibCST needs to see, decided at C speed.

Most of a large file is function and class bodies that none of the selected rules can fire in.
The standard library's parser (C) finds those bodies; each is blanked — it becomes a string
literal across the same lines (every character but line ends a space; `0` and spaces when
too short), one statement — so LibCST parses and walks a file with the same offsets, lines and
columns but much less in it. Rules and rewrites still run on LibCST, and on the original
text.

A body is kept whole when its text (comments and strings included) holds anything a rule could
fire on or reason with:
- a token of a rule that runs on the file (rules are built so that a finding needs one, which
  is what the file-level prefilter relies on too);
- a name bound by an import that holds such a token (`from torch.cuda.amp import autocast as
  ac` ... `ac()` far below);
- the vocabulary of vendor tests that guards read (`rocm`, `rocr`, and `hip` not preceded by
  a letter: `IS_HIP`, `torch.version.hip`, `hipcc`, not `ship`; any case), and the names
  bound to what reads it (`AMD = torch.version.hip is not None` ... `if AMD: return`);
- `global` or `nonlocal`, the only ways a body binds a name outside itself.
Tokens match anywhere; names match as whole identifiers (`d` does not hit `dtype`).
A blanked body cannot bind a name its enclosing scopes see, and holds nothing a rule reports,
so rules see the same bindings, parents, branches and findings. Module-level statements are
never blanked. tests/test_fast_pass.py runs both paths over every rule example and a
generated tree and requires identical findings.
"""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Iterable

#: Words that vendor guards and file-wide rules read: vendor words in any case (`hip` where no
#: letter precedes it: the identifier parts and dotted names guards test), `global` and
#: `nonlocal` statements.
CONTEXT = r"(?i:rocm|rocr|(?<![a-z])hip)"
#: A `global` or `nonlocal` statement (a superset: the keyword where a statement can start, at
#: a line's start or after `;` or `:`), the keyword its group: the word in a comment or an
#: identifier (`global_step`) binds nothing.
DECLARATION = re.compile(r"(?:^|[;:])[ \t]*(global|nonlocal)\b", re.M)
_NOT_LINE_END = re.compile(r"[^\r\n]")
#: Files smaller than this are parsed whole: blanking would save less than it costs.
MIN_BYTES = 4096


#: The last text parsed and its tree: the front-end, rules, the embedded-C++ finder and the
#: context model each read the standard library's tree of the same file, parsed once.
_last: tuple[str, ast.Module | None] | None = None


def parse_ast(text: str) -> ast.Module | None:
    """The standard library's tree of `text` (None when it does not parse). The tree is shared
    by every caller on the same text: read it, never change it."""
    global _last
    if _last is not None and (_last[0] is text or _last[0] == text):
        return _last[1]
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        tree = None
    _last = (text, tree)
    return tree


def reduce(
    text: str,
    tree: ast.Module,
    tokens: Iterable[str],
    follows: Iterable[str] | None = None,
    statements: bool = True,
    callers: bool = False,
    follows_values: Iterable[str] = (),
    decorator_tokens: Iterable[str] = (),
) -> str | None:
    """`text` with the bodies no rule needs blanked, or None when nothing would be blanked.
    `follows`: the tokens of the rules that follow names bound to what holds them (all of
    `tokens` when not given); the others' tokens are followed through imports only.
    `statements`: also blank the statements no rule needs inside the bodies that hold a hit
    (`_reduce_body`); False keeps those bodies whole. `callers`: a rule asks where the
    functions holding a hit are called from, so a function's name hits where a function
    holding a hit is named (to a fixpoint: callers of callers). `follows_values`: tokens of
    rules that follow names only through plain values (`_bound_names`). `decorator_tokens`:
    tokens of rules whose findings are decorators spelling them (`decorator_hits`)."""
    offsets = _Offsets(text)
    tokens = set(tokens)
    follows = tokens if follows is None else set(follows)
    words = (
        tokens | _bound_names(text, tree, offsets, tokens, follows, set(follows_values))
        if _has_tokens(text, tokens)
        else set()
    )
    decorated = decorator_hits(text, tree, decorator_tokens, offsets)
    flags, local_flags = _vendor_flags(text, tree, offsets)
    names = (words - tokens) | flags
    alternatives = [re.escape(t) for t in sorted(tokens, key=len, reverse=True)]
    if names:
        alternatives.append(_whole_words(names))
    found = [m.start() for m in re.finditer("|".join(alternatives), text)] if alternatives else []
    for start, end, local in local_flags:  # a function's own flags, in its body alone
        found += [m.start() for m in re.compile(_whole_words(local)).finditer(text, start, end)]
    hits = sorted(found + decorated + _context_hits(offsets) + _torch_imports(text, tree, offsets))
    if callers:
        hits = _caller_hits(tree, offsets, hits)
    spans: list[tuple[int, int]] = []
    _blankable(tree.body, offsets, hits, spans, statements)
    if not spans:
        return None
    spans.sort()
    pieces, last = [], 0
    for start, end in spans:
        pieces.append(text[last:start])
        pieces.append(_blank(text[start:end]))
        last = end
    pieces.append(text[last:])
    return "".join(pieces)


def _bound_names(
    text: str,
    tree: ast.Module,
    offsets: _Offsets,
    tokens: set[str],
    follows: set[str],
    follows_values: set[str] = frozenset(),
) -> set[str]:
    """Names an import binds to what holds a token (`from torch.cuda.amp import autocast as
    ac`), and names bound, anywhere, to a value that holds a token of `follows` or another
    such name (to a fixpoint): imports, assignments, loop and `with` targets, walrus
    targets, parameters (each to its default). A body that reads one of them may hold a
    finding (`cap = get_device_capability()` at module level, `if cap < (8, 0)` in a
    function), so it is kept. A rule that does not follow names (`follows` lacks its tokens)
    still resolves import aliases, so those are found for every token. `follows_values`:
    tokens of rules that follow a name only into the value an assignment gives it, and there
    only through names, attributes, subscripts, arithmetic, tuples and a call's callee (not
    `a if c else b`, comparisons or arguments: `x = 2 if cap == 9 else 1` gives `x` no
    capability): their names are found through such assignments alone."""
    # (segment, identifiers, names bound, identifiers a value-following rule reads or None)
    bindings: list[tuple[str, set[str], set[str], set[str] | None]] = []
    imported: set[str] = set()

    def add(value: ast.AST | str, targets: Iterable[ast.AST], plain: bool = False) -> None:
        names = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        if names:
            segment = value if isinstance(value, str) else _segment(text, offsets, value)
            reads = _value_names(value) if plain and not isinstance(value, str) else None
            bindings.append((segment, set(offsets.identifiers.findall(segment)), names, reads))

    following = bool(follows or follows_values)
    for node in statements(tree.body):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            segment = _segment(text, offsets, node)
            names = {(a.asname or a.name).split(".", 1)[0] for a in node.names}
            if any(t in segment for t in tokens):
                imported |= names
            if following:
                identifiers = set(offsets.identifiers.findall(segment))
                bindings.append((segment, identifiers, names, identifiers))
        elif not following:
            continue  # only imports matter
        elif isinstance(node, ast.Assign):
            add(node.value, node.targets, plain=True)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and node.value is not None:
            add(node.value, [node.target], plain=True)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            add(node.iter, [node.target])
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if item.optional_vars is not None:
                    add(item.context_expr, [item.optional_vars])
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            # Each parameter is bound to its own default (and read through its annotation):
            # the whole header would bind every parameter to what any one default holds.
            for param, default in _parameters(node.args):
                parts = [p for p in (param.annotation, default) if p is not None]
                if parts:
                    segment = " ".join(_segment(text, offsets, p) for p in parts)
                    identifiers = set(offsets.identifiers.findall(segment))
                    bindings.append((segment, identifiers, {param.arg}, None))
    if not following:
        return imported
    if ":=" in text:
        for node in ast.walk(tree):
            if isinstance(node, ast.NamedExpr):
                add(node.value, [node.target])
    found = _closure(bindings, follows, 1) if follows else set()
    valued = _closure(bindings, follows_values, 3) if follows_values else set()
    return found | valued | imported


def _closure(bindings: list, tokens, reads_at: int) -> set[str]:
    """Names bound (to a fixpoint) by a binding whose text holds one of `tokens` or whose
    reads (`binding[reads_at]`: every identifier, or only value reads; None: not followed)
    include a name already found. Value reads (`reads_at` 3) start from a read identifier
    that is a token (`torch.backends.cudnn.version()`, not `_scaled_cudnn_attention(...)`):
    value-following rules recognise qualified names, whose parts are whole identifiers."""
    found: set[str] = set()
    whole = reads_at == 3
    tokens = set(tokens)
    changed = True
    while changed:
        changed = False
        for binding in bindings:
            segment, names, reads = binding[0], binding[2], binding[reads_at]
            if reads is None or names <= found:
                continue
            seeded = bool(reads & tokens) if whole else any(t in segment for t in tokens)
            if seeded or reads & found:
                found |= names
                changed = True
    return found


_DECORATOR_START = re.compile(r"^[ \t]*@", re.M)
_DEFINITION = re.compile(r"^[ \t]*(?:async[ \t]+)?(?:def|class)\b", re.M)


def may_decorate(text: str, tokens: Iterable[str]) -> bool:
    """Whether a decorator may spell one of `tokens`, from the text alone (a superset of
    `decorator_hits`): a decorator starts a line with `@` and ends before the `def` or
    `class` line it decorates, so a token outside every such stretch is in none."""
    tokens = tuple(tokens)
    for start in _DECORATOR_START.finditer(text):
        end = _DEFINITION.search(text, start.end())
        stop = end.start() if end is not None else len(text)
        if any(text.find(t, start.end(), stop) >= 0 for t in tokens):
            return True
    return False


def decorator_hits(
    text: str, tree: ast.Module, tokens: Iterable[str], offsets: _Offsets | None = None
) -> list[int]:
    """Where each decorator that spells one of `tokens` starts: a rule whose findings are
    such decorators needs the bodies holding them, not those that merely spell the token."""
    tokens = set(tokens)
    if not tokens or "@" not in text or not _has_tokens(text, tokens):
        return []
    offsets = offsets or _Offsets(text)
    hits = []
    for node in statements(tree.body):
        for decorator in getattr(node, "decorator_list", ()):
            if _has_tokens(_segment(text, offsets, decorator), tokens):
                hits.append(offsets.start(decorator))
    return hits


def _value_names(value: ast.AST) -> set[str]:
    """The identifiers a value-following rule reads in `value`: through names, attributes,
    subscripted values, arithmetic, tuples and lists, and a call's callee."""
    names: set[str] = set()
    pending = [value]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
            pending.append(node.value)
        elif isinstance(node, ast.Subscript):
            pending.append(node.value)
        elif isinstance(node, ast.BinOp):
            pending += (node.left, node.right)
        elif isinstance(node, (ast.Tuple, ast.List)):
            pending += node.elts
        elif isinstance(node, ast.Call):
            pending.append(node.func)
    return names


_VENDOR = re.compile(r"(?i:rocm|rocr|(?<![a-z])hip)")


def _context_hits(offsets: _Offsets) -> list[int]:
    """Where CONTEXT matches, or more (`str.find` on the lowered text, far faster than a
    case-insensitive pattern tried at every character), and every `global` or `nonlocal`
    statement's keyword."""
    declared = [m.start(1) for m in DECLARATION.finditer(offsets.text)]
    low = offsets.lowered
    if len(low) != len(offsets.text):  # lowering moved characters: offsets would not match
        return [m.start() for m in re.finditer(CONTEXT, offsets.text)] + declared
    hits = declared
    for word in ("rocm", "rocr", "hip"):
        i = low.find(word)
        while i >= 0:
            if word != "hip" or not (low[i - 1 : i].isascii() and low[i - 1 : i].isalpha()):
                hits.append(i)
            i = low.find(word, i + 1)
    return hits


def _vendor_word(offsets: _Offsets) -> bool:
    """Whether the text may hold a vendor word (a superset: any `hip`)."""
    low = offsets.lowered
    return "rocm" in low or "rocr" in low or "hip" in low


def _vendor_flags(
    text: str, tree: ast.Module, offsets: _Offsets
) -> tuple[set[str], list[tuple[int, int, set[str]]]]:
    """Names bound (assignments, imports) to what reads a vendor word, or to another such
    name (to a fixpoint): the flags a vendor guard follows (`AMD = torch.version.hip is not
    None` ... `if AMD: return`). A statement that reads one is kept like a vendor word.

    Returns the module's flags (bound at module or class level: any function may read them)
    and, per top-level function or method, the flags its own body binds, with the body's
    span: a name a function binds is its local, which no other function reads (`output = ...
    if IS_ROCM else ...` in one test does not keep every body that names `output`). A file
    that declares `global` or `nonlocal` names is read as one scope."""
    if not _vendor_word(offsets):
        return set(), []
    scoped = DECLARATION.search(text) is None
    # (value text, names bound, the function it is in: an index into `functions`, or None)
    bindings: list[tuple[str, set[str], int | None]] = []
    functions: list[tuple[int, int]] = []

    def collect(body: list[ast.stmt], owner: int | None) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                inner = owner
                if owner is None and scoped:
                    inner = len(functions)
                    functions.append((offsets.body_start(node.body[0]), offsets.end(node.body[-1])))
                collect(node.body, inner)
                continue
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = {(a.asname or a.name).split(".", 1)[0] for a in node.names}
                bindings.append((_segment(text, offsets, node), names, owner))
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
                if names:
                    bindings.append((_segment(text, offsets, node.value), names, owner))
            for field in ("body", "orelse", "finalbody"):
                nested = getattr(node, field, None)
                if isinstance(nested, list) and nested and isinstance(nested[0], ast.stmt):
                    collect(nested, owner)
            for holder in (*getattr(node, "handlers", ()), *getattr(node, "cases", ())):
                collect(holder.body, owner)

    collect(tree.body, None)
    matched = [
        (set(offsets.identifiers.findall(s)), bool(_VENDOR.search(s)), n, owner)
        for s, n, owner in bindings
    ]

    def closure(rows: list, found: set[str]) -> set[str]:
        changed = True
        while changed:
            changed = False
            for identifiers, vendor, names, _ in rows:
                if not names <= found and (vendor or identifiers & found):
                    found |= names
                    changed = True
        return found

    module = closure([m for m in matched if m[3] is None], set())
    local: dict[int, list] = {}
    for row in matched:
        if row[3] is not None:
            local.setdefault(row[3], []).append(row)
    scopes = []
    for owner, rows in local.items():
        names = closure(rows, set(module)) - module
        if names:
            scopes.append((*functions[owner], names))
    return module, scopes


def _torch_imports(text: str, tree: ast.Module, offsets: _Offsets) -> list[int]:
    """Where torch is imported, anywhere: a fix that adds `from torch.utils.cpp_extension
    import ...` asks whether the file imports torch at all (`python_build._imports_torch`),
    so a body whose only import of torch is its own is kept (reduced to what it needs)."""
    if "torch" not in text or not _NESTED_TORCH_IMPORT.search(text):
        return []  # module-level statements are never blanked: only nested imports matter
    return [
        offsets.start(node)
        for node in statements(tree.body)
        if (isinstance(node, ast.Import) and any(_is_torch(a.name) for a in node.names))
        or (isinstance(node, ast.ImportFrom) and not node.level and _is_torch(node.module or ""))
    ]


#: An import naming torch that is not at a line's start (indented, or after `:` or `;`): a
#: superset of the torch imports inside a body.
_NESTED_TORCH_IMPORT = re.compile(
    r"(?:^[ \t]+|[:;][ \t]*)(?:import|from)[ \t][^\n]*\btorch\b", re.M
)


def _is_torch(name: str) -> bool:
    return name == "torch" or name.startswith("torch.")


def _whole_words(names: Iterable[str]) -> str:
    return r"\b(?:" + "|".join(map(re.escape, sorted(names))) + r")\b"


def _caller_hits(tree: ast.Module, offsets: _Offsets, hits: list[int]) -> list[int]:
    """`hits` and every place that names a function holding a hit, to a fixpoint."""
    functions = [
        (node.name, offsets.body_start(node.body[0]), offsets.end(node.body[-1]))
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    named: set[str] = set()
    while True:
        new = {name for name, start, end in functions if _has_hit(hits, start, end)} - named
        if not new:
            return hits
        named |= new
        pattern = re.compile(r"\b(?:" + "|".join(map(re.escape, sorted(new))) + r")\b")
        hits = sorted(hits + [m.start() for m in pattern.finditer(offsets.text)])


def _blank(segment: str) -> str:
    """A statement of the same lines and columns that holds nothing: a string literal across
    its lines (one token: LibCST makes no node per blank line, which costs as much as code),
    else `0` and spaces."""
    if (
        len(segment) >= 6
        and "\n" in segment
        and "\r" not in segment
        and "\n" not in segment[:3]
        and "\n" not in segment[-3:]
    ):
        return '"""' + _spaces(segment[3:-3]) + '"""'
    return "0" + (_NOT_LINE_END.sub(" ", segment[1:]) if "\r" in segment else _spaces(segment[1:]))


def _spaces(text: str) -> str:
    """`text` (no carriage returns) with every character but line ends a space."""
    return "\n".join(" " * len(line) for line in text.split("\n"))


def _parameters(arguments: ast.arguments) -> list[tuple[ast.arg, ast.expr | None]]:
    """Every parameter with its default (None where it has none)."""
    positional = [*arguments.posonlyargs, *arguments.args]
    defaults = [None] * (len(positional) - len(arguments.defaults)) + list(arguments.defaults)
    pairs = list(zip(positional, defaults, strict=True))
    pairs += list(zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True))
    pairs += [(a, None) for a in (arguments.vararg, arguments.kwarg) if a is not None]
    return pairs


def _segment(text: str, offsets: _Offsets, node: ast.AST) -> str:
    return text[offsets.start(node) : offsets.end(node)]


def _has_tokens(text: str, words: set[str]) -> bool:
    return any(w in text for w in words)


def statements(body: list[ast.stmt]) -> Iterable[ast.stmt]:
    """Every statement, nested ones too (expressions are not entered: imports are statements)."""
    stack = list(reversed(body))
    while stack:
        statement = stack.pop()
        yield statement
        for field in ("body", "orelse", "finalbody"):
            nested = getattr(statement, field, None)
            if isinstance(nested, list) and nested and isinstance(nested[0], ast.stmt):
                stack.extend(reversed(nested))
        for holder in (*getattr(statement, "handlers", ()), *getattr(statement, "cases", ())):
            stack.extend(reversed(holder.body))


def _has_hit(hits: list[int], start: int, end: int) -> bool:
    i = bisect.bisect_left(hits, start)
    return i < len(hits) and hits[i] < end


def _blankable(
    body: list[ast.stmt],
    offsets: _Offsets,
    hits: list[int],
    spans: list[tuple[int, int]],
    statements: bool,
) -> None:
    for statement in body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            inner = statement.body
            start = offsets.body_start(inner[0])
            end = offsets.end(inner[-1])
            if _has_hit(hits, start, end):
                if isinstance(statement, ast.ClassDef) or not statements:
                    _blankable(inner, offsets, hits, spans, statements)
                else:
                    _reduce_body(statement, offsets, hits, spans)
            elif end - start > 1:
                spans.append((start, end))
            continue
        for field in ("body", "orelse", "finalbody"):
            nested = getattr(statement, field, None)
            if isinstance(nested, list) and nested and isinstance(nested[0], ast.stmt):
                _blankable(nested, offsets, hits, spans, statements)
        for handler in getattr(statement, "handlers", ()):
            _blankable(handler.body, offsets, hits, spans, statements)
        for case in getattr(statement, "cases", ()):
            _blankable(case.body, offsets, hits, spans, statements)


#: Compound statements whose blocks are reduced like a function body when they hold a hit
#: (their headers stay): no rule reads their blocks as a whole. `if` (rules read branches and
#: their text), `try` (handlers are judged by what the body imports) and `match` stay whole.
_LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith)


def _reduce_body(
    function: ast.FunctionDef | ast.AsyncFunctionDef,
    offsets: _Offsets,
    hits: list[int],
    spans: list[tuple[int, int]],
) -> None:
    """The body of a function that holds a hit, statement by statement: a statement is kept
    whole when it holds a hit or binds a name that kept code reads (to a fixpoint: rules count
    a name's bindings and follow them to their values) or that the function declares
    `global`/`nonlocal`; a loop or `with` that holds a hit keeps its header and has its
    blocks reduced the same way. Every other statement is blanked: it holds nothing a rule
    reports, no guard (vendor words and the names bound to them are hits), and binds nothing
    the kept code reads, so rules see the same bindings, parents and findings. Nested
    functions and classes keep their own rule (bodies blanked or reduced)."""
    text = offsets.text
    needed: set[str] = set()
    if DECLARATION.search(text, offsets.start(function), offsets.end(function)):
        for node in ast.walk(function):
            if isinstance(node, (ast.Global, ast.Nonlocal)):
                needed.update(node.names)
    kept: list[ast.stmt] = []
    candidates: list[tuple[ast.stmt, int, int]] = []

    def units(body: list[ast.stmt]) -> None:
        for statement in body:
            definition = _is_definition(statement)
            start = offsets.body_start(statement) if definition else offsets.start(statement)
            end = offsets.end(statement)
            if definition or not _has_hit(hits, start, end):
                if definition:  # its name stays bound; its body is blanked or reduced
                    kept.append(statement)
                    for part in _evaluated_here(statement):  # decorators, defaults, bases
                        needed.update(offsets.identifiers.findall(_segment(text, offsets, part)))
                    body_start = offsets.body_start(statement.body[0])
                    if _has_hit(hits, body_start, end):  # what the kept body reads
                        needed.update(offsets.identifiers.findall(text, body_start, end))
                else:
                    candidates.append((statement, start, end))
            elif isinstance(statement, _LOOPS):
                header_end = offsets.start(statement.body[0])
                needed.update(offsets.identifiers.findall(text, start, header_end))
                units(statement.body)
                if getattr(statement, "orelse", None):
                    units(statement.orelse)
            else:
                kept.append(statement)
                needed.update(offsets.identifiers.findall(text, start, end))

    units(function.body)
    keep = [False] * len(candidates)
    # A statement binds only names it spells: its identifiers rule most out at C speed.
    spelled = [set(offsets.identifiers.findall(text, start, end)) for _, start, end in candidates]
    bound: list[set[str] | None] = [None] * len(candidates)
    changed = True
    while changed:  # backwards: a binding comes before its reads, one pass finds most
        changed = False
        for i in range(len(candidates) - 1, -1, -1):
            if keep[i] or not spelled[i] & needed:
                continue
            if bound[i] is None:
                bound[i] = _binds(candidates[i][0])
            if bound[i] & needed:
                keep[i] = changed = True
                needed |= spelled[i]
    for statement in kept:
        _blankable([statement], offsets, hits, spans, True)
    for i, (statement, start, end) in enumerate(candidates):
        if keep[i]:
            _blankable([statement], offsets, hits, spans, True)
        elif end - start > 1:
            spans.append((start, end))


def _evaluated_here(definition: ast.stmt) -> list[ast.expr]:
    """What a `def` or `class` statement evaluates in the enclosing scope: decorators,
    defaults, annotations, base classes and keywords (not its parameters' names)."""
    parts = list(definition.decorator_list)
    if isinstance(definition, ast.ClassDef):
        parts += definition.bases + [k.value for k in definition.keywords]
    else:
        arguments = definition.args
        parts += arguments.defaults + [d for d in arguments.kw_defaults if d is not None]
        every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
        every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
        parts += [a.annotation for a in every if a.annotation is not None]
        if definition.returns is not None:
            parts.append(definition.returns)
    return parts


def _is_definition(statement: ast.stmt) -> bool:
    return isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))


def _binds(statement: ast.stmt) -> set[str]:
    """Every name the statement may bind or unbind (a superset: comprehension variables and
    names bound in nested scopes count too)."""
    names: set[str] = set()
    for node in ast.walk(statement):
        if isinstance(node, ast.Name):
            if not isinstance(node.ctx, ast.Load):
                names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".", 1)[0])
        elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)):
            if node.name:
                names.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names.add(node.rest)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return names


class _Offsets:
    """ast positions (line, UTF-8 byte column) as character offsets into the text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0]
        for m in re.finditer(r"\r\n|\r|\n", text):
            self.starts.append(m.end())
        self.ascii = text.isascii()
        #: What finds identifiers in this text.
        self.identifiers = _ASCII_IDENTIFIER if self.ascii else _IDENTIFIER
        self._lowered: str | None = None

    @property
    def lowered(self) -> str:
        if self._lowered is None:
            self._lowered = self.text.lower()
        return self._lowered

    def _at(self, line: int, col: int) -> int:
        base = self.starts[line - 1]
        if self.ascii or col == 0:
            return base + col
        line_end = self.starts[line] if line < len(self.starts) else len(self.text)
        prefix = self.text[base:line_end].encode("utf-8", "surrogatepass")[:col]
        return base + len(prefix.decode("utf-8", "surrogatepass"))

    def start(self, node: ast.AST) -> int:
        return self._at(node.lineno, node.col_offset)

    def end(self, node: ast.AST) -> int:
        return self._at(node.end_lineno, node.end_col_offset)

    def body_start(self, node: ast.stmt) -> int:
        """Where a body's first statement begins: its first decorator's line (decorators
        start a line; ast places them after the `@`), else the statement itself."""
        decorators = getattr(node, "decorator_list", None)
        if decorators:
            line = min(d.lineno for d in decorators)
            base = self.starts[line - 1]
            match = re.compile(r"[ \t\f]*").match(self.text, base)
            return match.end()
        return self.start(node)


def bound_to(text: str, tree: ast.Module, needs: Iterable[frozenset[str]]) -> set[str]:
    """Names that some single-target assignment binds to a value whose identifiers include
    all of one of `needs`, or one of these names (transitively). A name outside the set cannot
    be bound to such a value, so a rule can skip scope analysis (a whole-file pass) for it."""
    offsets = _Offsets(text)
    assigned: list[tuple[str, set[str]]] = []
    for node in statements(tree.body):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target = node.target
        else:
            continue
        if isinstance(target, ast.Name):
            value = text[offsets.start(node.value) : offsets.end(node.value)]
            assigned.append((target.id, set(offsets.identifiers.findall(value))))
    found: set[str] = set()
    needs = list(needs)
    changed = True
    while changed:
        changed = False
        for name, identifiers in assigned:
            if name not in found and any(need <= identifiers for need in needs):
                found.add(name)
                needs.append(frozenset((name,)))
                changed = True
    return found


_IDENTIFIER = re.compile(r"[^\W\d]\w*")
#: The same on ASCII text, three times faster.
_ASCII_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
