"""Count the noise/wrong classes of the second precision review over a whole lint output.

    python bench/reviews/precision_classes.py /tmp/prec2/*.json --trees /work/real

The classes are the ones written up in bench/reviews/precision.md ("Second review"): each reported
error/warning finding gets the first class whose predicate (project, path, rule, message or source
line) matches; "unclassified" is the pool the review found real. The predicates name the reviewed
trees' paths on purpose: they count what the review saw, they are not a rule.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path

FP8_COMPARISON = re.compile(
    r"(==|!=|\bis\s+not|\bis)\s*torch\.float8|torch\.float8\w*\s*(==|!=)|\bin\s*[(\[{].*torch\.float8"
)


def classify(project: str, rel: str, rule: str, message: str, text: str) -> str:
    """First matching class of one finding."""
    not_torch = "not built by torch's cpp_extension" in message
    runtime_header = "comes from the runtime header" in message
    te, fa = project == "TransformerEngine", project == "flash-attention"
    checks = [
        (
            te and ("/paddle" in rel or rel.endswith("build_tools/paddle.py")),
            "W component removed on ROCm",
        ),
        (
            te
            and (
                "run_gemm_with_overlap" in rel
                or "test_comm_gemm_overlap" in rel
                or rel.endswith("comm_gemm_overlap.h")
            ),
            "W component removed on ROCm",
        ),
        (
            te and "/tests/cpp/" in rel and rule in ("hip-stream", "hip-include"),
            "W hipify not followed",
        ),
        (
            te and "/jax/csrc/" in rel and rule in ("hip-stream", "hip-include"),
            "W hipify not followed",
        ),
        (te and "/pytorch/csrc/" in rel and runtime_header, "W hipify not followed"),
        (project == "faiss" and "/c_api/gpu/" in rel, "W hipify not followed"),
        (
            project == "gsplat" and (not_torch or runtime_header or rule == "nvcc-only-guard"),
            "W hipify not followed",
        ),
        (
            rule in ("warp-mask-32bit", "warp-size-32")
            and project in ("TransformerEngine", "faiss"),
            "W HIP branch handles warp",
        ),
        (
            project == "faiss"
            and ("Cagra" in rel or "Cuvs" in rel or rel.endswith("GpuResources.h")),
            "W NVIDIA-only dependency",
        ),
        (project == "faiss" and rule == "cmake-cuda-language", "W CMake data flow"),
        (
            te and rule == "hip-stream" and "HIPIFY knows no HIP equivalent" in message,
            "W torch maps the name",
        ),
        (rule == "nvcc-only-guard" and "!defined(__CUDACC__)" in text, "W preprocessor shape"),
        (rule == "cuda-arch-macro" and "defined(USE_AMD_ROCM)" in text, "W preprocessor shape"),
        (project == "detectron2" and rel.endswith("detectron2/setup.py"), "W Python flow"),
        (rule == "nvml-smi" and rel.endswith("conftest.py"), "W Python flow"),
        (
            rule == "torch-version-cuda"
            and rel.endswith("layer_norm/setup.py")
            and "parse(torch.version.cuda)" in text,
            "W Python flow",
        ),
        (rule == "fp8-dtype" and FP8_COMPARISON.search(text) is not None, "W fp8 dtype comparison"),
        (
            fa and any(part in rel for part in ("/hopper/", "/cute/", "/tools/ci/")),
            "N NVIDIA-only component (Python)",
        ),
        (te and "wheel_utils" in rel, "N NVIDIA-only component (Python)"),
        (rule == "cuda-only-component", "N exclusion already tests ROCm"),
        (
            rule in ("docker-nvidia-base", "torch-cuda-wheel", "rocm-variant-packages"),
            "N NVIDIA container recipe",
        ),
        (rule in ("cuda-arch-macro", "cuda-version-macro"), "N ROCm fallback correct"),
        (rule == "nvml-smi" and "popen" in text, "N diagnostic popen"),
    ]
    return next((name for hit, name in checks if hit), "unclassified")


def main() -> None:
    """Print finding counts per class, then per class and project."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("results", nargs="+", type=Path)
    parser.add_argument("--trees", type=Path, required=True, help="folder holding the linted trees")
    args = parser.parse_args()
    total: Counter = Counter()
    per: Counter = Counter()
    for path in args.results:
        for d in json.loads(path.read_text())["diagnostics"]:
            if "guarded" in d or d["severity"] not in ("error", "warning"):
                continue
            rel = d["path"].split("/real/", 1)[-1]
            try:
                text = (args.trees / rel).read_text(errors="replace").splitlines()[d["line"] - 1]
            except (OSError, IndexError):
                text = ""
            name = classify(path.stem, rel, d["rule"], d["message"], text)
            total[name] += 1
            per[(name, path.stem)] += 1
    for name, count in total.most_common():
        projects = ", ".join(f"{p} {n}" for (c, p), n in sorted(per.items()) if c == name)
        print(f"{count:5d}  {name}  ({projects})")


if __name__ == "__main__":
    main()
