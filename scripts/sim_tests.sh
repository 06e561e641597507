#!/usr/bin/env bash
# CI: the GPU tests on the simulator (ROCM_ARRAY_PLATFORM=sim) at one wave size, so that the
# kernels run at AMD's wave 64 (and at 32) where no such GPU is at hand. Needs clang++ 15 or
# later (CI has it from hipcc) and the installed package; runs outside the checkout.
# Selection: every GPU test of the kernels, less the vendor-library paths (BLAS, FFT and
# convolution, which the simulator has not) and the largest sort (test_radix_sort_large_stable:
# 2^22 keys, 40 s; test_radix_sort_many_tiles crosses 70 tiles at a tenth of the cost).
# Usage: [PYTHON=venv/bin/python] scripts/sim_tests.sh 64|32 [pytest args]
set -euo pipefail

wave=${1:?usage: scripts/sim_tests.sh 64|32 [pytest args]}
shift
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
python=${PYTHON:-python3}
export ROCM_ARRAY_PLATFORM=sim ROCM_ARRAY_SIM_WAVE=$wave ROCM_ARRAY_DEVICE=gpu:0
export ROCM_ARRAY_CACHE_DIR=${ROCM_ARRAY_CACHE_DIR:-$(mktemp -d)}
files=(test_gpu_runtime.py test_gpu_elementwise.py test_gpu_reduction.py test_gpu_nn.py test_gpu_small_gemm.py
       test_reduction_sorting.py test_fusion.py test_reduction_sets.py test_reduction_searching.py
       test_elementwise_indexing.py test_reduction_statistical.py test_elementwise_manipulation.py test_random.py)
cd "$(mktemp -d)"  # import the installed package, not the checkout

"$python" -m rocm_array info | grep -E "gpu:0|sim"
"$python" -m pytest "${files[@]/#/$repo/tests/}" -k "gpu and not conv and not large_stable" \
    -p no:cacheprovider -q -rfE "$@"
