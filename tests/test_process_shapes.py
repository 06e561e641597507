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
