#!/usr/bin/env bash
# Build the training image and run scripts/launch.sh in it on this host's GPUs:
#   scripts/docker_train.sh [extra train.py args]
set -euo pipefail
cd "$(dirname "$0")/.."

IMAGE=${IMAGE:-tinyseg:latest}
DATA_DIR=${DATA_DIR:-/data/voc}

docker build -t "$IMAGE" .
docker run --rm -it --gpus all --ipc=host --shm-size=16g \
    -v "$DATA_DIR:/data/voc:ro" \
    -v "$PWD/checkpoints:/workspace/tinyseg/checkpoints" \
    -e DATA_DIR=/data/voc \
    "$IMAGE" bash scripts/launch.sh "$@"
