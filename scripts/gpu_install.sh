# Sourced on a GPU machine: install the project (with any wheels carried in .whl/) and set
# $python; scripts/gpu_tests.sh and one-off device runs start with it.
#   source scripts/gpu_install.sh && "$python" my_check.py
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
python=${PYTHON:-python3}
quiet_pip() { "$python" -m pip install -q --no-deps "$@" 2>&1 | grep -v "^WARNING: Running pip as" || true; }
if compgen -G "$repo/.whl/*.whl" >/dev/null; then
    # Wheels the machine lacks (the device tool's README says how to carry them), byte-compiled as
    # pip does for a user: without it a first call's import of cudnn's frontend compiled its
    # sources (67 of a warm first conv2d's 258 ms on an H100), which no installed user pays.
    quiet_pip --no-index --upgrade --target /tmp/site "$repo"/.whl/*.whl
    export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
    if ! "$python" -c "import nvmath.bindings.cublas" 2>/dev/null && compgen -G "$repo/.whl/extra/*.whl" >/dev/null; then
        quiet_pip --no-index --upgrade --target /tmp/site "$repo"/.whl/extra/*.whl
    fi
fi
quiet_pip --no-build-isolation "$repo"
