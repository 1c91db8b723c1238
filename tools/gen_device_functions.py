"""Generate cuda2rocm/data/device_functions.tsv: CUDA's device intrinsics and which HIP releases
declare them.

The CUDA side is read from the definitions, not from a list of spellings: every function the
CUDA toolkit's device-intrinsic headers declare with their declaration macros
(`__DEVICE_FUNCTIONS_DECL__`, `__SM_XX_INTRINSICS_DECL__`, `__DEVICE_ATOMIC_FUNCTIONS_DECL__`,
... in crt/device_functions.h, sm_20 ... sm_61 intrinsics, crt/sm_70 ... sm_100 _rt.h and the
atomic-function headers). The HIP side is proven by the compiler: one `using ::NAME;` per name
(a using-declaration accepts functions, overload sets and templates and fails only for an
undeclared name), compiled
- for HIP 5.2 with the installed hipcc (`#include <hip/hip_runtime.h>`, gfx90a);
- for ROCm 6.4, 7.0, 7.1, 7.2 with clang `-x hip -nogpuinc -include hiprtc_runtime.h` (the
  flattened device headers of PyPI rocm-llvm-python, tools/fetch_rocm_headers.sh);
and, for names absent in 5.2 and present in 6.4, the first ROCm/clr tag (rocm-5.6.0 ...
rocm-6.2.2) whose hipamd/include/hip/amd_detail headers name the function.

Columns: cuda_name, cuda_header, then one column per release (`yes`/`no`), and `since` (first
release that declares it, `-` when none through 7.2).

Usage: python tools/gen_device_functions.py [CUDA_INCLUDE] [ROCM_HEADERS]
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "cuda2rocm" / "data" / "device_functions.tsv"
HEADERS = (
    "crt/device_functions.h",
    "crt/device_double_functions.h",
    "sm_20_intrinsics.h",
    "sm_30_intrinsics.h",
    "sm_32_intrinsics.h",
    "sm_35_intrinsics.h",
    "sm_61_intrinsics.h",
    "crt/sm_70_rt.h",
    "crt/sm_80_rt.h",
    "crt/sm_90_rt.h",
    "crt/sm_100_rt.h",
    "device_atomic_functions.h",
    "sm_20_atomic_functions.h",
    "sm_32_atomic_functions.h",
    "sm_35_atomic_functions.h",
    "sm_60_atomic_functions.h",
)
FLATTENED = ("6.4", "7.0", "7.1", "7.2")
CLR_TAGS = ("rocm-5.6.0", "rocm-5.7.0", "rocm-6.0.0", "rocm-6.1.0", "rocm-6.2.0")
#: a declaration: a declaration macro, then return type words, then the name and `(`.
_DECL = re.compile(r"(?:\b__\w*DECL__|\b__device__)\b[^;{()#]*?\b([A-Za-z_]\w*)\s*\(")
#: what the macro argument scan picks up that is no function
_NOT_NAMES = {"defined", "if", "compiler", "_U", "__DEPRECATED__", "__NV_ATOMIC_RET_TYPE"}


def cuda_functions(include: Path) -> dict[str, str]:
    """name -> the CUDA header that declares it."""
    found: dict[str, str] = {}
    for rel in HEADERS:
        text = (include / rel).read_text(encoding="utf-8", errors="replace")
        text = re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)
        for m in _DECL.finditer(text):
            name = m[1]
            if name in _NOT_NAMES or name.endswith("_impl") or name.startswith("__cuda"):
                continue
            found.setdefault(name, rel)
    return found


def _missing(names: list[str], cmd: list[str], prelude: str) -> set[str]:
    """Names whose `using ::NAME;` line the compiler rejects."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "names.hip"
        lines = [prelude, *(f"namespace n{i} {{ using ::{n}; }}" for i, n in enumerate(names))]
        src.write_text("\n".join(lines) + "\n")
        done = subprocess.run([*cmd, str(src)], capture_output=True, text=True, timeout=600)
        bad = {
            int(m[1])
            for m in re.finditer(rf"^{re.escape(str(src))}:(\d+):\d+: error:", done.stderr, re.M)
        }
    offset = prelude.count("\n") + 2
    return {n for i, n in enumerate(names) if i + offset in bad}


def hip52(names: list[str]) -> set[str]:
    env_cmd = ["env", "HIP_PLATFORM=amd", shutil.which("hipcc") or "hipcc"]
    cmd = [*env_cmd, "--offload-arch=gfx90a", "-fsyntax-only", "-ferror-limit=0", "-x", "hip"]
    return _missing(names, cmd, "#include <hip/hip_runtime.h>")


def flattened(names: list[str], header: Path) -> set[str]:
    clang = next(c for c in ("clang", "clang-18", "clang-17", "clang-15") if shutil.which(c))
    cmd = [clang, "-x", "hip", "-nogpulib", "-nogpuinc", "--offload-arch=gfx90a"]
    cmd += ["-fsyntax-only", "-ferror-limit=0", "-D__HIPCC_RTC__", "-include", str(header)]
    return _missing(names, cmd, "")


def clr_since(name: str, clr: Path) -> str | None:
    """The first ROCm/clr tag whose device headers name `name` (a word match)."""
    for tag in CLR_TAGS:
        done = subprocess.run(
            ["git", "-C", str(clr), "grep", "-l", "-w", name, tag, "--", "hipamd/include/hip"],
            capture_output=True,
            text=True,
        )
        if done.stdout.strip():
            return tag.removeprefix("rocm-").rsplit(".", 1)[0]
    return None


def main(argv: list[str]) -> None:
    include = Path(argv[1] if len(argv) > 1 else "/usr/local/cuda/include")
    rocm = Path(argv[2] if len(argv) > 2 else os.environ.get("CUDA2ROCM_ROCM_HEADERS", ""))
    functions = cuda_functions(include)
    names = sorted(functions)
    absent = {"5.2": hip52(names)}
    for release in FLATTENED:
        absent[release] = flattened(names, rocm / f"rocm-{release}" / "hiprtc_runtime.h")
    releases = ["5.2", *FLATTENED]
    rows = ["cuda_name\tcuda_header\t" + "\t".join(f"rocm_{r}" for r in releases) + "\tsince"]
    for name in names:
        have = ["no" if name in absent[r] else "yes" for r in releases]
        since = next((r for r, h in zip(releases, have, strict=True) if h == "yes"), "-")
        if since == "6.4":
            since = clr_since(name, rocm / "clr") or since
        rows.append("\t".join([name, functions[name], *have, since]))
    header = "# generated by tools/gen_device_functions.py (CUDA 13.0 headers; hipcc 5.2.3; "
    header += "rocm-llvm-python 6.4/7.0/7.1/7.2 hiprtc_runtime.h; ROCm/clr tags); do not edit\n"
    TARGET.write_text(header + "\n".join(rows) + "\n", encoding="utf-8")
    print(f"{len(names)} names, {sum(1 for r in rows[1:] if r.endswith('-'))} absent in 7.2")


if __name__ == "__main__":
    main(sys.argv)
