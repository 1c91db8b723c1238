"""cmake-cuda-language: CMake builds that only know the CUDA language and toolkit.

Finds `project(... CUDA ...)`, `enable_language(CUDA)`, `find_package(CUDA|CUDAToolkit)`,
`CUDA::` imported targets, `CMAKE_CUDA_ARCHITECTURES`/`CUDA_ARCHITECTURES`, and `.cu` sources of
`add_library`/`add_executable`/`target_sources` — outside comments (`#`, `#[[ ]]`). A file that
already uses the HIP language or `find_package(hip)` is taken to have a ROCm path and is not
reported. Also the `if(WITH_CUDA)` / `if(USE_CUDA)` blocks whose body is CUDA-only (the CUDA
language, CUDA flags or targets, `.cu` sources, CCCL/CUTLASS include paths), once per block at
its condition: where the ROCm branch has to go. The messages are the rule's table.
"""

from __future__ import annotations

import itertools
import re

from cuda2rocm.frontends.text import TextRule

_TARGETS = {
    "add_library",
    "add_executable",
    "target_sources",
    "cuda_add_library",
    "cuda_add_executable",
}


#: Words of an `if(...)` that select a CUDA build (options and CMake's CUDA results).
_CUDA_OPTION = re.compile(r"^((\w+_)?CUDA|CUDA_FOUND|CUDAToolkit_FOUND|CMAKE_CUDA_COMPILER)$")
#: Path parts of NVIDIA-only header libraries (CCCL: cub/thrust/libcu++, CUTLASS, cuCollections).
_NVIDIA_PATH = re.compile(r"(^|/)(cccl|cub|thrust|libcudacxx|cutlass|cuCollections)(/|$)", re.I)


#: Variables holding nvcc's flags (CMake's CUDA language, FindCUDA).
_FLAG_VARIABLE = re.compile(r"^(CMAKE_CUDA_FLAGS(_\w+)?|CUDA_NVCC_FLAGS(_\w+)?)$")
#: `$<$<COMPILE_LANGUAGE:CUDA>:...>`, `$<COMPILE_LANG_AND_ID:CUDA,NVIDIA>`.
_CUDA_GENEX = re.compile(r"\$<(\$<)?COMPILE_LANG(UAGE|_AND_ID):CUDA\b")
#: Results of find_package(CUDA) / find_package(CUDAToolkit) used as libraries or paths.
_TOOLKIT_VARIABLE = re.compile(
    r"\$\{(CUDA_(\w*LIBRAR\w*|INCLUDE_DIRS|TOOLKIT_ROOT_DIR)|CUDAToolkit_\w*(DIR|LIBRAR)\w*)\}"
)
#: The version of the CUDA toolkit or compiler, as CMake reports it.
_TOOLKIT_VERSION = re.compile(
    r"^(CUDAToolkit_VERSION(_MAJOR|_MINOR)?|CMAKE_CUDA_COMPILER_VERSION|CUDA_VERSION(_MAJOR|_MINOR|_STRING)?)$"
)
_VERSION_OPERATORS = frozenset(
    {"VERSION_LESS", "VERSION_GREATER", "VERSION_EQUAL", "VERSION_LESS_EQUAL",
     "VERSION_GREATER_EQUAL", "LESS", "GREATER", "EQUAL", "LESS_EQUAL", "GREATER_EQUAL"}
)  # fmt: skip
_USES = frozenset(
    {"target_link_libraries", "link_libraries", "target_include_directories",
     "include_directories", "link_directories", "target_link_directories"}
)  # fmt: skip


def _flag_variable(command: str, values: list[str]) -> str | None:
    """The nvcc flag variable a `set`/`string(APPEND|PREPEND)`/`list(APPEND)` writes."""
    if command == "set" and values:
        target = values[0]
    elif (
        command in ("string", "list")
        and len(values) > 1
        and values[0]
        in (
            "APPEND",
            "PREPEND",
            "INSERT",
        )
    ):
        target = values[1]
    else:
        return None
    return target if _FLAG_VARIABLE.match(target) else None


def _language_cuda(values: list[str]) -> bool:
    """`PROPERTIES LANGUAGE CUDA` / `PROPERTY LANGUAGE CUDA`."""
    return any(a == "LANGUAGE" and b == "CUDA" for a, b in itertools.pairwise(values))


