#!/usr/bin/env bash
# One device run for the reduction plugin: install, warm its kernels, its tests and the
# array-api-tests files of issue 5 on gpu:0, then the sum / sort benchmarks. Logs to $OUT.
# Usage (repo root, suite copied to .suite/, wheels in .wred/): scripts/gpu_reduction_run.sh
set -uo pipefail
repo=$(pwd)
out=${OUT:-$repo/gpu-logs}
mkdir -p "$out"
export PYTHONUNBUFFERED=1 ROCM_ARRAY_DEVICE=gpu:0 ROCM_ARRAY_CACHE_DIR=/tmp/ra-cache
step() { printf '\n== %s (%ds)\n' "$*" "$SECONDS"; }
step install
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .wred/*.whl 2>&1 | tail -1
export PYTHONPATH=/tmp/site
python3 -m pip install -q --no-deps --no-build-isolation . 2>&1 | grep -v "^WARNING: Running pip as" | tail -2
step warm
python3 scripts/warm_kernels.py 2>&1 | tee "$out/warm.log" | tail -5
step tests
(cd /tmp && timeout ${T_GPU_TESTS:-70} python3 -m pytest "$repo/tests/test_gpu_reduction.py" -p no:cacheprovider -v \
  --tb=short 2>&1) > "$out/tests_gpu.log"; grep -E "FAILED|ERROR|passed|failed" "$out/tests_gpu.log" | tail -25
(cd /tmp && timeout ${T_TESTS:-90} python3 -m pytest "$repo/tests/test_statistical.py" "$repo/tests/test_searching.py" \
  "$repo/tests/test_sorting.py" "$repo/tests/test_sets.py" "$repo/tests/test_utility.py" -k "gpu" \
  -p no:cacheprovider -v --tb=short 2>&1) > "$out/tests.log"; grep -E "FAILED|ERROR|passed|failed" "$out/tests.log" | tail -25
step conformance
# conformance/run.py's settings, with pytest itself under the timeout (so nothing outlives it)
(cd .suite && rm -rf .hypothesis && ARRAY_API_TESTS_MODULE=rocm_array ARRAY_API_TESTS_VERSION=2025.12 \
  timeout ${T_CONF:-120} python3 -m pytest array_api_tests/test_statistical_functions.py \
  array_api_tests/test_searching_functions.py array_api_tests/test_sorting_functions.py \
  array_api_tests/test_set_functions.py array_api_tests/test_utility_functions.py --max-examples=50 \
  --hypothesis-disable-deadline -p no:cacheprovider -v -rf 2>&1) > "$out/conformance.log"
grep -E "FAILED|passed|failed" "$out/conformance.log" | cut -c1-200 | tail -40
step bench
timeout ${T_BENCH:-90} python3 -m benchmarks --cases copy,sum,sum_axis0,sum_axis1,sort,argsort --out "$out/bench" 2>&1 | tail -30
step done
