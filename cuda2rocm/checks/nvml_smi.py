"""nvml-smi: GPU monitoring through NVML or nvidia-smi, neither of which exists on AMD hosts.

Reports imports of NVML wrappers, `nvmlInit()` calls, and `nvidia-smi` run as a subprocess.
An import inside `try: ... except ImportError` is optional and not reported; neither is anything
inside a branch that tells ROCm from CUDA. A shell call whose result nobody reads
(`os.system("nvidia-smi")`) only prints "not found" on AMD hosts: info; so is `os.popen` output
that is only recorded or printed (empty on AMD hosts, no exception). No automatic fix: the
replacement (torch.cuda helpers or amd-smi) returns different data shapes.
"""

from __future__ import annotations

import re

import libcst as cst

from cuda2rocm.frontends.python import NameAware, dotted, string_value
from cuda2rocm.frontends.python_guards import HIP, VendorGuard
from cuda2rocm.frontends.python_shell import prints_only
from cuda2rocm.model import Severity

RUNNERS = {
    f"subprocess.{n}"
    for n in ("run", "call", "check_call", "check_output", "Popen", "getoutput", "getstatusoutput")
} | {"os.system", "os.popen"}
SMI = re.compile(r"(?:^|[\s/;&|(])nvidia-smi(?:\s|$|[;&|)])")
#: Exceptions that catch the FileNotFoundError of a missing executable.
MISSING = {
    "FileNotFoundError",
    "OSError",
    "IOError",
    "EnvironmentError",
    "Exception",
    "BaseException",
}
HELPERS = (
    "torch.cuda.memory_usage/utilization/temperature/power_draw/clock_rate/device_memory_used, "
    "which use pynvml on CUDA and amdsmi on ROCm"
)


class Rule(NameAware):
    #: findings and their reasons hold a token themselves: no name is followed to one
    FOLLOWS = False

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.modules = frozenset(self.spec.tables.get("modules", []))
        self._guard = VendorGuard(
            self, (HIP, "torch.version.cuda"), follow_names=True, early_exit=True
        )

    # -- imports ---------------------------------------------------------------------------
    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            self._import(node, dotted(alias.name))

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if not node.relative and node.module is not None:
            self._import(node, dotted(node.module))

    def _import(self, node: cst.CSTNode, module: str | None) -> None:
        if not module or module.split(".")[0] not in self.modules:
            return
        if self._optional(node) or self._guard.rocm_aware(node):
            return
        self.report(
            node,
            f"{module} talks to NVIDIA's NVML (or runs nvidia-smi), which does not exist on AMD "
            f"hosts; use {HELPERS}, or amdsmi / amd-smi on ROCm",
        )

    def _optional(self, node: cst.CSTNode) -> bool:
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, cst.Try):
                for handler in ancestor.handlers:
                    if handler.type is None or any(
                        e in self.text(handler.type) for e in ("ImportError", "ModuleNotFound")
                    ):
                        return True
        return False

    def _handles_missing(self, node: cst.CSTNode) -> bool:
        """`node` sits in the body of a `try` whose handler catches FileNotFoundError."""
        child = node
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, cst.Try) and child is ancestor.body:
                for handler in ancestor.handlers:
                    if handler.type is None or MISSING.intersection(
                        re.findall(r"\w+", self.text(handler.type))
                    ):
                        return True
            child = ancestor
        return False

    # -- calls -----------------------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        names = self.qualified_names(node.func)
        if any(
            n.endswith(".nvmlInit") and n.split(".")[0] in self.modules for n in names
        ) and not self._guard.rocm_aware(node):
            self.report(
                node,
                "nvmlInit() fails on AMD hosts (there is no NVML library); use " + HELPERS,
            )
            return
        if names & RUNNERS and node.args and node.args[0].keyword is None:
            command = _command_head(node.args[0].value)
            if command is None or self._guard.rocm_aware(node):
                return
            if self._handles_missing(node):
                self.report(
                    command,
                    "runs nvidia-smi inside a try that catches the missing executable: on AMD "
                    "hosts the handler's fallback runs; check that it is right there, or query "
                    "the GPU with " + HELPERS,
                    severity=Severity.INFO,
                )
            elif prints_only(self, node):
                self.report(
                    command,
                    "runs nvidia-smi through the shell and ignores the result: on AMD hosts the "
                    "shell prints 'nvidia-smi: not found' and the program continues; run amd-smi "
                    "there if the output matters",
                    severity=Severity.INFO,
                )
            elif self._popen_recorded(node, names):
                self.report(
                    command,
                    "records nvidia-smi's output (os.popen never raises for a missing program): "
                    "on AMD hosts the shell prints 'nvidia-smi: not found' to stderr and the "
                    "record is empty; record amd-smi's output there if it matters",
                    severity=Severity.INFO,
                )
            else:
                self.report(
                    command,
                    "nvidia-smi does not exist on AMD hosts; query the GPU with "
                    + HELPERS
                    + ", or run amd-smi on ROCm",
                )

    def _popen_recorded(self, call: cst.Call, names: set[str]) -> bool:
        """`os.popen("nvidia-smi")` (a shell pipe: a missing program gives empty output, no
        exception) whose lines are only stored or printed as they are: the call, possibly in
        `list(...)` / `.read()` / `.readlines()` / `.strip()`, is a dict value, a list or tuple
        element, or a `print` argument. Anything that parses or tests the text is not."""
        if "os.popen" not in names:
            return False
        node: cst.CSTNode = call
        while True:
            parent = self.parent(node)
            if isinstance(parent, cst.Attribute) and parent.attr.value in _READS:
                grand = self.parent(parent)
                if isinstance(grand, cst.Call) and grand.func is parent and not grand.args:
                    node = grand
                    continue
                return False
            if isinstance(parent, cst.Arg):
                holder = self.parent(parent)
                if isinstance(holder, cst.Call) and len(holder.args) == 1:
                    func = self.text(holder.func)
                    if func == "list":
                        node = holder
                        continue
                    return func == "print"
                return False
            if isinstance(parent, cst.DictElement):
                return parent.value is node
            return isinstance(parent, cst.Element)


#: Methods that read a pipe's text as it is.
_READS = frozenset({"read", "readlines", "strip", "rstrip", "splitlines"})


def _command_head(node: cst.CSTNode) -> cst.CSTNode | None:
    """The literal naming nvidia-smi: the first element of an argv list, or a shell string."""
    if isinstance(node, (cst.List, cst.Tuple)) and node.elements:
        first = node.elements[0].value
        value = string_value(first)
        if value is not None and (value == "nvidia-smi" or value.endswith("/nvidia-smi")):
            return first
        return None
    value = string_value(node)
    if value is not None and SMI.search(value):
        return node
    return None
