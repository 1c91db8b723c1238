#!/usr/bin/env bash
# Install cuda2rocm for the GitHub Action: a PyPI release, or the action's own checkout.
set -euo pipefail
python="${CUDA2ROCM_PYTHON:-python3}"
if [ -n "${CUDA2ROCM_VERSION:-}" ]; then
  "$python" -m pip install --quiet "cuda2rocm==${CUDA2ROCM_VERSION}"
else
  "$python" -m pip install --quiet "${GITHUB_ACTION_PATH:?}"
fi
"$python" -m cuda2rocm --version
