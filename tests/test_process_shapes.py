"""The processes users make, each a fresh interpreter: one whose first contact with rocm_array is a
pickled function (every Dask, Ray or multiprocessing worker), and a multiprocessing pool."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import pytest

import rocm_array as xp

from helpers import run_python

cloudpickle = pytest.importorskip("cloudpickle")


@pytest.mark.parametrize("name", ["sin", "sum", "linalg.matrix_transpose", "nn.relu"])
def test_a_pickled_function_as_the_first_import_gets_numpys_protocols(tmp_path: Path, name: str) -> None:
    """The worker makes its array with the unpickled ``asarray`` and touches no attribute of the
    namespace before NumPy's functions meet the array (an attribute would assemble it anyway)."""
    func = xp
    for part in name.split("."):
        func = getattr(func, part)
    path = tmp_path / "f.pkl"
    path.write_bytes(cloudpickle.dumps((xp.asarray, func)))
    out = run_python(f"""
import pickle
import numpy as np
asarray, f = pickle.load(open({str(path)!r}, "rb"))
a = asarray(np.arange(4.0).reshape(2, 2), device="cpu")
print(type(np.sin(a)).__name__, float(np.sum(a)), type(np.concatenate([a, a])).__name__, type(f(a)).__name__)
import rocm_array as xp
print(type(np.exp(a)).__name__, f is xp.{name})
""")
    assert out.split() == ["Array", "6.0", "Array", "Array", "Array", "True"]


def test_an_unpickled_array_as_the_first_import_meets_numpy() -> None:
    data = pickle.dumps(xp.arange(3.0, device="cpu"))
    out = run_python(f"""
import pickle
import numpy as np
a = pickle.loads({data!r})
print(type(np.exp(a)).__name__, float(np.sum(a)))
""")
    assert out.split() == ["Array", "3.0"]


def test_a_spawned_pool_computes_with_the_namespace(tmp_path: Path) -> None:
    script = tmp_path / "pool.py"
    script.write_text("""
import multiprocessing as mp
import numpy as np
import rocm_array as xp

def work(i):
    a = xp.asarray(np.arange(4.0) + i, device="cpu")
    return float(np.sum(np.sin(a) ** 2 + np.cos(a) ** 2))

if __name__ == "__main__":
    with mp.get_context("spawn").Pool(2) as pool:
        print(pool.map(work, range(3)))
""")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[4.0, 4.0, 4.0]"


#: The array frameworks rocm_array never imports, not even through a vendor package (cuDNN's frontend
#: imports torch where it can; a background import of torch broke array_api_compat in the main thread).
FRAMEWORKS = ("torch", "cupy", "jax", "tensorflow")


def test_no_other_array_framework_is_imported(tmp_path: Path, device: str) -> None:
    """Stand-ins of the frameworks, first on the path, record any import (with its stack) and refuse
    it, as if the framework were absent. ``import rocm_array``, the vendor preload and a first call of
    every vendor family (matmul, solve, fft, conv2d, pooling) leave the record empty; on a GPU, cuDNN or
    MIOpen is the one that ran the convolution."""
    record = tmp_path / "imports.log"
    for name in FRAMEWORKS:
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(
            "import traceback\n"
            f"with open({str(record)!r}, 'a') as f:\n"
            f"    f.write('import {name}\\n' + ''.join(traceback.format_stack()))\n"
            f"raise ImportError('{name} is a stand-in here')\n")
    out = subprocess.run([sys.executable, "-c", f"""
import sys
sys.path.insert(0, {str(tmp_path)!r})
import numpy as np
import rocm_array as xp
from rocm_array import devices
from rocm_array.runtime import vendor
device = {device!r}
r = np.random.default_rng(0)
a = xp.asarray(r.random((64, 64)) + 64 * np.eye(64), device=device)
x = xp.asarray(r.random((1, 3, 16, 16), dtype=np.float32), device=device)
w = xp.asarray(r.random((4, 3, 3, 3), dtype=np.float32), device=device)
results = [a @ a, xp.linalg.solve(a, a[:, 0]), xp.fft.rfft(a[0]), xp.nn.conv2d(x, w, padding=1),
           xp.nn.max_pool2d(x, 2)]
print([float(xp.sum(xp.abs(v))) > 0 for v in results])
if device != "cpu":
    print(vendor.why("dnn", devices.parse(device).runtime) or "dnn ok")
vendor._join_preloads()
print(sorted(set({FRAMEWORKS!r}) & set(sys.modules)))
"""], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert not record.exists(), record.read_text()
    lines = out.stdout.splitlines()
    assert lines[0] == str([True] * 5) and lines[-1] == "[]"
    if device != "cpu":
        assert lines[1] == "dnn ok"
