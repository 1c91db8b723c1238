"""nvcc-flags at the sites where flag lists are assembled: the fixed build script is run with a
stand-in torch (IS_HIP_EXTENSION False, then True) and the flags CUDAExtension receives are
compared: the CUDA list is unchanged, the ROCm list holds no nvcc-only flag."""

from __future__ import annotations

import sys
import types

from cuda2rocm.catalogue import find_rule
from cuda2rocm.engine import Linter
from cuda2rocm.fixer import fix_source
from cuda2rocm.sources import SourceFile

SCRIPT = """\
import sys
from torch.utils.cpp_extension import CUDAExtension


def gpu_flags():
    flags = ["-O3"]
    flags += ["--expt-relaxed-constexpr", "-DNDEBUG"]
    flags.extend(["--use_fast_math", "-Xptxas", "-v", "-lineinfo"])
    if sys.platform == "darwin":
        flags += ["-arch", "arm64"]
    return flags


nvcc_flags = gpu_flags()
nvcc_flags += ["--threads", "4", "-gencode", "arch=compute_80,code=sm_80"]
args = {"cxx": ["-O3"]}
args["nvcc"] = nvcc_flags
ext = CUDAExtension("ops", ["ops.cu"], extra_compile_args=args)
"""
NVCC_ONLY = ("--expt", "--use_fast_math", "-Xptxas", "-lineinfo", "--threads", "-gencode")


def _run(code: str, hip: bool) -> list[str]:
    seen: dict = {}
    extension = types.ModuleType("torch.utils.cpp_extension")
    extension.IS_HIP_EXTENSION = hip
    extension.CUDAExtension = lambda *a, **kw: seen.update(kw)
    saved = {k: sys.modules.get(k) for k in ("torch", "torch.utils", "torch.utils.cpp_extension")}
    sys.modules.update(
        {
            "torch": types.ModuleType("torch"),
            "torch.utils": types.ModuleType("torch.utils"),
            "torch.utils.cpp_extension": extension,
        }
    )
    try:
        exec(compile(code, "setup.py", "exec"), {"__name__": "setup"})
    finally:
        for key, module in saved.items():
            if module is None:
                sys.modules.pop(key, None)
            else:
                sys.modules[key] = module
    return list(seen["extra_compile_args"]["nvcc"])


def _fixed() -> tuple[str, int]:
    linter = Linter([find_rule("nvcc-flags")])
    source = SourceFile("setup.py", "python", SCRIPT)
    found = linter.lint_source(source)
    return fix_source(source, linter.lint_source).fixed, len(found)


def test_every_site_with_nvcc_only_flags_is_reported():
    _, count = _fixed()
    assert count == 3  # +=, extend and the second += (the -arch arm64 list is macOS's)


def test_fixed_sites_keep_cuda_flags_and_give_hipcc_clean_flags():
    fixed, _ = _fixed()
    assert fixed != SCRIPT
    assert _run(fixed, hip=False) == _run(SCRIPT, hip=False)
    rocm = _run(fixed, hip=True)
    assert not [f for f in rocm if f.startswith(NVCC_ONLY) or f.startswith("arch=")], rocm
    assert rocm[:1] == ["-O3"] and "-DNDEBUG" in rocm and "-ffast-math" not in rocm


def test_fix_is_idempotent():
    fixed, _ = _fixed()
    linter = Linter([find_rule("nvcc-flags")])
    assert not linter.lint_source(SourceFile("setup.py", "python", fixed))


def _severities(code: str) -> list[str]:
    linter = Linter([find_rule("nvcc-flags")])
    found = linter.lint_source(SourceFile("setup.py", "python", code))
    return [d.severity.value for d in found]


HEAD = "from torch.utils.cpp_extension import CUDAExtension\n"


def test_flags_hipcc_only_ignores_are_a_note():
    call = 'CUDAExtension("k", ["k.cu"], extra_compile_args={{"nvcc": {}}})\n'
    assert _severities(HEAD + call.format('["-O2", "-lineinfo", "-arch=sm_86"]')) == ["info"]
    assert _severities(HEAD + call.format('["-Xptxas=-v", "-expt-extended-lambda"]')) == ["info"]
    # a separate -Xptxas value reaches clang as its own flag; -Werror makes the warning fatal
    assert _severities(HEAD + call.format('["-Xptxas", "-v"]')) == ["error"]
    assert _severities(HEAD + call.format('["-lineinfo", "-Werror"]')) == ["error"]
    assert _severities(HEAD + call.format('["-lineinfo", "--use_fast_math"]')) == ["error"]
    assemble = (
        HEAD + 'nvcc_flags = ["-O3"]\nnvcc_flags += ["-lineinfo"]\nnvcc_flags += ["-t", "8"]\n'
    )
    assert _severities(assemble) == ["info", "error"]
