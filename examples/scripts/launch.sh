#!/usr/bin/env bash
# Single-node multi-GPU training: scripts/launch.sh [extra train.py args]
set -euo pipefail
cd "$(dirname "$0")/.."

DATA_DIR=${DATA_DIR:-/data/voc}
OUT_DIR=${OUT_DIR:-checkpoints/$(date +%Y%m%d-%H%M)}

nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv

export NCCL_NVLS_ENABLE=0
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export OMP_NUM_THREADS=8

CUDA_VISIBLE_DEVICES=0,1 torchrun --standalone --nproc_per_node=2 train.py \
    --data "$DATA_DIR" --out "$OUT_DIR" --epochs 50 --batch-size 16 "$@"

python evaluate.py "$OUT_DIR/last.pt" --data "$DATA_DIR" --amp
