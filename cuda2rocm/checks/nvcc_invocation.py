"""nvcc-invocation: build scripts and programs that run nvcc themselves.

Python (`PythonRule`): `subprocess.run/check_output/Popen/...`, `os.system`, `os.popen` whose
command is nvcc — a list whose first element names nvcc (`"nvcc"`, `CUDA_HOME + "/bin/nvcc"`,
`os.path.join(cuda_home, "bin", "nvcc")`, an f-string), or a shell string that runs it
(`"nvcc -V"`); names bound once to such a command are followed. The usual case is toolkit version
parsing (`get_cuda_bare_metal_version`), whose result then gates flags and features. Calls of a
module-level helper that runs nvcc are reported too, where they are not in a CUDA-only branch:
that is where the ROCm build enters it. C++ (`Rule`): `system()`/`popen()`/`exec*()` with a
string that runs nvcc (JIT builds). A shell call whose result nobody reads
(`os.system("nvcc --version")`) only prints "not found" on ROCm hosts: info.
"""

from __future__ import annotations

import re

import libcst as cst

from cuda2rocm.frontends import python as _py
from cuda2rocm.frontends.cpp import CppRule, hip_excluded
from cuda2rocm.frontends.python_build import under_vendor_branch
from cuda2rocm.frontends.python_shell import prints_only
from cuda2rocm.model import Severity

#: `nvcc` as a program: a path ending in nvcc, or the first word of a shell command.
_PROGRAM = re.compile(r"(^|[/\\])nvcc(\.exe)?$")
_SHELL = re.compile(r"(^|[/\\\s;&|(`])nvcc(\.exe)?(\s|$)")
_RUNNERS = {
    "subprocess.run",
    "subprocess.call",
    "subprocess.check_call",
    "subprocess.check_output",
    "subprocess.Popen",
    "subprocess.getoutput",
    "subprocess.getstatusoutput",
    "os.system",
    "os.popen",
}
_C_RUNNERS = {"system", "std::system", "popen", "_popen", "execvp", "execlp", "execl", "execv"}
_MISSING_PROGRAM = ("FileNotFoundError", "OSError", "Exception", "CalledProcessError")
_C_STRING = re.compile(r'"((?:\\.|[^"\\])*)"')


def _strings(node: cst.CSTNode) -> list[str]:
    """The literal text pieces of an expression, in order (f-string fields left out)."""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        value = _py.string_value(node)
        return [value] if value is not None else []
    if isinstance(node, cst.FormattedString):
        return [p.value for p in node.parts if isinstance(p, cst.FormattedStringText)]
    if isinstance(node, cst.BinaryOperation):
        return _strings(node.left) + _strings(node.right)
    if isinstance(node, cst.Call):  # os.path.join(home, "bin", "nvcc"), Path(...) / "nvcc"
        return [s for a in node.args[-1:] for s in _strings(a.value)]
    return []


class PythonRule(_py.NameAware):
    #: the fast pass keeps every call of a function holding a finding: this rule asks
    #: where such a function is called from
    READS_CALLERS = True

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self._runs: list[cst.Call] = []
        self._calls: dict[str, list[cst.Call]] = {}

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name):
            self._calls.setdefault(node.func.value, []).append(node)
        if not node.args or not self.qualified_names(node.func) & _RUNNERS:
            return
        command = next((a.value for a in node.args if a.keyword is None), None)
        command = command or next(
            (a.value for a in node.args if a.keyword and a.keyword.value == "args"), None
        )
        if command is not None and self._runs_nvcc(command):
            self._runs.append(node)

    def _runs_nvcc(self, command: cst.BaseExpression, depth: int = 0) -> bool:
        if isinstance(command, cst.Name) and depth < 3:
            value = self._binding(command)
            return value is not None and self._runs_nvcc(value, depth + 1)
        if isinstance(command, (cst.List, cst.Tuple)):
            if not command.elements:
                return False
            first = command.elements[0].value
            if isinstance(first, cst.Name) and depth < 3:
                value = self._binding(first)
                return value is not None and any(_PROGRAM.search(s) for s in _strings(value)[-1:])
            pieces = _strings(first)
            return bool(pieces) and _PROGRAM.search(pieces[-1]) is not None
        return any(_SHELL.search(s) for s in _strings(command))

    def _binding(self, name: cst.Name) -> cst.BaseExpression | None:
        found = self.single_assignment(name)
        return found[1].value if found is not None else None

    def _handled(self, node: cst.CSTNode) -> bool:
        """Inside `try:` with a handler for a missing program (a probe: "is nvcc here?")."""
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, cst.Try):
                for handler in ancestor.handlers:
                    caught = self.text(handler.type) if handler.type is not None else ""
                    if not caught or any(e in caught for e in _MISSING_PROGRAM):
                        return True
            if isinstance(ancestor, cst.FunctionDef):
                return False
        return False

    def _cuda_only(self, node: cst.CSTNode, depth: int = 0) -> bool:
        if under_vendor_branch(self, node):
            return True
        function = self._function(node)
        if function is None or depth > 3:
            return False
        calls = self._calls.get(function.name.value, [])
        return bool(calls) and all(self._cuda_only(c, depth + 1) for c in calls)

    def _function(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        return next((a for a in self.ancestors(node) if isinstance(a, cst.FunctionDef)), None)

    def leave_Module(self, original_node: cst.Module) -> None:
        helpers: set[str] = set()
        for run in self._runs:
            if self._cuda_only(run) or self._handled(run):
                continue
            if prints_only(self, run):
                self.report(
                    run,
                    "runs nvcc through the shell and ignores the result: on ROCm hosts the shell "
                    "prints 'nvcc: not found' and the program continues (hipcc --version is the "
                    "ROCm counterpart, if the output matters)",
                    severity=Severity.INFO,
                )
                continue
            self.report(
                run,
                "runs nvcc, which ROCm hosts do not have (and whose version is the CUDA "
                "toolkit's); under IS_HIP_EXTENSION / torch.version.hip use hipcc or "
                "torch.version.hip instead",
            )
            function = self._function(run)
            if function is not None and self.parent(function) is not None:
                helpers.add(function.name.value)
        for name in sorted(helpers):
            for call in self._calls.get(name, []):
                if self._function(call) is not None and self._function(call).name.value == name:
                    continue  # recursion
                if not self._cuda_only(call):
                    self.report(
                        call,
                        f"calls {name}(), which runs nvcc: on ROCm this fails or gates the "
                        "build on a CUDA toolkit version; branch on IS_HIP_EXTENSION first",
                    )


class Rule(CppRule):
    def check(self) -> None:
        view = self.view
        for call in view.calls:
            func = call.child_by_field_name("function")
            args = call.child_by_field_name("arguments")
            if func is None or args is None or view.text(func) not in _C_RUNNERS:
                continue
            literals = _C_STRING.findall(view.text(args))
            if not any(_SHELL.search(s) for s in literals[:1]) or hip_excluded(view, call):
                continue
            self.report(
                call,
                "runs nvcc at run time, which ROCm hosts do not have; under "
                "__HIP_PLATFORM_AMD__ compile with hiprtc (or hipcc --genco) for the device's "
                "gcnArchName instead",
            )
