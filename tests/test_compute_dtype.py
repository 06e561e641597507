"""One compute-dtype rule (``dtypes.compute_dtype``): the 16-bit floats compute in float32, rounding once."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import host, storage

import rocm_array as xp
from rocm_array import dtypes


def test_the_rule() -> None:
    assert dtypes.compute_dtype(xp.float16) is xp.float32 and dtypes.compute_dtype(xp.bfloat16) is xp.float32
    assert all(dtypes.compute_dtype(d) is d for d in dtypes.ALL if d not in (xp.float16, xp.bfloat16))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_results_round_once_from_float32(device: str, dtype: str) -> None:
    """Sums, products and softmax of half-precision data agree with float32 rounded once: a sum of
    4096 ones in float16 arithmetic would stop at 2048."""
    dt = getattr(xp, dtype)
    ones = xp.ones(4096, dtype=dt, device=device)
    assert float(xp.sum(ones)) == 4096.0
    assert float(xp.cumulative_sum(ones)[-1]) == 4096.0
    # Rows of 4096: summed in half precision they would be off by more than the one unit in the
    # last place that rounding the float32 result once allows.
    x = np.linspace(-3, 3, 2 * 4096, dtype=np.float32).reshape(2, 4096)
    got = host(xp.nn.softmax(xp.asarray(x, dtype=dt, device=device), axis=-1))
    half = xp.asarray(x, dtype=dt, device="cpu")
    want = np.exp(host(half).astype(np.float32))
    want /= want.sum(axis=-1, keepdims=True)
    rounded = want.astype(storage(dtype))
    if dtype == "float16":
        ulp = np.spacing(np.abs(rounded)).astype(np.float32)  # (subnormal spacing below 2^-14)
    else:  # bfloat16: float32's exponent range, 8 significant bits
        ulp = 2.0 ** (np.floor(np.log2(np.abs(want))) - 7)
    np.testing.assert_array_less(np.abs(got.astype(np.float32) - rounded.astype(np.float32)), ulp * 1.0001)
