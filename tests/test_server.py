"""`cuda2rocm server`: a real LSP session over stdio with pygls's client."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

pytest.importorskip("pygls")

from lsprotocol import types
from pygls.lsp.client import LanguageClient

ROOT = Path(__file__).resolve().parent.parent
PY = 'import torch\nx = torch.zeros(1, device="hip")\n'  # device-string-hip: a safe fix
CU = "#define WARP_SIZE 32\n__global__ void k(unsigned* m) { *m = __ballot_sync(0xffffffff, 1); }\n"


class Session:
    """A client talking to `python -m cuda2rocm server`, recording what it publishes."""

    def __init__(self) -> None:
        self.client = LanguageClient("test-client", "1")
        self.published: dict[str, list[types.PublishDiagnosticsParams]] = {}
        self.logs: list[str] = []

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
            self.published.setdefault(params.uri, []).append(params)

        @self.client.feature(types.WINDOW_LOG_MESSAGE)
        def on_log(params: types.LogMessageParams) -> None:
            self.logs.append(params.message)

    async def start(self, root: Path) -> None:
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        await self.client.start_io(sys.executable, "-m", "cuda2rocm", "server", env=env)
        await self.client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(), root_uri=root.as_uri(), process_id=None
            )
        )
        self.client.initialized(types.InitializedParams())

    async def wait_for(self, uri: str, version: int, timeout: float = 60) -> list:
        async def poll() -> list:
            while True:
                for p in self.published.get(uri, []):
                    if p.version == version:
                        return p.diagnostics
                await asyncio.sleep(0.05)

        return await asyncio.wait_for(poll(), timeout)

    def open(self, uri: str, language: str, text: str, version: int = 1) -> None:
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, language, version, text))
        )

    def change(self, uri: str, version: int, text: str) -> None:
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                [types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    async def stop(self) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()


def _run(test, tmp_path: Path) -> None:
    async def body() -> None:
        session = Session()
        await session.start(tmp_path)
        try:
            await test(session)
        finally:
            await session.stop()

    asyncio.run(asyncio.wait_for(body(), 240))


def test_diagnostics_code_actions_and_hover(tmp_path: Path) -> None:
    py = (tmp_path / "train.py").as_uri()
    cu = (tmp_path / "kernels" / "warp.cu").as_uri()

    async def test(s: Session) -> None:
        s.open(py, "python", PY)
        found = await s.wait_for(py, 1)
        assert [d.code for d in found] == ["device-string-hip"]
        d = found[0]
        assert d.source == "cuda2rocm" and d.severity == types.DiagnosticSeverity.Error
        assert d.range.start == types.Position(1, 26) and len(d.message) <= 100
        actions = await s.client.text_document_code_action_async(
            types.CodeActionParams(
                types.TextDocumentIdentifier(py), d.range, types.CodeActionContext([d])
            )
        )
        assert len(actions) == 1 and actions[0].is_preferred
        edit = actions[0].edit.document_changes[0]
        assert edit.text_document.version == 1 and edit.edits[0].new_text == '"cuda"'
        hover = await s.client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(py), types.Position(1, 29))
        )
        assert "device-string-hip" in hover.contents.value and "ROCm" in hover.contents.value

        s.open(cu, "cuda", CU)
        rules = {d.code for d in await s.wait_for(cu, 1)}
        assert {"warp-size-32", "warp-mask-32bit"} <= rules
        hover = await s.client.text_document_hover_async(  # a CUDA name: what map says
            types.HoverParams(types.TextDocumentIdentifier(cu), types.Position(1, 50))
        )
        assert hover is not None and "__ballot_sync" in hover.contents.value

        # A fixed document publishes an empty list for its version; saving it publishes again.
        s.change(py, 2, PY.replace('"hip"', '"cuda"'))
        assert not await s.wait_for(py, 2)
        s.client.text_document_did_save(
            types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(py))
        )
        for _ in range(200):
            if len(s.published[py]) == 3:
                break
            await asyncio.sleep(0.05)
        assert [p.version for p in s.published[py]] == [1, 2, 2]

    _run(test, tmp_path)


def test_malformed_documents_and_a_burst_of_changes(tmp_path: Path) -> None:
    broken = (tmp_path / "broken.py").as_uri()
    junk = (tmp_path / "junk.cu").as_uri()
    other = (tmp_path / "notes.unknownext").as_uri()

    async def test(s: Session) -> None:
        s.open(broken, "python", "def f(:\n  x = = 1\n\x00\ud7ff")
        assert all(d.code in ("parse-error",) for d in await s.wait_for(broken, 1))
        s.open(junk, "cuda", "}}}{{{ #if\n#endif #endif\n" + "\x01" * 50 + "template<<<<")
        await s.wait_for(junk, 1)  # anything, but an answer
        s.open(other, "plaintext", "cudaMalloc")
        assert not await s.wait_for(other, 1)
        # A broken configuration beside the document: logged, no diagnostics, still serving.
        (tmp_path / "bad").mkdir()
        (tmp_path / "bad" / "pyproject.toml").write_text("[tool.cuda2rocm\nselect = [")
        bad = (tmp_path / "bad" / "x.py").as_uri()
        s.open(bad, "python", PY)
        assert not await s.wait_for(bad, 1)
        assert any("bad" in line for line in s.logs)
        # 1,000 rapid changes, alternating between a finding and none: only the last counts.
        for version in range(2, 1002):
            text = PY if version % 2 else PY.replace('"hip"', '"cuda"')
            s.change(broken, version, text)
        final = await s.wait_for(broken, 1001)
        assert [d.code for d in final] == ["device-string-hip"]  # 1001 is odd: PY
        await asyncio.sleep(DEBOUNCE * 3)
        last = s.published[broken][-1]
        assert last.version == 1001 and [d.code for d in last.diagnostics] == ["device-string-hip"]
        versions = [p.version for p in s.published[broken]]
        assert versions == sorted(versions) and len(versions) < 100  # debounced, never stale
        # Still serving.
        hover = await s.client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(broken), types.Position(50, 0))
        )
        assert hover is None

    _run(test, tmp_path)


DEBOUNCE = 0.2


def test_unsafe_fix_is_an_action_marked_unsafe(tmp_path: Path) -> None:
    from cuda2rocm.server import Cuda2RocmServer, Linted

    server = Cuda2RocmServer()
    text = "import torch\n\nif torch.version.cuda:\n    import tensorrt\n"
    path = tmp_path / "gate.py"
    found = server.lint_text(str(path), text)
    assert any(d.fix is not None and d.fix.safety.value == "unsafe" for d in found)
    server.linted[path.as_uri()] = Linted(3, text, tuple(found))
    everything = types.Range(types.Position(0, 0), types.Position(9, 0))
    actions = server.actions(path.as_uri(), everything)
    unsafe = [a for a in actions if "unsafe" in a.title]
    assert unsafe and not any(a.is_preferred for a in unsafe)
    assert unsafe[0].edit.document_changes[0].text_document.version == 3
