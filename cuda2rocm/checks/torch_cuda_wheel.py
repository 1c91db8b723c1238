"""torch-cuda-wheel: CUDA builds of torch pinned by local version (`+cu121`) or index URL.

Reads requirement files, `pyproject.toml` dependency lists and `pip install` lines in shell
scripts and Dockerfiles. In Python, string literals naming a CUDA-tagged artefact
(`PythonRule`). No rewrite: the ROCm install belongs in its own requirements file or build
stage, next to the CUDA one, not in place of it.
"""

from __future__ import annotations

import re

import libcst as cst

from cuda2rocm.frontends import python as _py
from cuda2rocm.frontends.text import TextRule
from cuda2rocm.model import Severity


class Rule(TextRule):
    def check(self) -> None:
        tables = self.spec.tables
        packages = set(tables.get("packages", []))
        local = re.compile(tables["local_version"])
        index = re.compile(tables["index_url"])
        for req in self.view.requirements():
            m = local.search(req.spec)
            if req.key in packages and m:
                self.report(
                    req.start,
                    req.end,
                    f"{req.name}{req.spec} is a CUDA build ({m.group(0)}): on an AMD GPU "
                    "torch.cuda.is_available() is False; install the +rocm build from "
                    "https://download.pytorch.org/whl/rocmX.Y in a separate ROCm requirements "
                    "file or image",
                )
        for opt in self.view.index_options():
            m = index.search(opt.url)
            if m:
                self.report(
                    opt.start,
                    opt.end,
                    f"{opt.option} {opt.url} serves CUDA builds of torch ({m.group(1)}); the ROCm "
                    "builds are on https://download.pytorch.org/whl/rocmX.Y — use that URL with "
                    "--index-url (not --extra-index-url, which lets pip pick a PyPI build) in a "
                    "separate ROCm requirements file or image",
                )


# -- Python ------------------------------------------------------------------------------------
#: A shared library named for a CUDA build (`libsolver_cuda121.so`, `libsolver_cuda*.so`,
#: `libtorch_cuda.so`): a ROCm build ships another name (torch's own is libtorch_hip.so), so
#: loading or globbing this one finds nothing there.
_CUDA_LIBRARY = re.compile(
    r"(?:^|[/\\])lib[\w.-]*?[_-]cuda[\w*.-]*?\.(?:so|dll|dylib)(?:[.*\d]*)$", re.I
)


class PythonRule(_py.NameAware):
    """String literals in Python that name a CUDA-tagged artefact: a `+cu121` torch build, a
    `download.pytorch.org/whl/cu121` index, a `lib*_cuda*.so` library."""

    FOLLOWS = False

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        value = _py.string_value(node)
        if value is None or len(value) > 300 or self._rocm_branch(node):
            return
        tables = self.spec.tables
        if (m := re.search(tables["index_url"], value)) is not None:
            self.report(
                node,
                f"{value!r} is the index of CUDA builds of torch ({m.group(1)}); ROCm builds are "
                "on https://download.pytorch.org/whl/rocmX.Y: select the index on "
                "torch.version.hip (or a ROCm option)",
                severity=Severity.WARNING,
            )
        elif re.search(
            r"(?:torch|vision|audio)[^\s]*" + tables["local_version"], value
        ) or re.match(r"^\+cu\d+$", value):
            self.report(
                node,
                f"{value!r} names a CUDA build of torch: on ROCm the local version is +rocmX.Y; "
                "select it on torch.version.hip",
                severity=Severity.WARNING,
            )
        elif _CUDA_LIBRARY.search(value):
            self.report(
                node,
                f"{value!r} names a library built for CUDA: a ROCm build does not have it "
                "(torch's own is libtorch_hip.so there); choose the name on torch.version.hip",
                severity=Severity.WARNING,
            )

    def _rocm_branch(self, node: cst.CSTNode) -> bool:
        """Inside a branch of a test that names ROCm (`if torch.version.hip:` ... `else:`):
        the project chose per vendor already."""
        parent = self.parent(node)
        while parent is not None:
            if isinstance(parent, cst.If) and re.search(
                r"\b(hip|rocm|HIP|ROCM)", self.text(parent.test)
            ):
                return True
            parent = self.parent(parent)
        return False
