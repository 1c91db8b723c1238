"""A header compiled only after its includers brought in the HIP runtime sees it
(context/runtime_provided.py), as does a file whose own project includes bring it in; one
included first, or by nobody, keeps its finding."""

from pathlib import Path

from cuda2rocm import runner
from cuda2rocm.catalogue import load_catalogue
from cuda2rocm.context.runtime_provided import runtime_first
from cuda2rocm.engine import Linter

HEADER = "#pragma once\n__device__ __forceinline__ float twice(float v) { return 2 * v; }\n"


def _runtime_findings(root: Path) -> list[str]:
    specs = [r for r in load_catalogue() if r.id == "hip-include"]
    result = runner.run(Linter(specs), [root])
    return sorted(
        Path(d.path).name
        for d in result.diagnostics
        if "runtime" in d.message and d.severity.value != "info"
    )


def test_header_included_after_a_torch_header_sees_the_runtime(tmp_path):
    """Not an action (a note that the include makes it self-contained; `fix` still adds it)."""
    (tmp_path / "api.h").write_text("#pragma once\n#include <ATen/ATen.h>\n")
    (tmp_path / "ops.cuh").write_text(HEADER)
    # Through a project header that includes ATen (whose c10 macros include hip_runtime.h).
    (tmp_path / "a.cu").write_text('#include "api.h"\n#include "ops.cuh"\n')
    (tmp_path / "b.cu").write_text('#include <hip/hip_runtime.h>\n#include "ops.cuh"\n')
    assert _runtime_findings(tmp_path) == []


def test_one_includer_without_the_runtime_first_keeps_the_finding(tmp_path):
    (tmp_path / "ops.cuh").write_text(HEADER)
    (tmp_path / "a.cu").write_text('#include "ops.cuh"\n#include <ATen/ATen.h>\n')
    (tmp_path / "b.cu").write_text('#include <hip/hip_runtime.h>\n#include "ops.cuh"\n')
    assert _runtime_findings(tmp_path) == ["ops.cuh"]


def test_fixpoint_through_headers_and_unknown_without_includers():
    texts = {
        "inner.cuh": HEADER,
        "outer.cuh": '#include "inner.cuh"\n',
        "k.cu": '#include <torch/extension.h>\n#include "outer.cuh"\n',
        "alone.cuh": HEADER,
    }

    def find(include: str, includer: str) -> str | None:
        return include if include in texts else None

    assert runtime_first(texts, find) == {"inner.cuh", "outer.cuh"}


KERNEL = "__global__ void scale(float* v) { v[threadIdx.x] *= 2; }\n"
VENDOR_SWITCH = (
    "#pragma once\n#if defined(__HIP_PLATFORM_AMD__)\n#include <hip/hip_runtime.h>\n"
    "#else\n#include <cuda_runtime.h>\n#endif\n"
)


def test_a_file_whose_own_project_includes_bring_the_runtime_compiles_as_is(tmp_path):
    """kernel.cu -> "lib/api.hpp" -> "platform.hpp" -> <hip/hip_runtime.h> under HIP."""
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "platform.hpp").write_text(VENDOR_SWITCH)
    (tmp_path / "lib" / "api.hpp").write_text('#pragma once\n#include "platform.hpp"\n')
    (tmp_path / "kernel.cu").write_text('#include "lib/api.hpp"\n' + KERNEL)
    assert _runtime_findings(tmp_path) == []


def test_a_chain_that_brings_the_runtime_only_to_cuda_keeps_the_finding(tmp_path):
    """`<cuda_runtime.h>` under `#ifndef __HIP_PLATFORM_AMD__`: nothing reaches hipcc."""
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "platform.hpp").write_text(
        "#pragma once\n#ifndef __HIP_PLATFORM_AMD__\n#include <cuda_runtime.h>\n#endif\n"
    )
    (tmp_path / "lib" / "api.hpp").write_text('#pragma once\n#include "platform.hpp"\n')
    (tmp_path / "kernel.cu").write_text('#include "lib/api.hpp"\n' + KERNEL)
    assert _runtime_findings(tmp_path) == ["kernel.cu"]


def test_a_file_including_only_unrelated_project_headers_keeps_the_finding(tmp_path):
    (tmp_path / "shapes.hpp").write_text("#pragma once\nstruct Box { int w, h; };\n")
    (tmp_path / "kernel.cu").write_text('#include "shapes.hpp"\n' + KERNEL)
    assert _runtime_findings(tmp_path) == ["kernel.cu"]
