"""Builds the optional fused CUDA kernels (tinyseg_ops); metadata lives in pyproject.toml."""
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CUDA_HOME

ext_modules = []
if CUDA_HOME is not None:
    ext_modules.append(
        CUDAExtension(
            name="tinyseg_ops",
            sources=["csrc/fused_ops.cpp", "csrc/fused_ops_kernel.cu"],
            libraries=["cublas"],
            extra_compile_args={
                "cxx": ["-O3"],
                "nvcc": [
                    "-O3",
                    "--use_fast_math",
                    "-gencode=arch=compute_80,code=sm_80",
                    "--expt-relaxed-constexpr",
                    "-lineinfo",
                ],
            },
        )
    )
else:
    print("CUDA_HOME not set: installing tinyseg without the fused kernels (slower fallback)")

setup(
    py_modules=["data", "distributed", "evaluate", "model", "ops", "train"],
    ext_modules=ext_modules,
    cmdclass={"build_ext": BuildExtension},
)
