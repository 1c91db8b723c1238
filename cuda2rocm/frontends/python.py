"""Python front-end: LibCST with metadata, shared by every Python rule.

Rules are batchable visitors, so one traversal of a file serves all of them, and LibCST computes
only the metadata the selected rules declare. Rules report nodes; this module turns nodes into
exact positions and text edits on the original source.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import ExitStack
from typing import ClassVar

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst.metadata import (
    CodePosition,
    CodeRange,
    ParentNodeProvider,
    PositionProvider,
    QualifiedNameProvider,
    ScopeProvider,
)
from libcst.metadata.position_provider import PositionProvidingCodegenState

from cuda2rocm.catalogue import RuleSpec
from cuda2rocm.frontends import python_fast, python_walk
from cuda2rocm.model import Diagnostic, Edit, Fix, Safety, Severity
from cuda2rocm.sources import SourceFile


def _width(statement: cst.CSTNode) -> int:
    """How many statements of the standard library's tree a LibCST statement is (`a; b`: 2)."""
    return len(statement.body) if isinstance(statement, cst.SimpleStatementLine) else 1


def _shifted(table: Mapping, shift: int) -> Mapping:
    """Positions moved down by `shift` lines."""
    if shift == 0:
        return table
    return {
        n: CodeRange(
            CodePosition(r.start.line + shift, r.start.column),
            CodePosition(r.end.line + shift, r.end.column),
        )
        for n, r in table.items()
    }


class PythonParseError(Exception):
    def __init__(self, message: str, line: int = 1, column: int = 1) -> None:
        super().__init__(message)
        self.line, self.column = line, column


#: CPython rejects more than 200 nested brackets; LibCST's native parser crashes the whole
#: process (SIGSEGV) on a few thousand, so such files are checked by CPython's parser first.
MAX_NESTING = 200
_BRACKETS = re.compile(r"[()\[\]{}]")


def _too_deep(text: str) -> bool:
    depth = deepest = 0
    for match in _BRACKETS.finditer(text):
        depth += 1 if match.group() in "([{" else -1
        deepest = max(deepest, depth)
    return deepest > MAX_NESTING


