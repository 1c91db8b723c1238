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


class Rule(TextRule):
    def check(self) -> None:
        messages: dict[str, str] = self.spec.tables["messages"]
        commands = self.view.cmake_commands
        if any(self._hip_aware(c) for c in commands):
            return
        self._branches(commands, messages["branch"])
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
