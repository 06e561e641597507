"""GPU-only checks of the fft plugin: the vendor library made once per stream, plans made once per
problem and bounded, the shared work area, transforms over more axes than one plan takes, inputs the
library must not overwrite, NumPy's answer for non-Hermitian input, float32 accuracy.

The device-parametrized tests of test_fft.py cover the transforms against NumPy on every device;
these look at what only the GPU path has. Skipped without a GPU.
"""

from __future__ import annotations

import numpy as np
import pytest

import rocm_array as xp
from helpers import host
from rocm_array.devices import gpus

pytestmark = pytest.mark.skipif(not gpus(), reason="no GPU")
GPU = gpus()[0] if gpus() else None


def _on(a: np.ndarray) -> xp.Array:
    return xp.asarray(a, device=str(GPU))


def _complex(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def test_library_once_per_stream_and_plans_once_per_problem() -> None:
    from rocm_array.runtime.fft import Problem
    from rocm_array.runtime.vendor import library

    rt = GPU.runtime
    a = _on(_complex((4, 24)))
    xp.fft.fft(a)
    lib = library("fft", rt)
    key = Problem("c2c", True, (24,), 4)
    plan = lib._plans[key]
    for _ in range(3):
        xp.fft.fft(a)
    assert library("fft", rt) is lib
    assert lib._plans[key] is plan  # the same plan, not one per call
    xp.fft.rfft(_on(_complex((3, 25)).real))
    assert Problem("r2c", True, (25,), 3) in lib._plans
    # The work area is the allocator's, large enough for every plan kept.
    assert lib._work.nbytes >= max(work for _, work in lib._plans.values())


def test_plan_cache_is_bounded() -> None:
    from rocm_array.runtime.fft import PLAN_CACHE
    from rocm_array.runtime.vendor import library

    a = _complex((2, 8), 1)
    x = _on(a)
    for n in range(2, PLAN_CACHE + 6):
        out = xp.fft.ifft(x, n=n)
    np.testing.assert_allclose(host(out), np.fft.ifft(a, n=PLAN_CACHE + 5), atol=1e-12)
    assert len(library("fft", GPU.runtime)._plans) <= PLAN_CACHE


@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn"])
@pytest.mark.parametrize("axes, s", [((0, 1, 2, 3), None), ((3, 0, 4, 1, 2), (3, 4, 2, 5, 3)),
                                     ((1, 4, 2, 0), (-1, 4, 6, 3))])
def test_more_axes_than_one_plan(name: str, axes: tuple[int, ...], s: tuple[int, ...] | None) -> None:
    a = _complex((3, 4, 2, 5, 6), 2)
    if name == "rfftn":
        a = a.real.copy()
    np_s = None if s is None else [a.shape[i] if n == -1 else n for n, i in zip(s, axes)]
    out = getattr(xp.fft, name)(_on(a), s=s, axes=axes)
    expected = getattr(np.fft, name)(a, s=np_s, axes=axes)
    np.testing.assert_allclose(host(out), expected, atol=1e-10 * np.abs(expected).max())


@pytest.mark.parametrize("name, kwargs", [("irfft", {}), ("irfft", {"n": 9}), ("hfft", {"axis": 0}),
                                          ("irfftn", {}), ("irfftn", {"axes": (1, 0)})])
def test_inputs_are_not_overwritten_and_match_numpy_when_not_hermitian(name: str, kwargs: dict) -> None:
    """cuFFT's complex-to-real transforms may overwrite their input and read the imaginary parts of the
    zero and Nyquist frequencies; NumPy ignores those parts and the caller's array is left alone."""
    for dtype in (np.complex128, np.complex64):
        a = _complex((6, 8), 3).astype(dtype)
        x = _on(a)
        out = getattr(xp.fft, name)(x, **kwargs)
        np.testing.assert_array_equal(host(x), a)
        expected = getattr(np.fft, name)(a.astype(np.complex128), **kwargs)
        tol = 1e-5 if dtype is np.complex64 else 1e-12
        np.testing.assert_allclose(host(out), expected, atol=tol * np.abs(expected).max())


def test_float32_transforms_are_single_precision_accurate() -> None:
    rng = np.random.default_rng(4)
    a = rng.standard_normal((4, 4096)).astype(np.float32)
    out = xp.fft.rfft(_on(a))
    assert out.dtype == xp.complex64 and str(out.device) == str(GPU)
    ref = np.fft.rfft(a.astype(np.float64))
    assert np.max(np.abs(host(out) - ref)) / np.max(np.abs(ref)) < 1e-6
    back = xp.fft.irfft(out, n=4096)
    np.testing.assert_allclose(host(back), a, atol=1e-5)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_strided_input(dtype: str) -> None:
    a = np.random.default_rng(5).uniform(-1, 1, (6, 10)).astype(np.float32)
    x = xp.astype(_on(a), getattr(xp, dtype))[::2, 1::3]
    ref_in = host(xp.astype(x, xp.float32)).astype(np.float64)
    out = xp.fft.fftn(x, s=(4, 5), axes=(1, 0), norm="ortho")
    assert out.dtype == xp.complex64
    np.testing.assert_allclose(host(out), np.fft.fftn(ref_in, s=(4, 5), axes=(1, 0), norm="ortho"), atol=1e-5)


def test_long_transform_and_large_batch() -> None:
    a = _complex((1 << 20,), 6)
    np.testing.assert_allclose(host(xp.fft.fft(_on(a))), np.fft.fft(a), atol=1e-8)
    b = _complex((100_000, 8), 7).astype(np.complex64)
    np.testing.assert_allclose(host(xp.fft.ifft(_on(b), norm="forward")), np.fft.ifft(b, norm="forward"),
                               atol=1e-4)
