#!/usr/bin/env bash
# One device run for the elementwise plugin: install, warm the kernel cache, the elementwise
# area's tests on gpu:0, the speed check (benchmarks) and a profile of a tiny op, then the array-api-tests files of
# issue 4 on gpu:0. Logs to $OUT.
# Usage (repo root, suite copied to .suite/, its wheels in .wred/): scripts/gpu_elementwise_run.sh
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
python3 scripts/warm_kernels.py copy/ elementwise/ indexing/ 2>&1 | tee "$out/warm.log" | tail -5
step tests
(cd /tmp && timeout ${T_TESTS:-100} python3 -m pytest "$repo/tests/test_gpu_elementwise.py" "$repo/tests/test_elementwise.py" \
  "$repo/tests/test_operators.py" "$repo/tests/test_creation.py" "$repo/tests/test_manipulation.py" \
  "$repo/tests/test_indexing.py" "$repo/tests/test_data_types.py" "$repo/tests/test_array.py" -n 8 -k "gpu or not cpu" \
  -p no:cacheprovider -q -rfEx --tb=short 2>&1) > "$out/tests.log"
grep -E "^(FAILED|ERROR|XFAIL)|passed|failed" "$out/tests.log" | cut -c1-220 | tail -40
step bench
timeout ${T_BENCH:-80} python3 -m benchmarks --cases copy,add,multiply,add_broadcast,add_transposed,copy_transposed,tiny_add \
  --out "$out/bench" 2>&1 | tail -16
step "host cost of a + b on 16 elements"
(cd /tmp && python3 "$repo/scripts/profile_tiny_op.py" 2>&1) | tee "$out/profile.log" | head -30
step conformance
files="operators_and_elementwise_functions special_cases creation_functions manipulation_functions indexing_functions
array_object data_type_functions has_names signatures constants inspection_functions dlpack"
(timeout ${T_CONF:-150} python3 conformance/run.py .suite --device gpu:0 --max-examples 50 \
  $(for f in $files; do echo "array_api_tests/test_$f.py"; done) -n 12 -q -rf 2>&1) > "$out/conformance.log"
grep -E "^FAILED|passed|failed|conformance of" "$out/conformance.log" | cut -c1-220 | tail -60
step done
