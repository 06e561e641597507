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
