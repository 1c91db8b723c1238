"""Code that needs CUTLASS / CuTe is one porting decision (context/library_users.py): the
library include at the top of the include graph is reported, the rest follow it, guarded."""

from pathlib import Path

from cuda2rocm import runner
from cuda2rocm.catalogue import load_catalogue
from cuda2rocm.context.library_users import users
from cuda2rocm.context.runtime_provided import include_lines
from cuda2rocm.engine import Linter

STAGE = (
    "#pragma once\n#include <cutlass/numeric_types.h>\n#include <cuda_fp16.h>\n"
    "inline void drain(cudaStream_t s) { cudaStreamSynchronize(s); }\n"
)
FUSED = (
    '#pragma once\n#include "stage.cuh"\n#include <cute/layout.hpp>\n'
    "__device__ int lane() { return threadIdx.x % 32; }\n"
)
LAUNCH = '#include "fused.cuh"\nvoid launch(cudaStream_t s) { cudaStreamSynchronize(s); }\n'
PLAIN = "#include <cuda_runtime.h>\nvoid copy(cudaStream_t s) { cudaStreamSynchronize(s); }\n"


def _lint(root: Path):
    result = runner.run(Linter(load_catalogue()), [root])
    shown = sorted((Path(d.path).name, d.position.line, d.rule) for d in result.diagnostics)
    guarded = {(Path(d.path).name, d.position.line, d.rule): d.guarded for d in result.guarded}
    return shown, guarded


def _tree(root: Path, **files: str) -> Path:
    for name, text in files.items():
        (root / name.replace("_", ".", 1)).write_text(text)
    return root


def test_one_finding_at_the_top_library_include_the_rest_follow_it(tmp_path):
    _tree(tmp_path, stage_cuh=STAGE, fused_cuh=FUSED, launch_cu=LAUNCH, plain_cu=PLAIN)
    shown, guarded = _lint(tmp_path)
    assert [s for s in shown if s[0] != "plain.cu"] == [("fused.cuh", 3, "hip-include")]
    # A file that needs no library keeps its findings.
    assert ("plain.cu", 2, "hip-stream") in shown
    # The header below the top and the kernel file above it follow the decision.
    assert "reported at <cute/layout.hpp> in" in guarded[("stage.cuh", 2, "hip-include")]
    assert "needs CuTe" in guarded[("launch.cu", 2, "hip-stream")]
    assert "needs CuTe" in guarded[("fused.cuh", 4, "warp-size-32")]


def test_a_library_include_every_hip_pass_skips_is_no_decision(tmp_path):
    """`#ifndef __HIP_PLATFORM_AMD__` around the include: the file already keeps the library
    out of ROCm, so its other lines are ordinary port work."""
    _tree(
        tmp_path,
        gemm_cuh=(
            "#pragma once\n#ifndef __HIP_PLATFORM_AMD__\n#include <cutlass/gemm/gemm.h>\n"
            "#endif\n#include <cuda_runtime.h>\n"
            "inline void wait(cudaStream_t s) { cudaStreamSynchronize(s); }\n"
        ),
    )
    shown, guarded = _lint(tmp_path)
    assert ("gemm.cuh", 6, "hip-stream") in shown
    assert not any("needs CUTLASS" in why for why in guarded.values())


def test_two_independent_tops_each_keep_one_finding(tmp_path):
    _tree(
        tmp_path,
        a_cuh="#pragma once\n#include <cutlass/array.h>\n#include <cutlass/fast_math.h>\n",
        b_cuh="#pragma once\n#include <cute/tensor.hpp>\n",
    )
    shown, guarded = _lint(tmp_path)
    assert [s for s in shown if s[2] == "hip-include"] == [
        ("a.cuh", 2, "hip-include"),
        ("b.cuh", 2, "hip-include"),
    ]
    assert "reported at that include" in guarded[("a.cuh", 3, "hip-include")]


def test_users_over_a_cycle_and_an_unrelated_file():
    texts = {
        "x.h": '#include "y.h"\n#include <cutlass/cutlass.h>\n',
        "y.h": '#include "x.h"\n',
        "z.h": "#include <vector>\n",
    }

    def find(include: str, includer: str) -> str | None:
        return include if include in texts else None

    why, kept = users(texts, find, lambda p, t: include_lines(t), lambda p, line: None)
    assert kept == {"x.h": 2}
    assert set(why) == {"x.h", "y.h"}
