#!/usr/bin/env bash
# Lint for the GitHub Action: workflow annotations on stdout, optional SARIF, a job summary.
set -uo pipefail
python="${CUDA2ROCM_PYTHON:-python3}"
read -r -a paths <<< "${CUDA2ROCM_PATHS:-.}"
read -r -a args <<< "${CUDA2ROCM_ARGS:-}"

if [ "${CUDA2ROCM_SARIF:-false}" = "true" ]; then
  "$python" -m cuda2rocm lint --format sarif --exit-zero \
    -o "${CUDA2ROCM_SARIF_FILE:-cuda2rocm.sarif}" "${args[@]}" "${paths[@]}" || exit 2
fi

"$python" -m cuda2rocm lint --format github "${args[@]}" "${paths[@]}"
status=$?

if [ -n "${GITHUB_STEP_SUMMARY:-}" ] && [ "$status" -le 1 ]; then
  {
    echo "### cuda2rocm"
    echo '```'
    "$python" -m cuda2rocm lint --statistics --format concise --exit-zero "${args[@]}" "${paths[@]}"
    echo '```'
  } >> "$GITHUB_STEP_SUMMARY"
fi

if [ "$status" -eq 1 ] && [ "${CUDA2ROCM_FAIL:-true}" != "true" ]; then
  exit 0
fi
exit "$status"
