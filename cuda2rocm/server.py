"""`cuda2rocm server`: a language server (LSP over stdio, on pygls) for editors.

Diagnostics on open, change and save for every language the linter reads (Python, C++/CUDA,
build files), with the one-line message (report.messages) and the rule's page as the code's
link; code actions for the fixes (safe ones preferred, unsafe ones titled as such); hover with
the finding's full message and the rule's explanation, or, over a CUDA name, what it becomes on
ROCm (`cuda2rocm map`).

Editors send a change per keystroke. Changes are linted after a short pause (DEBOUNCE_S), only
the newest version of a document, and a result is published only if its document has not moved
on meanwhile, with the version it was computed for: the last diagnostics a client sees are
those of the last version it sent. Any failure on a document (undecodable, unparsable, a bug)
is logged and gives no diagnostics for it; the server keeps serving.

The document is linted in memory with the configuration that applies to its path (the same
`[tool.cuda2rocm]` lookup as `lint`), and with no project-wide facts: the findings are those of
`lint --stdin-filename PATH -`.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from cuda2rocm import __version__
from cuda2rocm.model import Diagnostic, Safety, Severity

#: Seconds a document must stay unchanged before it is linted again.
DEBOUNCE_S = 0.2
SOURCE = "cuda2rocm"
_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*(?:\.h(?:pp)?)?")


@dataclass(frozen=True)
class Linted:
    """The findings of one version of one document, with the text they refer to."""

    version: int | None
    text: str
    diagnostics: tuple[Diagnostic, ...]


class _Offsets:
    """Character offsets / (line, column) -> LSP positions (lines 0-based, UTF-16 columns)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def position(self, line: int, column: int) -> types.Position:
        """From 1-based line and character column."""
        line = min(max(line, 1), len(self.starts))
        start = self.starts[line - 1]
        end = self.starts[line] - 1 if line < len(self.starts) else len(self.text)
        prefix = self.text[start : min(start + max(column - 1, 0), end)]
        return types.Position(line - 1, len(prefix.encode("utf-16-le")) // 2)

    def at_offset(self, offset: int) -> types.Position:
        import bisect

        offset = min(max(offset, 0), len(self.text))
        line = bisect.bisect_right(self.starts, offset)
        return self.position(line, offset - self.starts[line - 1] + 1)


class Cuda2RocmServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(SOURCE, __version__)
        self.linted: dict[str, Linted] = {}
        self.pending: dict[str, asyncio.Task] = {}
        self._sessions: dict[str, object] = {}
        self._specs: dict | None = None

    # -- linting -----------------------------------------------------------------------------
    def lint_text(self, path: str, text: str) -> list[Diagnostic]:
        """Reported findings of `text` as the file at `path` (guarded ones left out)."""
        from cuda2rocm.discover import Found, language_of
        from cuda2rocm.session import Options, Session

        language = language_of(Path(path))
        if language is None:
            return []
        folder = str(Path(path).parent)
        if folder not in self._sessions:
            self._sessions[folder] = Session([path], Options())
        session = self._sessions[folder]
        linter = session.linter_for(session.config_for(path))
        found = linter.lint_data(Found(Path(path), path, language), text.encode("utf-8"))
        return sorted((d for d in found if not d.guarded), key=lambda d: d.sort_key)

    def spec(self, rule: str):
        if self._specs is None:
            from cuda2rocm.catalogue import load_catalogue

            self._specs = {r.id: r for r in load_catalogue()}
        return self._specs.get(rule)

    def to_lsp(self, d: Diagnostic, offsets: _Offsets) -> types.Diagnostic:
        from cuda2rocm.report.json_format import rule_url
        from cuda2rocm.report.messages import short

        p = d.position
        url = rule_url(self.spec(d.rule))
        return types.Diagnostic(
            range=types.Range(
                offsets.position(p.line, p.column), offsets.position(p.end_line, p.end_column)
            ),
            message=short(d.message),
            severity=_SEVERITY[d.severity],
            code=d.rule,
            code_description=types.CodeDescription(href=url) if url else None,
            source=SOURCE,
            data={"code": d.code, "fix": None if d.fix is None else d.fix.safety.value},
        )

    def publish(self, uri: str) -> None:
        """Lint the document's current version and publish, unless it changed meanwhile."""
        try:
            document = self.workspace.get_text_document(uri)
            version, text = document.version, document.source
        except Exception:  # closed, or never opened
            return
        try:
            found = self.lint_text(to_fs_path(uri) or uri, text)
        except Exception as exc:  # a bug, or a document no front-end survives: keep serving
            self.window_log_message(
                types.LogMessageParams(
                    types.MessageType.Error,
                    f"cuda2rocm: {uri}: {type(exc).__name__}: {exc}",
                )
            )
            found = []
        current = self.workspace.text_documents.get(uri)
        if current is None or current.version != version:
            return  # a newer version is on its way; its own lint publishes
        self.linted[uri] = Linted(version, text, tuple(found))
        offsets = _Offsets(text)
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=uri, version=version, diagnostics=[self.to_lsp(d, offsets) for d in found]
            )
        )

    def schedule(self, uri: str, delay: float) -> None:
        old = self.pending.pop(uri, None)
        if old is not None:
            old.cancel()

        async def later() -> None:
            await asyncio.sleep(delay)
            if self.pending.get(uri) is task:
                del self.pending[uri]
            self.publish(uri)

        task = asyncio.ensure_future(later())
        self.pending[uri] = task

    # -- code actions and hover --------------------------------------------------------------
    def actions(self, uri: str, wanted: types.Range) -> list[types.CodeAction]:
        linted = self.linted.get(uri)
        if linted is None:
            return []
        offsets = _Offsets(linted.text)
        out = []
        for d in linted.diagnostics:
            if d.fix is None:
                continue
            lsp = self.to_lsp(d, offsets)
            if not _overlaps(lsp.range, wanted):
                continue
            edits = [
                types.TextEdit(
                    types.Range(offsets.at_offset(e.start), offsets.at_offset(e.end)),
                    e.replacement,
                )
                for e in d.fix.edits
            ]
            unsafe = d.fix.safety is Safety.UNSAFE
            title = d.fix.description or f"fix {d.rule}"
            out.append(
                types.CodeAction(
                    title=f"{title} ({d.rule}{', unsafe: review the change' if unsafe else ''})",
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[lsp],
                    is_preferred=not unsafe,
                    edit=types.WorkspaceEdit(
                        document_changes=[
                            types.TextDocumentEdit(
                                text_document=types.OptionalVersionedTextDocumentIdentifier(
                                    uri=uri, version=linted.version
                                ),
                                edits=edits,
                            )
                        ]
                    ),
                )
            )
        return out

    def hover(self, uri: str, position: types.Position) -> types.Hover | None:
        parts = []
        linted = self.linted.get(uri)
        if linted is not None:
            offsets = _Offsets(linted.text)
            for d in linted.diagnostics:
                r = self.to_lsp(d, offsets).range
                if _overlaps(r, types.Range(position, position)):
                    parts.append(self._explain(d))
        word = self._word(uri, position)
        if word:
            from cuda2rocm import mapping

            found = mapping.lookup(word)
            if found is not None:
                parts.append(f"**{word} on ROCm**\n\n```\n{mapping.render_text(found)}\n```")
        if not parts:
            return None
        return types.Hover(
            contents=types.MarkupContent(types.MarkupKind.Markdown, "\n\n---\n\n".join(parts))
        )

    def _explain(self, d: Diagnostic) -> str:
        spec = self.spec(d.rule)
        head = f"**{d.rule} ({d.code})**: {d.message}"
        if spec is None:
            return head
        return f"{head}\n\n{spec.summary}\n\n{spec.explanation}"

    def _word(self, uri: str, position: types.Position) -> str:
        try:
            lines = self.workspace.get_text_document(uri).lines
        except Exception:
            return ""
        if position.line >= len(lines):
            return ""
        line = lines[position.line]
        units, index = 0, 0
        while index < len(line) and units < position.character:  # UTF-16 units -> characters
            units += len(line[index].encode("utf-16-le")) // 2
            index += 1
        for match in _WORD.finditer(line):
            if match.start() <= index <= match.end():
                return match.group()
        return ""


def _overlaps(a: types.Range, b: types.Range) -> bool:
    def key(p: types.Position) -> tuple[int, int]:
        return (p.line, p.character)

    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)


def build() -> Cuda2RocmServer:
    """The server with its features registered."""
    server = Cuda2RocmServer()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: Cuda2RocmServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: Cuda2RocmServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, DEBOUNCE_S)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: Cuda2RocmServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: Cuda2RocmServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        task = ls.pending.pop(uri, None)
        if task is not None:
            task.cancel()
        ls.linted.pop(uri, None)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, []))

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    )
    def code_action(ls: Cuda2RocmServer, params: types.CodeActionParams):
        return ls.actions(params.text_document.uri, params.range)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: Cuda2RocmServer, params: types.HoverParams):
        return ls.hover(params.text_document.uri, params.position)

    return server


def main() -> None:
    build().start_io()
