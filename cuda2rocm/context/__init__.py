"""The context model: whether ROCm really compiles or runs the code a finding points at.

A finding in code that provably never reaches ROCm (the CUDA branch of a HIP guard, a component
the build compiles only for CUDA, a file of another accelerator) is kept, with
`Diagnostic.guarded` set to the reason, and left out of reports, fixes and the exit code; an
unknown condition keeps the finding. One module per language or input:

- `preprocessor`: C/C++/CUDA `#if` evaluated in three-valued logic for the HIP pass;
- `python_paths`: Python branches on `torch.version.hip/cuda` and names derived from them;
- `build`: which sources a project's setup.py / op builders / CMake compile for ROCm;
- `cmake_branches`: the tests before a CMake vendor chain's HIP branch (false on ROCm);
- `cmake_hipify`, `python_hipify`: paths a hipify step of the project's own build renames;
- `nvidia_options`: CMake options a ROCm build cannot turn on (their branch needs an
  NVIDIA-only package: cuVS, RAFT, cuDNN, TensorRT, ...; data/nvidia_only_packages.toml);
- `vendor_only`: NVIDIA-only by design (architecture-specific components, CUDA variants of
  scripts) or by decision (the `cuda-only` configuration key);
- `hip_listings`: folders a HIP CMake target compiles from elsewhere (ROCm's, whatever their name);
- `vendor_split`: the CUDA sibling of a folder or file pair named for each vendor, when the ROCm
  build compiles the twin instead;
- `standalone_cuda`: CMake sub-projects of their own for CUDA that nothing else builds;
- `cmake_unset`: project CMake variables only `set()` where a ROCm configure never goes;
- `hip_only`: files only a ROCm build compiles (the HIP side of the project's switch);
- `vendor_extras`: pyproject extras named for CUDA (`cu121`) beside extras named for ROCm;
- `text_sources`: C/C++ files the project's Python code reads as text (run-time compilers,
  generators): no compatibility header for them; `torch_floor`: the oldest torch the project
  requires (safe fixes that need a newer one become unsafe);
- `builder_wrappers`, `extension_calls`, `hipify_reach`: what torch's cpp_extension hipifies,
  through the project's own wrappers of its builders; `other_builds`: files a CMake or
  Cython build compiles (which do not hipify).
"""
