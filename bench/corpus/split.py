"""The corpus split rule (bench/corpus/README.md): which half a project belongs to."""

from __future__ import annotations

import hashlib
import sys

# Tuned on before the split existed: tune half whatever the hash (README).
USED_BEFORE = frozenset(
    name.lower()
    for name in (
        "facebookresearch/detectron2",
        "Dao-AILab/flash-attention",
        "facebookresearch/faiss",
        "nerfstudio-project/gsplat",
        "pytorch/FBGEMM",
        "microsoft/tutel",
        "rusty1s/pytorch_scatter",
        "pyg-team/pyg-lib",
        "huggingface/diffusers",
        "ROCm/TransformerEngine",
        "ggerganov/llama.cpp",
        "ggml-org/llama.cpp",
        "rusty1s/pytorch_sparse",
        "rusty1s/pytorch_cluster",
        "NVIDIA/cuda-samples",
        "karpathy/llm.c",
        "ggml-org/ggml",
    )
)


def half(project: str) -> str:
    """'tune' or 'measured' for an 'owner/name' project, by the rule fixed before looking."""
    if project.strip().lower() in USED_BEFORE:
        return "tune"
    digest = hashlib.sha256(project.strip().lower().encode()).hexdigest()
    return "tune" if digest[0] in "01234567" else "measured"


if __name__ == "__main__":
    for name in sys.argv[1:]:
        print(f"{name}\t{half(name)}")
