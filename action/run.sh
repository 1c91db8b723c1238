#!/usr/bin/env bash
# Lint for the GitHub Action: workflow annotations, optional SARIF, a job summary, and the
# outputs `ran` and `exit-code`. Exit: 0 clean (or findings with fail-on-findings false),
# 1 findings, 2 the lint could not run (configuration or usage error).
set -uo pipefail
python="${CUDA2ROCM_PYTHON:-${CUDA2ROCM_VENV:-}/bin/python}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tmp="${RUNNER_TEMP:-$(mktemp -d)}"

# One argument per line, taken as written (no word splitting, no globbing); a single line of
# paths is split on spaces, as the input always allowed.
lines() { printf '%s\n' "$1" | sed -e 's/\r$//' -e '/^[[:space:]]*$/d'; }
mapfile -t args < <(lines "${CUDA2ROCM_ARGS:-}")
mapfile -t paths < <(lines "${CUDA2ROCM_PATHS:-.}")
if [ "${#paths[@]}" -eq 1 ]; then read -r -a paths <<< "${paths[0]}"; fi
[ "${#paths[@]}" -gt 0 ] || paths=(.)
if [ -n "${CUDA2ROCM_CACHE_DIR:-}" ]; then args=(--cache-dir "$CUDA2ROCM_CACHE_DIR" "${args[@]}"); fi

output() { if [ -n "${GITHUB_OUTPUT:-}" ]; then echo "$1=$2" >> "$GITHUB_OUTPUT"; fi; }

# One lint: GitHub annotations on stdout, the JSON result for the job summary and, when asked,
# SARIF, all from the same findings (`--also-write`), so they can never disagree.
json="$tmp/cuda2rocm-result.json"
rm -f "$json"
reports=(--also-write "json=$json")
if [ "${CUDA2ROCM_SARIF:-false}" = "true" ]; then
  reports+=(--also-write "sarif=${CUDA2ROCM_SARIF_FILE:-cuda2rocm.sarif}")
fi
"$python" -m cuda2rocm lint --format github "${reports[@]}" "${args[@]}" -- "${paths[@]}"
status=$?
if [ "$status" -gt 1 ] || [ ! -s "$json" ]; then
  output ran false
  output exit-code 2
  if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    printf '### cuda2rocm\n\nThe lint could not run (exit %s); see the step log.\n' "$status" \
      >> "$GITHUB_STEP_SUMMARY"
  fi
  exit 2
fi
output ran true
output exit-code "$status"

if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  "$python" "$here/summary.py" "$json" >> "$GITHUB_STEP_SUMMARY"
fi

if [ "$status" -eq 1 ] && [ "${CUDA2ROCM_FAIL:-true}" != "true" ]; then
  exit 0
fi
exit "$status"
