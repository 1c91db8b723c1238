#!/usr/bin/env bash
# Install cuda2rocm for the GitHub Action into its own virtual environment (PEP 668 runners
# refuse installs into the system Python): the action's own checkout, or what `install` names.
set -euo pipefail
base="${CUDA2ROCM_BASE_PYTHON:-python3}"
venv="${CUDA2ROCM_VENV:?CUDA2ROCM_VENV must name the virtual environment to create}"
if [ ! -x "$venv/bin/python" ]; then
  "$base" -m venv "$venv"
fi
python="$venv/bin/python"
if [ -n "${CUDA2ROCM_INSTALL:-}" ]; then
  "$python" -m pip install --quiet --disable-pip-version-check "${CUDA2ROCM_INSTALL}"
else
  "$python" -m pip install --quiet --disable-pip-version-check "${GITHUB_ACTION_PATH:?}"
fi
"$python" -m cuda2rocm --version
