#!/usr/bin/env bash
# On a machine with an NVIDIA GPU and nvcc: original and fixed warp kernels (tests/fixtures/warp)
# must print the same (issue 14). Run from the repository root; needs the package importable.
set -euo pipefail
nvidia-smi -L
PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" python -m pytest -q -p no:cacheprovider -rs \
  tests/test_warp_fix_behaviour.py -k nvidia
