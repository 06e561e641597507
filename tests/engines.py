"""What the engine tests share: host copies that work under ROCM_ARRAY_STRICT_HOST=1, and the
check that a result is a rocm_array array on the expected device with NumPy's values."""

from __future__ import annotations

from typing import Any

import numpy as np

import rocm_array as xp


def to_numpy(x: xp.Array) -> np.ndarray:
    """An explicit host copy (DLPack), the one conversion strict-host mode allows."""
    return np.from_dlpack(x.to_device("cpu"))


def assert_on(result: Any, want: Any, device: Any, rtol: float = 1e-7, atol: float = 1e-9) -> None:
    """``result`` is a rocm_array array on ``device`` (no silent NumPy) and equals ``want``."""
    assert isinstance(result, xp.Array), f"a {type(result).__name__} came back, not a rocm_array array"
    assert result.device == xp.asarray(0, device=device).device, f"on {result.device}, not {device}"
    np.testing.assert_allclose(to_numpy(result), np.asarray(want), rtol=rtol, atol=atol)