class Rule(TextRule):
    def check(self) -> None:
        self._opened: list[int] = []
        messages: dict[str, str] = self.spec.tables["messages"]
        commands = self.view.cmake_commands
        if any(self._hip_aware(c) for c in commands):
            return
        self._branches(commands, messages["branch"])
        self._settings(commands, messages)
        for cmd in commands:
            values = [w.value for w in cmd.args]
            if cmd.name == "project":
                for w in cmd.args[1:]:
                    if w.value == "CUDA":
                        self.report(w.start, w.end, messages["language"])
            elif cmd.name == "enable_language" and "CUDA" in values:
                w = cmd.args[values.index("CUDA")]
                self.report(w.start, w.end, messages["language"])
            elif cmd.name == "find_package" and values and values[0] in ("CUDA", "CUDAToolkit"):
                w = cmd.args[0]
                self.report(
                    w.start, w.end, f"find_package({values[0]}): {messages['find_package']}"
                )
            elif cmd.name in _TARGETS:
                cu = [w for w in cmd.args if w.value.endswith(".cu")]
                if cu:
                    extra = f" (and {len(cu) - 1} more)" if len(cu) > 1 else ""
                    self.report(
                        cu[0].start, cu[0].end, f"{cu[0].value}{extra}: {messages['sources']}"
                    )
            for w in cmd.args:
                if w.value.startswith("CUDA::"):
                    self.report(w.start, w.end, f"{w.value}: {messages['target']}")
                elif w.value in ("CMAKE_CUDA_ARCHITECTURES", "CUDA_ARCHITECTURES") and cmd.name in (
                    "set",
                    "set_property",
                    "set_target_properties",
                ):
                    self.report(w.start, w.end, f"{w.value}: {messages['architectures']}")

    def _settings(self, commands, messages: dict[str, str]) -> None:
        """CUDA compiler settings the configure applies outside any CUDA-option block: nvcc
        flag variables being set, CUDA-language generator expressions, sources marked
        LANGUAGE CUDA, FindCUDA/CUDAToolkit variables linked or included, and tests of the
        CUDA toolkit's version. (Inside an `if(WITH_CUDA)` block the block is the finding.)"""
        depth = 0
        for cmd in commands:
            if cmd.name == "if":
                depth += any(_CUDA_OPTION.match(w.value) for w in cmd.args)
                self._stack_push(cmd)
                if depth == 0:
                    self._version_test(cmd, messages["version"])
                continue
            if cmd.name == "elseif" and depth == 0:
                self._version_test(cmd, messages["version"])
            if cmd.name == "endif":
                depth -= self._stack_pop()
                continue
            if depth:
                continue
            values = [w.value for w in cmd.args]
            flag = _flag_variable(cmd.name, values)
            if flag is not None:
                w = cmd.args[values.index(flag)]
                self.report(w.start, w.end, f"{flag}: {messages['flags']}")
                continue
            genex = next((w for w in cmd.args if _CUDA_GENEX.search(w.value)), None)
            if genex is not None:
                self.report(genex.start, genex.end, messages["genex"])
                continue
            if cmd.name in ("set_source_files_properties", "set_property") and _language_cuda(
                values
            ):
                w = cmd.args[len(values) - 1 - values[::-1].index("CUDA")]
                self.report(w.start, w.end, f"LANGUAGE CUDA: {messages['sources']}")
                continue
            if cmd.name in _USES:
                var = next((w for w in cmd.args if _TOOLKIT_VARIABLE.search(w.value)), None)
                if var is not None:
                    self.report(var.start, var.end, f"{var.value}: {messages['target']}")

    def _stack_push(self, cmd) -> None:
        self._opened.append(int(any(_CUDA_OPTION.match(w.value) for w in cmd.args)))

    def _stack_pop(self) -> int:
        return self._opened.pop() if self._opened else 0

    def _version_test(self, cmd, message: str) -> None:
        """`if(CUDAToolkit_VERSION VERSION_GREATER_EQUAL 12.0)`: the toolkit's version."""
        values = [w.value for w in cmd.args]
        for i, value in enumerate(values):
            name = value[2:-1] if value.startswith("${") and value.endswith("}") else value
            if not _TOOLKIT_VERSION.match(name):
                continue
            near = values[max(i - 1, 0) : i + 2]
            if any(v in _VERSION_OPERATORS for v in near):
                w = cmd.args[i]
                self.report(w.start, w.end, f"{name}: {message}")
                return

    def _branches(self, commands, message: str) -> None:
        """`if(WITH_CUDA)` blocks whose body is CUDA-only: where the ROCm branch goes."""
        # [if command, still a candidate, body is CUDA-only, has an else/elseif]
        stack: list[list] = []
        for cmd in commands:
            if cmd.name == "if":
                cuda = any(_CUDA_OPTION.match(w.value) for w in cmd.args)
                stack.append([cmd, cuda and not any(w.value == "NOT" for w in cmd.args), False])
            elif cmd.name in ("elseif", "else"):
                if stack:
                    stack[-1][1] = False  # an alternative branch exists: ROCm may be there
            elif cmd.name == "endif":
                if stack:
                    branch, candidate, cuda_body = stack.pop()
                    if candidate and cuda_body:
                        words = [w for w in branch.args if _CUDA_OPTION.match(w.value)]
                        self.report(
                            words[0].start, words[-1].end, f"if({words[0].value}): {message}"
                        )
            elif stack and stack[-1][1] and self._cuda_body(cmd):
                stack[-1][2] = True

    @staticmethod
    def _cuda_body(cmd) -> bool:
        values = [w.value for w in cmd.args]
        if cmd.name == "enable_language" and "CUDA" in values:
            return True
        if cmd.name == "find_package" and values and values[0] in ("CUDA", "CUDAToolkit"):
            return True
        for value in values:
            if value.startswith(("CMAKE_CUDA_", "CUDA::", "CUDA_NVCC_FLAGS")):
                return True
            if value.endswith(".cu") or _NVIDIA_PATH.search(value):
                return True
        return False

    @staticmethod
    def _hip_aware(cmd) -> bool:
        values = [w.value for w in cmd.args]
        if (
            cmd.name in ("project", "enable_language")
            and "HIP" in values[(cmd.name == "project") :]
        ):
            return True
        if cmd.name == "find_package" and values and values[0] in ("hip", "HIP"):
            return True
        return any(v in ("CMAKE_HIP_ARCHITECTURES", "HIP_ARCHITECTURES") for v in values)
