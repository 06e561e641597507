"""Helpers shared by the test modules (tests/ is on sys.path under pytest's default import mode)."""

from __future__ import annotations

import ml_dtypes
import numpy as np

import rocm_array as xp


def host(x: xp.Array) -> np.ndarray:
    """The elements of ``x``, copied to a NumPy array (the reference side of a comparison)."""
    return np.asarray(x.to_device("cpu"))


def storage(dtype: str | xp.dtypes.DType) -> np.dtype:
    """The NumPy storage dtype of a dtype or dtype name (ml_dtypes' for bfloat16)."""
    name = dtype if isinstance(dtype, str) else dtype.name
    return np.dtype(ml_dtypes.bfloat16 if name == "bfloat16" else name)


def small_values(dtype: str, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """Small values in ``dtype``'s storage type: sums of a few products stay exact in every dtype."""
    rng = np.random.default_rng(seed)
    if dtype.startswith("complex"):
        a = rng.integers(-3, 4, shape) + 1j * rng.integers(-3, 4, shape)
    elif dtype.startswith(("int", "uint")):
        a = rng.integers(0 if dtype.startswith("u") else -3, 4, shape)
    else:
        a = rng.integers(-8, 9, shape) / 4
    return np.asarray(a).astype(storage(dtype))
