"""Vendor-split pairs no build compiles: a code generator's per-vendor template trees
(context.vendor_split, the run-time case)."""

from __future__ import annotations

from tests.conftest import lint_json, write_tree

TEMPLATES = {
    "codegen/targets/nvidia/kernels/reduce.cuh": (
        "#pragma once\n#include <cuda_runtime.h>\n"
        "__global__ void row_max(const float* x, float* y) {\n"
        "  float v = x[threadIdx.x];\n"
        "  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, o));\n"
        "  y[threadIdx.x] = v;\n}\n"
        "inline void go(const float* x, float* y, cudaStream_t s) {\n"
        "  row_max<<<1, 64, 0, s>>>(x, y);\n}\n"
    ),
    "codegen/targets/amd/kernels/reduce.hpp": (
        "#pragma once\n#include <hip/hip_runtime.h>\n"
        "void go(const float* x, float* y, hipStream_t s);\n"
    ),
    "codegen/targets/nvidia/render.py": 'NAME = "kernels/reduce.cuh"\n',
    "codegen/targets/amd/render.py": 'NAME = "kernels/reduce.hpp"\n',
}


def test_templates_no_build_compiles_are_the_cuda_side_of_a_run_time_choice(tmp_path):
    write_tree(tmp_path, TEMPLATES)
    found = lint_json(tmp_path)
    cuda = [d for d in found if "/nvidia/kernels/" in d["path"]]
    assert cuda and all("guarded" in d for d in cuda)
    assert any("picks one per vendor when it runs" in d["guarded"] for d in cuda)
    notes = [d for d in found if d["rule"] == "cuda-only-component" and "guarded" not in d]
    assert len(notes) == 1 and "`amd/`" in notes[0]["message"]


def test_a_build_that_compiles_the_cuda_side_keeps_it_reported(tmp_path):
    write_tree(tmp_path, TEMPLATES)
    write_tree(
        tmp_path,
        {
            "codegen/targets/nvidia/kernels/unit.cu": '#include "reduce.cuh"\n',
            "setup.py": (
                "from setuptools import setup\n"
                "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
                'setup(name="g", ext_modules=[CUDAExtension("g._C", '
                '["codegen/targets/nvidia/kernels/unit.cu"])], '
                'cmdclass={"build_ext": BuildExtension})\n'
            ),
        },
    )
    cuda = [d for d in lint_json(tmp_path) if d["path"].endswith("nvidia/kernels/reduce.cuh")]
    assert cuda and not any("guarded" in d for d in cuda)
