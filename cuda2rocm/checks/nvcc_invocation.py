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
from cuda2rocm.frontends.python_build import names_vendor, under_vendor_branch
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
        self._assigns: list[cst.Assign] = []
        self._comparisons: list[cst.Comparison] = []

    def visit_Assign(self, node: cst.Assign) -> None:
        self._assigns.append(node)

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if any(isinstance(c.operator, _TESTS) for c in node.comparisons):
            self._comparisons.append(node)

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
        self._version_gates(helpers)
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

    # -- what the toolkit version gates -------------------------------------------------------
    def _version_gates(self, helpers: set[str]) -> None:
        """`_, rel = toolkit_version(CUDA_HOME)` ... `if rel >= Version("11.8"):`: a comparison
        of what a helper that runs nvcc returns with a version literal is a CUDA-toolkit gate;
        ROCm never has that version, so it decides the ROCm build by accident."""
        if not helpers:
            return
        tracked: set[str] = set()
        for _ in range(3):  # rel = ...; major = int(rel.split(".")[0]): names derived from it
            for assign in self._assigns:
                if self._derives(assign.value, helpers, tracked):
                    for target in assign.targets:
                        tracked |= {n.value for n in _names(target.target)}
        # names holding torch's CUDA version: `torch_binary = parse(torch.version.cuda)`
        torch_cuda = {
            n.value
            for a in self._assigns
            if "version.cuda" in self.text(a.value)
            for t in a.targets
            for n in _names(t.target)
        }
        for comp in self._comparisons:
            sides = [comp.left, *(c.comparator for c in comp.comparisons)]
            toolkit = [o for o in sides if self._derives(o, helpers, tracked)]
            if not toolkit:
                continue
            others = [o for o in sides if all(o is not t for t in toolkit)]
            versions = any(
                _version_literal(o)
                or "version.cuda" in self.text(o)
                or self._derives(o, set(), torch_cuda)
                for o in others
            )
            if not versions and len(toolkit) < 2:
                continue  # compared with something that is not a version
            if self._cuda_only(comp) or self._inside(comp, helpers) or _calls_in(comp, helpers):
                continue  # a helper called in the test itself is reported at that call
            if self._after_vendor_test(comp):
                continue
            self.report(
                comp,
                "compares the CUDA toolkit version that nvcc reports: ROCm hosts have no nvcc, "
                "so this gate never describes the ROCm build; decide the ROCm side on "
                "IS_HIP_EXTENSION (and torch.version.hip for its version) first",
                severity=Severity.WARNING,
            )

    def _derives(self, node: cst.CSTNode, helpers: set[str], tracked: set[str]) -> bool:
        """`node` is a helper's result, a tracked name, or reads one of them through
        subscripts, attributes, calls (`int(...)`, `Version(...)`) and arithmetic."""
        if isinstance(node, cst.Name):
            return node.value in tracked
        if isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Name) and func.value in helpers:
                return True
            if isinstance(func, cst.Attribute) and self._derives(func.value, helpers, tracked):
                return True  # rel.split(".")
            return any(self._derives(a.value, helpers, tracked) for a in node.args)
        if isinstance(node, (cst.Subscript, cst.Attribute)):
            return self._derives(node.value, helpers, tracked)
        if isinstance(node, cst.BinaryOperation):
            return self._derives(node.left, helpers, tracked) or self._derives(
                node.right, helpers, tracked
            )
        return False

    def _after_vendor_test(self, node: cst.CSTNode) -> bool:
        """`not IS_HIP_EXTENSION and rel < Version("11.8")`: an earlier operand of an `and`
        names the ROCm side, so ROCm never evaluates the comparison."""
        child = node
        for parent in self.ancestors(node):
            if not isinstance(parent, (cst.BooleanOperation, cst.UnaryOperation)):
                return False
            if (
                isinstance(parent, cst.BooleanOperation)
                and isinstance(parent.operator, cst.And)
                and child is parent.right
                and names_vendor(self.text(parent.left))
            ):
                return True
            child = parent
        return False

    def _inside(self, node: cst.CSTNode, helpers: set[str]) -> bool:
        function = self._function(node)
        return function is not None and function.name.value in helpers


_TESTS = (
    cst.GreaterThan,
    cst.GreaterThanEqual,
    cst.LessThan,
    cst.LessThanEqual,
    cst.Equal,
    cst.NotEqual,
)


def _calls_in(node: cst.CSTNode, helpers: set[str]) -> bool:
    func = node.func if isinstance(node, cst.Call) else None
    if isinstance(func, cst.Name) and func.value in helpers:
        return True
    return any(_calls_in(c, helpers) for c in node.children)


def _names(node: cst.CSTNode) -> list[cst.Name]:
    if isinstance(node, cst.Name):
        return [node]
    if isinstance(node, (cst.Tuple, cst.List)):
        return [n for e in node.elements for n in _names(e.value)]
    return []


def _version_literal(node: cst.CSTNode) -> bool:
    """`11`, `11.8`, `"11.8"`, `(11, 8)`, `Version("11.8")`, `parse("11.8")`."""
    if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString)):
        return True
    if isinstance(node, cst.Tuple):
        return bool(node.elements) and all(
            isinstance(e.value, (cst.Integer, cst.Float)) for e in node.elements
        )
    if isinstance(node, cst.Call) and len(node.args) == 1:
        return isinstance(node.args[0].value, (cst.SimpleString, cst.Integer, cst.Float))
    return False


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
