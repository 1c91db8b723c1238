"""cmake-cuda-language: CMake builds that only know the CUDA language and toolkit.

Finds `project(... CUDA ...)`, `enable_language(CUDA)`, `find_package(CUDA|CUDAToolkit)`,
`CUDA::` imported targets, `CMAKE_CUDA_ARCHITECTURES`/`CUDA_ARCHITECTURES`, and `.cu` sources of
`add_library`/`add_executable`/`target_sources` — outside comments (`#`, `#[[ ]]`). A file that
already uses the HIP language or `find_package(hip)` is taken to have a ROCm path and is not
reported. The messages are the rule's table.
"""

from __future__ import annotations

from cuda2rocm.frontends.text import TextRule

_TARGETS = {
    "add_library",
    "add_executable",
    "target_sources",
    "cuda_add_library",
    "cuda_add_executable",
}


class Rule(TextRule):
    def check(self) -> None:
        messages: dict[str, str] = self.spec.tables["messages"]
        commands = self.view.cmake_commands
        if any(self._hip_aware(c) for c in commands):
            return
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
