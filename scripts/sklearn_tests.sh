#!/usr/bin/env bash
# scikit-learn's own array-API tests against rocm_array on one device: the tests scikit-learn
# parametrizes over its array namespaces, with rocm_array added by tests/sklearn_namespaces.py
# (-k rocm_array selects them), on the installed package, outside the checkout. Fails on any failure.
# DEVICE: cpu (CI runs it so, and again under ROCM_ARRAY_STRICT_HOST=1) or gpu (every GPU found;
# on a GPU machine, ROCM_ARRAY_PLATFORM=sim for the simulator's).
# Usage: [PYTHON=venv/bin/python] scripts/sklearn_tests.sh cpu|gpu [pytest args, e.g. -n 8]
# On a GPU machine: source scripts/gpu_install.sh && PYTHON=$python bash scripts/sklearn_tests.sh gpu -n 8
set -euo pipefail

device=${1:?usage: scripts/sklearn_tests.sh cpu|gpu [pytest args]}
shift
case $device in
    cpu) select="rocm_array and not gpu" ;;
    gpu) select="rocm_array and gpu" ;;
    *) echo "scripts/sklearn_tests.sh: DEVICE is cpu or gpu, not $device" >&2; exit 2 ;;
esac
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
python=${PYTHON:-python3}
# SciPy reads SCIPY_ARRAY_API once, at its import; scikit-learn's dispatch needs it.
export SCIPY_ARRAY_API=1 PYTHONPATH=$repo/tests${PYTHONPATH:+:$PYTHONPATH}
cd "$(mktemp -d)"  # import the installed package, not the checkout

# scikit-learn's generators of namespaces are iterators, which pytest 9 warns about for each test.
"$python" -m pytest --pyargs sklearn -p sklearn_namespaces -k "$select" -p no:cacheprovider -q -rfE \
    -W "ignore:Passing a non-Collection iterable:DeprecationWarning" "$@"
