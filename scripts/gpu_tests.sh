#!/usr/bin/env bash
# On a GPU machine: install the project, run the whole pytest suite against gpu:0, and
# measure the runtime (compile cache cold/warm, host <-> device bandwidth).
# Logs go to $OUT (the device tool's output folder) or ./gpu-logs.
# Usage: scripts/gpu_tests.sh [extra pytest arguments]
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${OUT:-$repo/gpu-logs}
mkdir -p "$out"
python=${PYTHON:-python3}
export PYTHONUNBUFFERED=1 ROCM_ARRAY_DEVICE=${ROCM_ARRAY_DEVICE:-gpu:0}
export ROCM_ARRAY_CACHE_DIR=${ROCM_ARRAY_CACHE_DIR:-$(mktemp -d)}

step() { printf '\n== %s (%ds)\n' "$*" "$SECONDS"; }

step "install"
"$python" -m pip install -q --no-deps --no-build-isolation "$repo" 2>&1 | grep -v "^WARNING: Running pip as" || true
cd "$(mktemp -d)"  # import the installed package, not the checkout

step "python -m rocm_array info"
"$python" -m rocm_array info 2>&1 | tee "$out/info.log"

step "pytest (ROCM_ARRAY_DEVICE=$ROCM_ARRAY_DEVICE)"
"$python" -m pytest "$repo/tests" -p no:cacheprovider -q -rfE --durations=15 \
    --junitxml="$out/pytest.xml" "$@" 2>&1 | tee "$out/pytest.log"
status=${PIPESTATUS[0]}

step "runtime measurements"
"$python" "$repo/scripts/measure_runtime.py" --json "$out/measure.json" 2>&1 | tee "$out/measure.log"

step "done: pytest exit status $status"
exit "$status"
