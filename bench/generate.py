"""Generate a large synthetic PyTorch project, deterministically from a seed.

Most modules are ordinary model, data and utility code; a realistic share (about one in seven)
touches CUDA-specific APIs that cuda2rocm reports, and a C++/CUDA extension tree sits beside it.
"""

from __future__ import annotations

import argparse
import random
import shutil
from pathlib import Path

WORDS = [
    "encoder",
    "decoder",
    "block",
    "layer",
    "attention",
    "embed",
    "proj",
    "norm",
    "head",
    "stem",
    "patch",
    "token",
    "mixer",
    "gate",
    "router",
    "expert",
    "cache",
    "sampler",
    "loader",
    "batch",
    "shard",
    "bucket",
    "anchor",
    "feature",
    "pyramid",
    "residual",
]

PLAIN_FUNCTION = '''
def {name}(x, scale={scale}, dim={dim}):
    """Apply {word} scaling along `dim` and return the normalised tensor."""
    if x.dim() < dim:
        raise ValueError(f"expected at least {{dim}} dims, got {{x.dim()}}")
    y = x * scale
    for step in range({loops}):
        y = y - y.mean(dim=-1, keepdim=True)
        y = y / (y.std(dim=-1, keepdim=True) + 1e-{eps})
    return y.to(x.dtype)
'''

PLAIN_CLASS = '''

class {cls}(nn.Module):
    """A {word} module with {n} sub-layers."""

    def __init__(self, width={width}, depth={n}, dropout=0.{drop}):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(width, width) for _ in range(depth))
        self.norm = nn.LayerNorm(width)
        self.drop = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        for layer in self.layers:
            x = x + self.drop(torch.relu(layer(self.norm(x))))
        if mask is not None:
            x = x.masked_fill(~mask[..., None], 0.0)
        return x

    def extra_repr(self):
        return f"width={{self.norm.normalized_shape[0]}}, depth={{len(self.layers)}}"
'''

CUDA_SNIPPETS = [
    """
def {name}_step(model, batch, optimizer, scaler=None):
    scaler = scaler or torch.cuda.amp.GradScaler()
    with torch.cuda.amp.autocast(dtype=torch.float16):
        loss = model(batch.cuda(non_blocking=True)).mean()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    return loss.item()
""",
    """
def {name}_device():
    if torch.version.cuda is None:
        return torch.device("cpu")
    return torch.device("cuda", torch.cuda.current_device())
""",
    """
def {name}_supports_tf32():
    major = int(torch.version.cuda.split(".")[0])
    return major >= 11 and torch.cuda.get_device_capability() >= (8, 0)
""",
    """
def {name}_loader(dataset, batch_size={bs}):
    return torch.utils.data.DataLoader(dataset, batch_size=batch_size, num_workers=4,
                                       pin_memory=True, shuffle=True)
""",
    """
def {name}_init(rank, world):
    os.environ.setdefault("NCCL_DEBUG", "WARN")
    dist.init_process_group(backend="nccl", rank=rank, world_size=world)
    return torch.device("cuda", rank % torch.cuda.device_count())
""",
]

HEADER = '''"""{title}."""

from __future__ import annotations

import math
import os

import torch
import torch.distributed as dist
from torch import nn
'''

CPP_KERNEL = """#include <torch/extension.h>
#include <cuda_runtime.h>
#include <cuda_fp16.h>

#define WARP_SIZE 32

template <typename T>
__device__ T {name}_warp_sum(T v) {{
  for (int offset = 16; offset > 0; offset >>= 1) {{
    v += __shfl_down_sync(0xffffffff, v, offset);
  }}
  return v;
}}

__global__ void {name}_kernel(const float* __restrict__ x, float* __restrict__ y, int n) {{
  __shared__ float partial[32];
  int lane = threadIdx.x & 31;
  int warp = threadIdx.x >> 5;
  float acc = 0.f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {{
    acc += x[i] * {scale}f;
  }}
  acc = {name}_warp_sum(acc);
  if (lane == 0) partial[warp] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {{
    float total = 0.f;
    for (int w = 0; w < blockDim.x / WARP_SIZE; ++w) total += partial[w];
    atomicAdd(y, total);
  }}
}}

torch::Tensor {name}(torch::Tensor x) {{
  auto y = torch::zeros({{1}}, x.options());
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  {name}_kernel<<<{blocks}, 256, 0, stream>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
  return y;
}}
"""

CPP_PLAIN = """#include <torch/extension.h>
#include <vector>

// Host-side helpers for {name}.
std::vector<int64_t> {name}_shape(const torch::Tensor& t, int64_t groups) {{
  std::vector<int64_t> out(t.sizes().begin(), t.sizes().end());
  TORCH_CHECK(out.back() % groups == 0, "last dim must divide by ", groups);
  out.back() /= groups;
  out.push_back(groups);
  return out;
}}

torch::Tensor {name}_reshape(const torch::Tensor& t, int64_t groups) {{
  return t.reshape({name}_shape(t, groups));
}}
"""


def _module(rng: random.Random, index: int, cuda_share: float) -> str:
    word = rng.choice(WORDS)
    parts = [HEADER.format(title=f"{word.title()} utilities, part {index}")]
    for j in range(rng.randint(3, 9)):
        parts.append(
            PLAIN_FUNCTION.format(
                name=f"{word}_{j}_{index}",
                word=word,
                scale=round(rng.uniform(0.1, 4.0), 3),
                dim=rng.randint(1, 4),
                loops=rng.randint(1, 3),
                eps=rng.randint(5, 8),
            )
        )
    for j in range(rng.randint(1, 4)):
        parts.append(
            PLAIN_CLASS.format(
                cls=f"{word.title()}{j}Block{index}",
                word=word,
                width=rng.choice((128, 256, 512, 768)),
                n=rng.randint(1, 6),
                drop=rng.randint(0, 5),
            )
        )
    if rng.random() < cuda_share:
        for snippet in rng.sample(CUDA_SNIPPETS, rng.randint(1, 2)):
            parts.append(snippet.format(name=f"{word}{index}", bs=rng.choice((8, 16, 32))))
    return "".join(parts)


def generate(
    root: Path,
    seed: int = 7,
    python_files: int = 3000,
    cpp_files: int = 300,
    cuda_share: float = 0.15,
) -> dict:
    rng = random.Random(seed)
    if root.exists():
        shutil.rmtree(root)
    lines = 0
    for i in range(python_files):
        package = root / "src" / f"pkg{i % 40:02}" / f"sub{(i // 40) % 10}"
        package.mkdir(parents=True, exist_ok=True)
        text = _module(rng, i, cuda_share)
        (package / f"{rng.choice(WORDS)}_{i}.py").write_text(text)
        lines += text.count("\n")
    for i in range(cpp_files):
        folder = root / "csrc" / f"ops{i % 12:02}"
        folder.mkdir(parents=True, exist_ok=True)
        name = f"{rng.choice(WORDS)}_op{i}"
        if i % 3 == 0:
            text = CPP_PLAIN.format(name=name)
            (folder / f"{name}.cpp").write_text(text)
        else:
            text = CPP_KERNEL.format(
                name=name, scale=round(rng.uniform(0.5, 2.0), 2), blocks=rng.choice((64, 128))
            )
            (folder / f"{name}.cu").write_text(text)
        lines += text.count("\n")
    return {"python_files": python_files, "cpp_files": cpp_files, "lines": lines}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("root", type=Path)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--python-files", type=int, default=3000)
    parser.add_argument("--cpp-files", type=int, default=300)
    args = parser.parse_args()
    print(generate(args.root, args.seed, args.python_files, args.cpp_files))
