#!/usr/bin/env bash
# Fetch the pinned ROCm headers that cuda2rocm/data/facts.toml was checked against, into
# ${CUDA2ROCM_ROCM_HEADERS:-.rocm-headers} (the compile tests read the same variable):
#   rocm-<X.Y>/hiprtc_runtime.h  from PyPI rocm-llvm-python (the HIP device headers flattened)
#   clr/                         a clone of ROCm/clr (release tags up to rocm-6.2.2)
# Run from a clone: nothing depends on the machine's paths.
set -euo pipefail
dest=${CUDA2ROCM_ROCM_HEADERS:-.rocm-headers}
mkdir -p "$dest"
pip=${PIP:-python3 -m pip}
declare -A wheels=(
  [6.4]=6.4.0.549.38
  [7.0]=7.0.0.555.43
  [7.1]=7.1.0.555.43
  [7.2]=7.2.2.562.46
)
for release in "${!wheels[@]}"; do
  out="$dest/rocm-$release"
  [ -f "$out/hiprtc_runtime.h" ] && continue
  tmp=$(mktemp -d)
  $pip download --no-deps --quiet "rocm-llvm-python==${wheels[$release]}" -d "$tmp"
  mkdir -p "$out"
  unzip -p "$tmp"/*.whl 'rocm/amd_comgr/hiprtc_runtime.h' > "$out/hiprtc_runtime.h"
  rm -rf "$tmp"
done
if [ ! -d "$dest/clr" ]; then
  git clone --bare --filter=blob:none https://github.com/ROCm/clr "$dest/clr"
fi
echo "headers in $dest"
