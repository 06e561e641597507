"""One compute-dtype rule (``dtypes.compute_dtype``): the 16-bit floats compute in float32, rounding once."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import host

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
    x = np.linspace(-3, 3, 24, dtype=np.float32).reshape(4, 6)
    got = host(xp.nn.softmax(xp.asarray(x, dtype=dt, device=device), axis=-1)).astype(np.float32)
    half = xp.asarray(x, dtype=dt, device="cpu")
    want = np.exp(host(half).astype(np.float32))
    want /= want.sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(got, want, rtol=1e-2, atol=1e-3)
