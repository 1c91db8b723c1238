"""rocm-arch-env: TORCH_CUDA_ARCH_LIST set for an extension build, PYTORCH_ROCM_ARCH not.

Python (`os.environ[...] = ...`, `setdefault`, `putenv`, `env={...}`), shell (`export`,
prefix assignments) and Dockerfile (`ENV`, `ARG`) forms. A file that mentions
PYTORCH_ROCM_ARCH anywhere in code is taken to handle it.

No fix: when PYTORCH_ROCM_ARCH is unset, torch picks a sensible list itself (torch 2.13: the
visible GPUs' architectures; torch <= 2.6: the list torch was built with), and any list this
tool wrote would narrow every ROCm build to it. Which GPUs a project ships for is the
project's decision.
"""

from __future__ import annotations

import libcst as cst

from cuda2rocm.frontends import text
from cuda2rocm.frontends.python import NameAware
from cuda2rocm.frontends.python_env import env_write

CUDA_VAR = "TORCH_CUDA_ARCH_LIST"
ROCM_VAR = "PYTORCH_ROCM_ARCH"


def _message(spec) -> str:
    return (
        f"{CUDA_VAR} is ignored by ROCm builds, which read {ROCM_VAR}; without it torch 2.13 "
        "compiles for the GPUs visible at build time (in a `docker build` or on a GPU-less CI "
        "runner: none, so an empty `--offload-arch=`, which hipcc 5.2.3 compiles for its "
        "default gfx803 only); a local build on a GPU machine is right as it is; if this pins "
        f"architectures for a distributed build, pin the ROCm ones with {ROCM_VAR} as well"
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
        self.report(node, _message(self.spec))


class TextRule(text.TextRule):
    def check(self) -> None:
        view = self.view
        if view.assigned(ROCM_VAR):
            return
        for a in view.assignments:
            if a.name != CUDA_VAR:
                continue
            self.report(
                a.start,
                a.start + len(a.name),
                _message(self.spec),
            )
