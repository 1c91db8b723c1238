"""rocm-arch-env: TORCH_CUDA_ARCH_LIST set for an extension build, PYTORCH_ROCM_ARCH not.

Python (`os.environ[...] = ...`, `setdefault`, `putenv`, `env={...}`), shell (`export`,
prefix assignments) and Dockerfile (`ENV`, `ARG`) forms. A file that mentions
PYTORCH_ROCM_ARCH anywhere in code is taken to handle it. The fix adds PYTORCH_ROCM_ARCH with
the rule's default architecture list next to the CUDA one; it is unsafe because the list must
match the GPUs the project targets.
"""

from __future__ import annotations

import libcst as cst

from cuda2rocm.frontends import text
from cuda2rocm.frontends.python import NameAware
from cuda2rocm.frontends.python_env import env_write
from cuda2rocm.model import Edit

CUDA_VAR = "TORCH_CUDA_ARCH_LIST"
ROCM_VAR = "PYTORCH_ROCM_ARCH"


def _message(spec) -> str:
    return (
        f"{CUDA_VAR} is ignored by ROCm builds; without {ROCM_VAR} torch compiles for the GPUs "
        "visible at build time (none in `docker build` or on a CI runner); set "
        f'{ROCM_VAR} too, e.g. {ROCM_VAR}="{spec.tables["default_archs"]}"'
    )


class Rule(NameAware):
    def __init__(self, *args) -> None:
        super().__init__(*args)
        self._handled = ROCM_VAR in self.source.text

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if self._handled:
            return
        write = env_write(self, node, (CUDA_VAR,))
        if write is None or write.name != CUDA_VAR:
            return
        self.report(node, _message(self.spec), self._fix(node))

    def _fix(self, key: cst.SimpleString):
        """Insert `<environ>.setdefault("PYTORCH_ROCM_ARCH", "...")` after the statement."""
        environ = None
        statement = None
        for node in self.ancestors(key):
            if isinstance(node, cst.Subscript) and environ is None:
                environ = node.value
            if (
                isinstance(node, cst.Call)
                and isinstance(node.func, cst.Attribute)
                and node.func.attr.value == "setdefault"
                and environ is None
            ):
                environ = node.func.value
            if isinstance(node, cst.SimpleStatementLine):
                statement = node
                break
            if isinstance(node, (cst.Dict, cst.Lambda)) or (
                isinstance(node, cst.Call) and environ is None
            ):
                return None
        if environ is None or statement is None:
            return None
        start, end = self.span(statement)
        line = self.source.lines.line_text(self.source.lines.position(start, start).line)
        indent = line[: len(line) - len(line.lstrip())]
        archs = self.spec.tables["default_archs"]
        new = f'\n{indent}{self.text(environ)}.setdefault("{ROCM_VAR}", "{archs}")'
        newline = self.source.text.find("\n", end - 1)
        at = len(self.source.text) if newline < 0 else newline
        if at > 0 and self.source.text[at - 1] == "\r":
            at -= 1
            new = new.replace("\n", "\r\n")
        return self.fix(Edit(at, at, new), description=f'also set {ROCM_VAR}="{archs}"')


class TextRule(text.TextRule):
    def check(self) -> None:
        view = self.view
        if view.assigned(ROCM_VAR):
            return
        archs = self.spec.tables["default_archs"]
        for a in view.assignments:
            if a.name != CUDA_VAR:
                continue
            if a.kind in ("env-legacy", "arg"):
                keyword = "ENV" if a.kind == "env-legacy" else "ARG"
                # after the instruction's last line (it may continue over several)
                eol = next(ln.end for ln in view.lines if ln.start <= a.start < ln.end)
                edit = Edit(eol, eol, f'\n{keyword} {ROCM_VAR}="{archs}"')
            else:
                edit = Edit(a.end, a.end, f' {ROCM_VAR}="{archs}"')
            self.report(
                a.start,
                a.start + len(a.name),
                _message(self.spec),
                self.fix(edit, description=f'also set {ROCM_VAR}="{archs}"'),
            )