def _check_with_cpython(source: SourceFile) -> None:
    try:
        compile(source.text, source.path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as exc:
        raise PythonParseError(
            f"cannot parse Python: {exc.msg}", exc.lineno or 1, exc.offset or 1
        ) from exc
    except (RecursionError, MemoryError, ValueError) as exc:
        raise PythonParseError("cannot parse Python: nesting too deep") from exc


def parse(source: SourceFile, text: str | None = None) -> cst.MetadataWrapper:
    """LibCST's view of `source` (of `text` instead, when given: the fast pass's reduction,
    which has the same offsets)."""
    if _too_deep(source.text):
        _check_with_cpython(source)
    try:
        module = cst.parse_module(source.text if text is None else text)
    except cst.ParserSyntaxError as exc:
        raise PythonParseError(
            f"cannot parse Python: {exc.message}", exc.raw_line, exc.raw_column + 1
        ) from exc
    except RecursionError as exc:
        raise PythonParseError("cannot parse Python: nesting too deep") from exc
    return cst.MetadataWrapper(module, unsafe_skip_copy=True)


_MISSING = object()
#: Compound statements whose header positions are computed from the header alone.
_HEADED = (cst.If, cst.For, cst.While, cst.With)
_EMPTY_BLOCK = cst.IndentedBlock(body=[cst.SimpleStatementLine(body=[cst.Pass()])])


class FileContext:
    """What every rule on one file shares: the metadata wrapper (metadata is computed on first
    use, not up front: positions only for a file with findings, scopes only when a rule
    follows a name) and the import aliases."""

    def __init__(
        self, source: SourceFile, wrapper: cst.MetadataWrapper, tree: ast.Module | None = None
    ) -> None:
        self.source = source
        self.wrapper = wrapper
        #: The standard library's tree of the file, when the caller already has it.
        self._tree = tree
        self._aliases: dict[str, set[str]] | None = None
        self._bound: dict[tuple[frozenset[str], frozenset[str]], set[str]] = {}
        #: The traversal's stack of entered nodes (the Module first).
        self.stack: list[cst.CSTNode] = []
        #: Positions per top-level statement (the fast pass) rather than for the whole file.
        self.statement_positions = False
        self._statement_tables: dict[cst.CSTNode, Mapping | None] = {}
        self._header_tables: dict[cst.CSTNode, Mapping | None] = {}
        self._lines: dict[cst.CSTNode, int] | None = None
        #: The stdlib parser rejected a file LibCST accepts: use LibCST's qualified names.
        self.fallback = False
        #: node -> parent, for the nodes the rules' traversal has entered.
        self.parents: dict[cst.CSTNode, cst.CSTNode | None] = {}
        #: node -> parent under the entered nodes whose subtree `parent_below` walked.
        self._below: dict[cst.CSTNode, cst.CSTNode] = {}
        self._searched: set[cst.CSTNode] = set()

    def resolve(self, provider) -> Mapping:
        return self.wrapper.resolve(provider)

    def parent_below(self, node: cst.CSTNode):
        """The parent of a node inside the node the traversal is in (a rule reports or fixes
        a child of what it visits): found by walking that subtree alone, rather than LibCST's
        ParentNodeProvider walking the whole file. `_MISSING` when the node is elsewhere."""
        if node in self._below:
            return self._below[node]
        if len(self.stack) < 2:
            return _MISSING
        top = self.stack[-1]
        if top in self._searched:
            return _MISSING
        self._searched.add(top)
        pending = [top]
        while pending:  # record the parent of every node under `top`
            current = pending.pop()
            for child in current.children:
                self._below[child] = current
                pending.append(child)
        return self._below.get(node, _MISSING)

    def position(self, node: cst.CSTNode) -> CodeRange:
        """Where `node` is. LibCST's PositionProvider generates the code of the whole file to
        find out; the fast pass generates only the top-level statement that holds the node
        (found through the traversal's parents, or the statement being traversed) and moves
        its lines by where the standard library's parser puts that statement."""
        if self.statement_positions:
            line_table = self._line_positions(node)
            if line_table is not None and node in line_table:
                return line_table[node]
            statement = self._top_level(node)
            if statement is not None:
                table = self._positions_in(statement)
                if table is not None and node in table:
                    return table[node]
        return self.resolve(PositionProvider)[node]

    def _line_positions(self, node: cst.CSTNode) -> Mapping | None:
        """Positions within the innermost nested statement line that holds `node` (a line
        inside one large function), from the code of that line alone: generated with its
        enclosing blocks' indentation (so columns are the file's), its lines moved by where
        the standard library's parser puts it. None when the node is not in such a line or
        the two trees cannot be matched up; the caller then uses the top-level statement."""
        chain = [node]
        while not isinstance(chain[-1], cst.Module):
            current = chain[-1]
            parent = self.parents.get(current, _MISSING)
            if parent is _MISSING:
                parent = self.parent_below(current)
            if parent is _MISSING or parent is None:
                return None
            chain.append(parent)
        chain.reverse()  # Module, top-level statement, ..., node
        lines = [i for i, n in enumerate(chain) if isinstance(n, cst.SimpleStatementLine)]
        if not lines:
            return self._header_positions(chain)
        if lines[-1] < 2:
            return None  # the line is top-level
        statement = chain[lines[-1]]
        if statement in self._statement_tables:
            return self._statement_tables[statement]
        table = self._alone(chain[: lines[-1] + 1], statement)
        self._statement_tables[statement] = table
        return table

    def _header_positions(self, chain: list[cst.CSTNode]) -> Mapping | None:
        """Positions within the header of the innermost nested `if`, loop or `with` whose
        header holds the node (a test inside one large function), from the code of that
        statement with its blocks left out (a header's positions do not depend on what
        follows it). None where there is no such statement or it is an `elif`."""
        for j in range(len(chain) - 2, 1, -1):
            statement, child = chain[j], chain[j + 1]
            if not isinstance(statement, _HEADED):
                continue
            if child is statement.body or child is getattr(statement, "orelse", None):
                return None  # in a block: not a header
            parent = chain[j - 1]
            if isinstance(parent, cst.If) and parent.orelse is statement:
                return None  # `elif`: its code alone would say `if`
            if statement not in self._header_tables:
                changes: dict[str, object] = {"body": _EMPTY_BLOCK}
                if not isinstance(statement, cst.With):
                    changes["orelse"] = None
                header = statement.with_changes(**changes)
                self._header_tables[statement] = self._alone(chain[: j + 1], header)
            return self._header_tables[statement]
        return None

    def _alone(self, chain: list[cst.CSTNode], statement: cst.CSTNode) -> Mapping | None:
        """The positions of `statement` (standing for `chain[-1]`: the same node or a copy
        of its header) from its own code, generated with its enclosing blocks' indentation
        and moved to the line the standard library's parser gives `chain[-1]`."""
        line = self._nested_line(chain)
        if line is None:
            return None
        module = self.wrapper.module
        provider = PositionProvider()
        state = PositionProvidingCodegenState(
            default_indent=module.default_indent,
            default_newline=module.default_newline,
            provider=provider,
        )
        for block in chain[:-1]:
            if isinstance(block, (cst.IndentedBlock, cst.Match)):
                state.increase_indent(
                    module.default_indent if block.indent is None else block.indent
                )
        statement._codegen(state)
        return _shifted(provider._computed, line - provider._computed[statement].start.line)

    def _nested_line(self, chain: list[cst.CSTNode]) -> int | None:
        """The standard library's line of the statement line `chain[-1]` (chain: the Module,
        the top-level statement, ..., the line), found by following the same blocks in its
        tree; None where the two trees differ."""
        top = chain[1]
        if self._tree is None or top not in self._statement_lines():
            return None
        index = 0
        for statement in self.wrapper.module.body:
            if statement is top:
                break
            index += _width(statement)
        current: ast.AST = self._tree.body[index]
        k = 2
        while k < len(chain):
            node, parent = chain[k], chain[k - 1]
            body: list | None = None
            if isinstance(parent, cst.If) and node is parent.orelse and isinstance(node, cst.If):
                orelse = getattr(current, "orelse", None)
                if not (isinstance(orelse, list) and len(orelse) == 1):
                    return None
                current, k = orelse[0], k + 1
                continue
            if isinstance(node, cst.IndentedBlock) and node is getattr(parent, "body", None):
                body, block = getattr(current, "body", None), node
            elif isinstance(node, (cst.Else, cst.Finally)) and k + 1 < len(chain):
                field = "finalbody" if isinstance(node, cst.Finally) else "orelse"
                body, block, k = getattr(current, field, None), chain[k + 1], k + 1
            elif isinstance(node, (cst.ExceptHandler, cst.ExceptStarHandler, cst.MatchCase)):
                holders = parent.cases if isinstance(node, cst.MatchCase) else parent.handlers
                ast_holders = getattr(
                    current, "cases" if isinstance(node, cst.MatchCase) else "handlers", None
                )
                if not isinstance(ast_holders, list) or len(ast_holders) != len(holders):
                    return None
                position = [i for i, h in enumerate(holders) if h is node]
                if len(position) != 1 or k + 1 >= len(chain):
                    return None
                body, block, k = ast_holders[position[0]].body, chain[k + 1], k + 1
            else:
                return None
            if not isinstance(block, cst.IndentedBlock) or not isinstance(body, list):
                return None
            if k + 1 >= len(chain):
                return None
            child, index, total = chain[k + 1], None, 0
            for statement in block.body:
                if statement is child:
                    index = total
                total += _width(statement)
            if index is None or total != len(body):
                return None
            current, k = body[index], k + 2
        return getattr(current, "lineno", None)

    def _top_level(self, node: cst.CSTNode) -> cst.CSTNode | None:
        parents, current = self.parents, node
        while current in parents:
            parent = parents[current]
            if isinstance(parent, cst.Module):
                return current
            if parent is None:
                return None
            current = parent
        # Not entered yet: a rule reports on a child of what it visits, inside the statement
        # the traversal is in.
        return self.stack[1] if len(self.stack) > 1 else None

    def _positions_in(self, statement: cst.CSTNode) -> Mapping | None:
        if statement not in self._statement_tables:
            self._statement_tables[statement] = self._compute_positions(statement)
        return self._statement_tables[statement]

    def _compute_positions(self, statement: cst.CSTNode) -> Mapping | None:
        line = self._statement_lines().get(statement)
        if line is None:
            return None
        module = self.wrapper.module
        alone = module.with_changes(body=[statement], header=[], footer=[])
        table = cst.MetadataWrapper(alone, unsafe_skip_copy=True).resolve(PositionProvider)
        return _shifted(table, line - table[statement].start.line)

    def _statement_lines(self) -> dict[cst.CSTNode, int]:
        """Top-level LibCST statement -> the line its first token is on (from ast: the same
        statements in the same order; a line of `a; b` is one LibCST statement, two in ast)."""
        if self._lines is None:
            self._lines = {}
            if self._tree is not None:
                body = self._tree.body
                index = 0
                for statement in self.wrapper.module.body:
                    if index >= len(body):
                        self._lines = {}
                        break
                    self._lines[statement] = body[index].lineno
                    if isinstance(statement, cst.SimpleStatementLine):
                        index += len(statement.body)
                    else:
                        index += 1
                if index != len(body):
                    self._lines = {}  # the two parsers disagree: use LibCST's own positions
        return self._lines

    def bound_to(self, qualified: Iterable[str], attributes: Iterable[str] = ()) -> set[str] | None:
        """Names that an assignment may bind to a value reading one of the `qualified` names
        (or an attribute named in `attributes`): a superset, found at C speed, so that a rule
        resolves scopes only for names in it. None when the standard library's parser could
        not read the file (then any name may be)."""
        if self._tree is None or self.fallback:
            return None
        key = (frozenset(qualified), frozenset(attributes))
        if key not in self._bound:
            # `a.b.c` is read through a local name bound to `a`, `a.b` or `a.b.c`, followed by
            # the rest of the chain: all of these are identifiers of the value.
            needs = {frozenset((a,)) for a in attributes}
            for local, targets in self.aliases.items():
                for target in targets:
                    for name in key[0]:
                        if name == target or name.startswith(target + "."):
                            rest = name[len(target) + 1 :].split(".") if name != target else []
                            needs.add(frozenset((local, *rest)))
            self._bound[key] = python_fast.bound_to(self.source.text, self._tree, needs)
        return self._bound[key]

    @property
    def aliases(self) -> dict[str, set[str]]:
        """Local name -> the dotted names an import binds it to, from every import statement.

        Read with the standard library's parser (C speed); LibCST's qualified-name and scope
        analysis would cost several times the parse itself on every file. Relative imports are
        project-local and left out.
        """
        if self._aliases is None:
            self._aliases = _import_aliases(self.source.text, self._tree)
            if self._aliases is None:  # stdlib parser disagrees: fall back to LibCST
                self._aliases = {}
                self.fallback = True
        return self._aliases


def _import_aliases(text: str, tree: ast.Module | None = None) -> dict[str, set[str]] | None:
    if tree is None:
        tree = python_fast.parse_ast(text)
    if tree is None:
        return None
    aliases: dict[str, set[str]] = {}
    for node in python_fast.statements(tree.body):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    aliases.setdefault(alias.asname, set()).add(alias.name)
                else:
                    root = alias.name.split(".", 1)[0]
                    aliases.setdefault(root, set()).add(root)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                if alias.name != "*":
                    bound = alias.asname or alias.name
                    aliases.setdefault(bound, set()).add(f"{node.module}.{alias.name}")
    return aliases


class SpanMismatch(AssertionError):
    """A node's span does not hold the node's source: a bug in the position mapping."""

    def __init__(self, kind: str, expected: str, found: str) -> None:
        super().__init__(f"span of a {kind} holds {found!r}, its source is {expected!r}")


#: The nodes edits replace or are placed against: expressions, small statements, and the
#: pieces of argument, element and import lists. (Others, such as operators or whole compound
#: statements, have spans that are not a slice of their own code: leading comment lines,
#: surrounding whitespace.) tests/test_python_spans.py proves span text == node_source for each.
EDITABLE = (
    cst.BaseExpression,
    cst.BaseSmallStatement,
    cst.Arg,
    cst.BaseElement,
    cst.BaseDictElement,
    cst.ImportAlias,
    cst.SubscriptElement,
)
#: Nodes with a separating comma of their own that their span leaves out.
_TRAILING_COMMA = (
    cst.Arg,
    cst.BaseElement,
    cst.BaseDictElement,
    cst.ImportAlias,
    cst.SubscriptElement,
)


def node_source(
    module: cst.Module, node: cst.CSTNode, indents: Iterable[cst.IndentedBlock | cst.Match] = ()
) -> str:
    """The source text a node's syntactic span must hold, from LibCST's code generator (not
    from positions): without the node's own parentheses and its trailing comma/semicolon.
    `indents`: the blocks enclosing the node, outermost first (continuation lines of a
    bracketed expression carry their indentation)."""
    if not isinstance(node, EDITABLE):
        raise TypeError(f"a {type(node).__name__} is not edited as a whole")
    if isinstance(node, cst.Tuple) and not node.elements:
        return ""  # `()`: its parentheses are its own, and LibCST's span of it is empty
    changes: dict[str, object] = {}
    if isinstance(node, cst.BaseExpression) and node.lpar:
        changes["lpar"] = ()
        changes["rpar"] = ()
    if isinstance(node, _TRAILING_COMMA) and isinstance(node.comma, cst.Comma):
        changes["comma"] = cst.MaybeSentinel.DEFAULT
    if isinstance(getattr(node, "semicolon", None), cst.Semicolon):
        changes["semicolon"] = cst.MaybeSentinel.DEFAULT
    if isinstance(node, cst.Arg):
        changes["whitespace_after_arg"] = cst.SimpleWhitespace("")
    state = CodegenState(
        default_indent=module.default_indent, default_newline=module.default_newline
    )
    for block in indents:
        state.increase_indent(module.default_indent if block.indent is None else block.indent)
    (node.with_changes(**changes) if changes else node)._codegen(state)
    return "".join(state.tokens)


_VISITOR_NAMES: dict[type, tuple[str, ...]] = {}


class PythonRule(cst.BatchableCSTVisitor):
    """Base class of a Python rule: visit nodes, call `report`.

    Rules declare no metadata up front; `get_metadata` resolves a provider for the whole file
    the first time any rule asks for it, and every rule on the file shares the result.
    """

    METADATA_DEPENDENCIES: ClassVar[tuple] = ()
    #: What the fast pass (frontends/python_fast.py) must keep for this rule. FOLLOWS: the
    #: rule reaches findings through names bound to what holds its tokens (`cap =
    #: get_device_capability()` ... `cap < (8, 0)`), so bodies reading such names are kept;
    #: False for a rule whose findings and reasons hold a token themselves (import aliases
    #: are followed for every rule); "values": only into the value an assignment gives a name,
    #: through names, attributes, subscripts, arithmetic, tuples and callees
    #: (python_fast._bound_names). WHOLE_BODIES: the rule reads the statements around what
    #: it reports (the rest of a block after a test), so the bodies of functions that hold a
    #: token are kept whole, not reduced statement by statement. WHOLE_FILE: the rule reasons
    #: about other functions of the file (their bodies), so the file is not reduced while it
    #: runs. READS_CALLERS: the rule asks where the functions holding its findings are called
    #: from, so every place that names such a function is kept (to a fixpoint).
    #: DECORATORS_ONLY: the rule's findings are decorators that spell one of its tokens (and
    #: it reads module-level statements, never blanked), so its tokens keep only the bodies
    #: that hold such a decorator (`@parameterized.expand`, not a tensor's `.expand(...)`).
    FOLLOWS: ClassVar[bool | str] = True
    DECORATORS_ONLY: ClassVar[bool] = False
    WHOLE_BODIES: ClassVar[bool] = False
    WHOLE_FILE: ClassVar[bool] = False
    READS_CALLERS: ClassVar[bool] = False

    def __init__(self, spec: RuleSpec, source: SourceFile, sink: list[Diagnostic]) -> None:
        super().__init__()
        self.spec = spec
        self.source = source
        self._sink = sink
        #: The exception that stopped this rule on this file; the other rules go on.
        self.failure: BaseException | None = None
        self.context: FileContext | None = None

    def get_metadata(self, key, node, default=_MISSING):
        table = self.context.resolve(key)
        if default is _MISSING:
            return table[node]
        return table.get(node, default)

    def get_visitors(self):
        """LibCST's own version inspects every member of the class for every file; the names
        of a class's visit/leave methods are looked up once per class instead."""
        cls = type(self)
        names = _VISITOR_NAMES.get(cls)
        if names is None:
            names = _VISITOR_NAMES[cls] = tuple(super().get_visitors())
        return {name: self._guarded(getattr(self, name)) for name in names}

    def _guarded(self, method):
        def guarded(node):
            if self.failure is not None:
                return None
            try:
                return method(node)
            except Exception as exc:
                self.failure = exc
                return None

        return guarded

    # -- positions and text ------------------------------------------------------------------
    def span(self, node: cst.CSTNode) -> tuple[int, int]:
        """Character offsets of the node's syntactic extent: as LibCST's PositionProvider, it
        excludes the node's own parentheses (`x` in `((x))`), leading comment lines and
        trailing whitespace. `text`, `replace` and the reported position use this span."""
        rng = self.context.position(node)
        lines = self.source.lines
        return (
            lines.offset(rng.start.line, rng.start.column),
            lines.offset(rng.end.line, rng.end.column),
        )

    def text(self, node: cst.CSTNode) -> str:
        """The source text of `span(node)`: without the node's own parentheses."""
        start, end = self.span(node)
        return self.source.text[start:end]

    def source_of(self, node: cst.CSTNode) -> str:
        """What `text(node)` must be, derived from the tree rather than from positions: LibCST's
        code for the node, less what its span excludes (own parentheses, trailing comma or
        semicolon). Every edit declares it as its `original`, so the fixer refuses an edit
        whose offsets point anywhere else."""
        indents, parents, current = [], self.context.parents, node
        while current is not None:
            current = parents[current] if current in parents else self._parent_of(current)
            if isinstance(current, (cst.IndentedBlock, cst.Match)):
                indents.append(current)
        return node_source(self.context.wrapper.module, node, reversed(indents))

    def _parent_of(self, node: cst.CSTNode) -> cst.CSTNode | None:
        found = self.context.parent_below(node)
        if found is not _MISSING:
            return found
        return self.get_metadata(ParentNodeProvider, node, None)

    def replace(self, node: cst.CSTNode, replacement: str) -> Edit:
        start, end = self.span(node)
        return Edit(start, end, replacement, self.source_of(node))

    def insert_before(self, node: cst.CSTNode, text: str) -> Edit:
        start, _ = self._anchor(node)
        return Edit(start, start, text, "")

    def insert_after(self, node: cst.CSTNode, text: str) -> Edit:
        _, end = self._anchor(node)
        return Edit(end, end, text, "")

    def _anchor(self, node: cst.CSTNode) -> tuple[int, int]:
        """The span of a node an insertion is placed against, checked now: an insertion
        replaces nothing, so the fixer cannot check it; a wrong anchor stops the rule
        (an internal-error finding) instead."""
        start, end = self.span(node)
        expected = self.source_of(node)
        if self.source.text[start:end] != expected:
            raise SpanMismatch(type(node).__name__, expected, self.source.text[start:end])
        return start, end

    def fix(self, *edits: Edit, description: str = "", safety: Safety | None = None) -> Fix:
        if safety is None:
            safety = Safety.UNSAFE if self.spec.fix == "unsafe" else Safety.SAFE
        return Fix(safety, tuple(sorted(edits)), description)

    # -- names -------------------------------------------------------------------------------
    def qualified_names(self, node: cst.CSTNode) -> set[str]:
        """`torch.cuda.amp.autocast` for `ac` after `from torch.cuda.amp import autocast as ac`."""
        context = self.context
        aliases = context.aliases
        if context.fallback:
            return {q.name for q in self.get_metadata(QualifiedNameProvider, node, set())}
        chain = dotted(node)
        if chain is None:
            return set()
        root, _, rest = chain.partition(".")
        targets = aliases.get(root)
        if not targets:
            return set()
        return {f"{t}.{rest}" if rest else t for t in targets}

    # -- reporting ---------------------------------------------------------------------------
    def report(
        self,
        node: cst.CSTNode,
        message: str,
        fix: Fix | None = None,
        severity: Severity | None = None,
        through: cst.CSTNode | None = None,
        data: dict | None = None,
    ) -> None:
        """Report `node` (through the end of `through`, when given: a branch the finding spans);
        `data`: facts the engine reads (Diagnostic.data)."""
        start, end = self.span(node)
        if through is not None:
            end = max(end, self.span(through)[1])
        self._sink.append(
            Diagnostic(
                path=self.source.path,
                rule=self.spec.id,
                code=self.spec.code,
                severity=severity or self.spec.severity,
                step=self.spec.step,
                position=self.source.lines.position(start, end),
                message=message,
                fix=fix,
                data=data or {},
            )
        )


class ParentAware(PythonRule):
    """A rule that looks at where a node stands (its parents)."""

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        parents = self.context.parents
        if node in parents:  # recorded by the traversal itself, for every node visited so far
            return parents[node]
        found = self.context.parent_below(node)
        if found is not _MISSING:
            return found
        return self.get_metadata(ParentNodeProvider, node, None)

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        current = self.parent(node)
        while current is not None:
            yield current
            current = self.parent(current)


class NameAware(ParentAware):
    """A rule that resolves imports and aliases (`from torch.cuda.amp import autocast as ac`)."""

    def references(self, name_node: cst.Name) -> tuple[cst.CSTNode | None, list[cst.CSTNode]]:
        """The statement that binds `name_node`'s name, and every node that refers to it.

        Returns (None, []) when the binding is not a single unambiguous import.
        """
        scope = self.get_metadata(ScopeProvider, name_node, None)
        if scope is None:
            return None, []
        accesses = [a for a in scope.accesses[name_node.value] if a.node is name_node]
        if len(accesses) != 1:
            return None, []
        referents = list(accesses[0].referents)
        if len(referents) != 1:
            return None, []
        assignment = referents[0]
        node = getattr(assignment, "node", None)
        if not isinstance(node, (cst.Import, cst.ImportFrom)):
            return None, []
        return node, [ref.node for ref in assignment.references]

    def single_assignment(self, name: cst.Name):
        """(the scope's assignment, the `x = value` statement) when `name` is bound exactly once,
        by a plain one-target assignment; else None."""
        scope = self.get_metadata(ScopeProvider, name, None)
        if scope is None:
            return None
        assignments = list(scope.assignments[name.value])
        if len(assignments) != 1:
            return None
        node = getattr(assignments[0], "node", None)
        target = self.parent(node) if node is not None else None
        statement = self.parent(target) if isinstance(target, cst.AssignTarget) else None
        if not (isinstance(statement, cst.Assign) and len(statement.targets) == 1):
            return None
        return assignments[0], statement


def dotted(node: cst.CSTNode) -> str | None:
    """`a.b.c` for a pure Name/Attribute chain, else None."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = dotted(node.value)
        return None if head is None else f"{head}.{node.attr.value}"
    return None


def root_name(node: cst.CSTNode) -> cst.Name | None:
    while isinstance(node, cst.Attribute):
        node = node.value
    return node if isinstance(node, cst.Name) else None


def string_value(node: cst.CSTNode) -> str | None:
    """The value of a string literal (implicit concatenations too); None for f-strings, bytes
    and anything else."""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        try:
            value = node.evaluated_value
        except Exception:
            return None
        return value if isinstance(value, str) else None
    return None


def requote(node: cst.SimpleString, value: str) -> str:
    """`value` as a literal with `node`'s prefix and quotes (value must need no escaping)."""
    quote = node.quote
    return f"{node.prefix}{quote}{value}{quote}"


#: Whether `run_rules` lets the fast pass blank the bodies no rule needs (tests turn it off to
#: compare both paths).
FAST_PASS = True


def run_rules(
    source: SourceFile, rules: Iterable[tuple[RuleSpec, type[PythonRule]]]
) -> tuple[list[Diagnostic], list[tuple[RuleSpec, BaseException]]]:
    """Parse once and run every rule in one batched traversal.

    Returns the diagnostics and, for each rule that raised, the exception (its findings on
    this file are dropped, since they may be incomplete).
    """
    rules = list(rules)
    if FAST_PASS:  # the text first (most files spell `expand` in no decorator): no parse
        rules = [
            (spec, cls)
            for spec, cls in rules
            if not cls.DECORATORS_ONLY or python_fast.may_decorate(source.text, spec.tokens)
        ]
        if not rules:
            return [], []
    tree = python_fast.parse_ast(source.text)
    if FAST_PASS and tree is not None:
        # A rule whose findings are decorators spelling its tokens has nothing to find where
        # no decorator spells one (`.expand(...)` on tensors only): no parse for it alone.
        rules = [
            (spec, cls)
            for spec, cls in rules
            if not cls.DECORATORS_ONLY or python_fast.decorator_hits(source.text, tree, spec.tokens)
        ]
        if not rules:
            return [], []
    reduced = None
    if (
        FAST_PASS
        and tree is not None
        and len(source.text) >= python_fast.MIN_BYTES
        and not any(cls.WHOLE_FILE for _, cls in rules)
    ):
        anywhere = [(s, cls) for s, cls in rules if not cls.DECORATORS_ONLY]
        reduced = python_fast.reduce(
            source.text,
            tree,
            {t for s, _ in anywhere for t in s.tokens},
            {t for s, cls in anywhere if cls.FOLLOWS is True for t in s.tokens},
            statements=not any(cls.WHOLE_BODIES for _, cls in rules),
            callers=any(cls.READS_CALLERS for _, cls in rules),
            follows_values={t for s, cls in anywhere if cls.FOLLOWS == "values" for t in s.tokens},
            decorator_tokens={t for s, cls in rules if cls.DECORATORS_ONLY for t in s.tokens},
        )
    wrapper = parse(source, reduced)
    sink: list[Diagnostic] = []
    visitors = [cls(spec, source, sink) for spec, cls in rules]
    context = FileContext(source, wrapper, tree)
    context.statement_positions = FAST_PASS and tree is not None
    for visitor in visitors:
        visitor.context = context
    if visitors:
        # Record each node's parent as the rules' own traversal enters it: LibCST's
        # ParentNodeProvider would walk the whole tree again (the costliest metadata here).
        parents, stack = context.parents, context.stack

        def enter(node: cst.CSTNode) -> None:
            parents[node] = stack[-1] if stack else None
            stack.append(node)

        def leave(node: cst.CSTNode) -> None:
            stack.pop()

        with ExitStack() as resolved:
            for visitor in visitors:  # what a rule declares up front (none do: lazy metadata)
                resolved.enter_context(visitor.resolve(wrapper))
            python_walk.walk(wrapper.module, visitors, before_visit=enter, after_leave=leave)
    failed = [(v.spec, v.failure) for v in visitors if v.failure is not None]
    broken = {spec.id for spec, _ in failed}
    return [d for d in sink if d.rule not in broken], failed
