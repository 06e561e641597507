#!/usr/bin/env bash
# On a GPU machine: install the project (with any wheels carried in .whl/), fill the kernel
# cache in parallel, run the whole pytest suite against gpu:0 and measure the runtime; then,
# when asked, the suite again with fusion off (EAGER=1: ROCM_ARRAY_FUSION=0, and array-api-tests
# too when SUITE is set), the array-api-tests suite on gpu:0 (SUITE=path of a checkout) and the
# benchmarks (BENCH=1). PLAIN=0 skips the plain suite (as when it just ran on the same tree).
# Logs go to $OUT (the device tool's output folder) or ./gpu-logs.
# Usage: [SUITE=.suite/array-api-tests] [EXAMPLES=200] [EAGER=1] [PLAIN=0] [BENCH=1 [COMMIT=sha]] scripts/gpu_tests.sh [pytest args]
set -uo pipefail

out=${OUT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/gpu-logs}
mkdir -p "$out"
export PYTHONUNBUFFERED=1 ROCM_ARRAY_DEVICE=${ROCM_ARRAY_DEVICE:-gpu:0}
export ROCM_ARRAY_CACHE_DIR=${ROCM_ARRAY_CACHE_DIR:-$(mktemp -d)}

step() { printf '\n== %s (%ds)\n' "$*" "$SECONDS"; }

step "install"
source "$(dirname "${BASH_SOURCE[0]}")/gpu_install.sh"
cd "$(mktemp -d)"  # import the installed package, not the checkout
parallel=()
"$python" -c "import xdist" 2>/dev/null && parallel=(-n 8)

step "python -m rocm_array info"
"$python" -m rocm_array info 2>&1 | tee "$out/info.log"

step "kernel cache, compiled in parallel"
"$python" -m rocm_array warm 2>&1 | tail -5 | tee "$out/warm.log"

status=0
if [ "${PLAIN:-1}" != 0 ]; then
    step "pytest (ROCM_ARRAY_DEVICE=$ROCM_ARRAY_DEVICE)"
    # Tests marked exclusive (out-of-memory) exhaust the card for a moment: they run alone, after.
    timeout "${T_TESTS:-300}" "$python" -m pytest "$repo/tests" "${parallel[@]}" -m "not exclusive" -p no:cacheprovider \
        -q -rfE --junitxml="$out/pytest.xml" "$@" > "$out/pytest.log" 2>&1
    status=$?
    "$python" -m pytest "$repo/tests" -m exclusive -p no:cacheprovider -q -rfE "$@" > "$out/pytest-exclusive.log" 2>&1
    alone=$?
    [ "$alone" -eq 0 ] || [ "$alone" -eq 5 ] || status=$alone  # 5: none selected (no GPU tests)
    grep -hE "^(FAILED|ERROR)" "$out/pytest.log" "$out/pytest-exclusive.log" | cut -c1-300 | head -40
    tail -qn1 "$out/pytest.log" "$out/pytest-exclusive.log"
fi

step "runtime measurements"
"$python" "$repo/scripts/measure_runtime.py" --json "$out/measure.json" 2>&1 | tail -20 | tee "$out/measure.log"

if [ -n "${SUITE:-}" ]; then
    step "array-api-tests on $ROCM_ARRAY_DEVICE (max-examples ${EXAMPLES:-200})"
    suite=$(cd "$repo" && realpath "$SUITE")
    timeout "${T_CONF:-240}" "$python" "$repo/conformance/run.py" "$suite" --device "$ROCM_ARRAY_DEVICE" \
        --max-examples "${EXAMPLES:-200}" -- "${parallel[@]}" -q -rf > "$out/conformance.log" 2>&1
    conf=$?
    grep -E "^FAILED|conformance of" "$out/conformance.log" | cut -c1-300 | tail -40
    [ "$conf" -eq 0 ] || status=$conf
fi

if [ -n "${EAGER:-}" ]; then
    step "pytest with fusion off (ROCM_ARRAY_FUSION=0)"
    ROCM_ARRAY_FUSION=0 timeout "${T_TESTS:-300}" "$python" -m pytest "$repo/tests" "${parallel[@]}" -m "not exclusive" \
        -p no:cacheprovider -q -rfE "$@" > "$out/pytest-eager.log" 2>&1
    eager=$?
    grep -hE "^(FAILED|ERROR)" "$out/pytest-eager.log" | cut -c1-300 | head -40
    tail -qn1 "$out/pytest-eager.log"
    [ "$eager" -eq 0 ] || status=$eager
    if [ -n "${SUITE:-}" ]; then
        step "array-api-tests on $ROCM_ARRAY_DEVICE with fusion off"
        ROCM_ARRAY_FUSION=0 timeout "${T_CONF:-240}" "$python" "$repo/conformance/run.py" "$suite" \
            --device "$ROCM_ARRAY_DEVICE" --max-examples "${EXAMPLES:-200}" -- "${parallel[@]}" -q -rf \
            > "$out/conformance-eager.log" 2>&1
        conf=$?
        grep -E "^FAILED|conformance of" "$out/conformance-eager.log" | cut -c1-300 | tail -40
        [ "$conf" -eq 0 ] || status=$conf
    fi
fi

if [ -n "${BENCH:-}" ]; then
    step "benchmarks"
    # COMMIT names the tree when the checkout has no (or a stale) .git, as on the device tool's copy.
    commit=${COMMIT:-$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)}
    cd "$repo"  # benchmarks/ is not installed: run it from the checkout
    # (SIGINT at the limit: a run that stalls shows where, in its traceback)
    timeout -s INT -k 20 "${T_BENCH:-150}" "$python" -m benchmarks --out "$out/bench" --markdown "$out/BENCHMARKS.md" \
        --commit "$commit" > "$out/bench.log" 2>&1
    tail -45 "$out/bench.log"
fi

step "done: exit status $status"
exit "$status"
