"""vendor-blas-dnn: cuDNN (no HIP counterpart) and cuBLAS (hipBLAS) calls and types.

torch's hipify maps cuBLAS to hipBLAS but only a handful of cuDNN symbols and not `cudnn.h`,
so cuDNN code is an error everywhere (MIOpen is ROCm's DNN library, with a different API).
cuBLAS is informational in sources torch builds and a port (to hipBLAS) elsewhere. One
finding per name and file. In Python build scripts (`PythonRule`): NVIDIA libraries named for
linking (`libraries=["cublas"]`, `-lcudnn`).
"""

from __future__ import annotations

import libcst as cst

from cuda2rocm.frontends import python as _py
from cuda2rocm.frontends.cpp import CppRule, hip_excluded
from cuda2rocm.frontends.python_build import under_vendor_test
from cuda2rocm.model import Severity

DNN = ("cudnn", "CUDNN_")
BLAS = ("cublas", "CUBLAS_")


class Rule(CppRule):
    def check(self) -> None:
        view = self.view
        for inc in view.includes:
            if inc.name in ("cudnn.h", "cudnn_frontend.h") and not hip_excluded(view, inc.node):
                self.report(
                    (inc.start, inc.end),
                    f"<{inc.name}> does not exist on ROCm and torch's hipify does not map it; "
                    "use ATen ops, or MIOpen (miopen/miopen.h) under USE_ROCM",
                )
        uses: dict[str, list] = {}
        for node in view.identifiers:
            name = view.text(node)
            if (
                node.type in ("identifier", "type_identifier")
                and name.startswith(DNN + BLAS)
                and not hip_excluded(view, node)
            ):
                uses.setdefault(name, []).append(node)
        for name, nodes in uses.items():
            times = f" ({len(nodes)} uses)" if len(nodes) > 1 else ""
            if name.startswith(DNN):
                self.report(
                    nodes[0],
                    f"cuDNN `{name}`{times} has no HIP counterpart; use ATen ops, or MIOpen "
                    "under USE_ROCM",
                    data={"cuda_name": name},
                )
            elif view.torch_built:
                self.report(
                    nodes[0],
                    f"cuBLAS `{name}`{times}: torch's ROCm build hipifies it to hipBLAS; prefer "
                    "at::cuda::getCurrentCUDABlasHandle() and check the library list in setup.py",
                    severity=Severity.INFO,
                    data={"cuda_name": name},
                )
            else:
                self.report(
                    nodes[0],
                    f"cuBLAS `{name}`{times} does not exist on ROCm; port it to hipBLAS "
                    "(hipblas*) and link hipblas on ROCm",
                    severity=Severity.WARNING,
                    data={"cuda_name": name},
                )


# -- Python build scripts ----------------------------------------------------------------------
# setup.py / build code naming NVIDIA libraries to link: `libraries=["cublas", "cudnn"]`,
# `extra_ldflags=["-lcublas"]`, `extra_link_args=[...]`. The library table is the rule's data.
_LINK_KEYWORDS = {"libraries": "", "extra_ldflags": "-l", "extra_link_args": "-l"}


class PythonRule(_py.NameAware):
    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is None or node.keyword.value not in _LINK_KEYWORDS:
            return
        if not isinstance(node.value, (cst.List, cst.Tuple)) or under_vendor_test(self, node):
            return
        prefix = _LINK_KEYWORDS[node.keyword.value]
        table: dict[str, str] = self.spec.tables.get("libraries", {})
        for element in node.value.elements:
            value = _py.string_value(element.value)
            if value is None or not value.startswith(prefix):
                continue
            library = value[len(prefix) :]
            if library in table:
                self.report(
                    element.value,
                    f"{value}: lib{library} does not exist on ROCm, so the ROCm link fails; "
                    f"{table[library]} (select the list on IS_HIP_EXTENSION)",
                )
