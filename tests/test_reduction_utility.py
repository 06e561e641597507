"""Utility functions against NumPy: all, any, diff."""

from __future__ import annotations

import numpy as np
import pytest

import rocm_array as xp
from helpers import host, storage

ALL = ["bool", "int8", "uint8", "int16", "uint32", "int64", "uint64", "float16", "bfloat16", "float32",
       "float64", "complex64", "complex128"]
NUMERIC = ALL[1:]



def sample(dtype: str, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """Values with plenty of zeros (and of ones, so all() is not always False)."""
    rng = np.random.default_rng(seed)
    a = (rng.random(shape) < 0.8) * rng.integers(1, 5, shape)
    if dtype.startswith("complex"):
        a = a * np.where(rng.random(shape) < 0.5, 1, 1j)
    return np.asarray(a).astype(storage(dtype))


@pytest.mark.parametrize("name", ["all", "any"])
@pytest.mark.parametrize("dtype", ALL)
def test_all_any_match_numpy(device: str, name: str, dtype: str) -> None:
    a = sample(dtype, (3, 4, 2))
    x = xp.asarray(a, device=device)
    f, ref = getattr(xp, name), getattr(np, name)
    for axis in (None, 0, -1, (0, 2), (), (2, 1, 0)):
        for keepdims in (False, True):
            out = f(x, axis=axis, keepdims=keepdims)
            assert out.dtype == xp.bool
            np.testing.assert_array_equal(host(out), ref(a.astype(np.complex128), axis=axis, keepdims=keepdims))


def test_all_any_special_values(device: str) -> None:
    a = np.array([np.nan, np.inf, -np.inf, -0.0])
    x = xp.asarray(a, device=device)
    assert host(xp.all(x[:3])).item() and not host(xp.any(x[3:])).item()  # NaN and inf are true
    assert host(xp.all(xp.asarray(np.array([1j, 1]), device=device))).item()
    empty = xp.asarray(np.zeros((0, 2)), device=device)
    np.testing.assert_array_equal(host(xp.all(empty, axis=0)), [True, True])
    np.testing.assert_array_equal(host(xp.any(empty, axis=0)), [False, False])
    assert host(xp.all(empty)).item() and not host(xp.any(empty)).item()
    assert xp.any(empty, axis=1).shape == (0,)
    view = xp.asarray(sample("int32", (4, 6)), device=device)[::-1, 1::2]
    np.testing.assert_array_equal(host(xp.all(view, axis=1)), np.all(sample("int32", (4, 6))[::-1, 1::2], axis=1))
    zero_d = xp.asarray(np.float32(0), device=device)
    assert not host(xp.any(zero_d)).item()


def test_all_any_bad_arguments(device: str) -> None:
    x = xp.asarray(np.ones((2, 3)), device=device)
    for f in (xp.all, xp.any):
        with pytest.raises(ValueError):
            f(x, axis=(1, -1))
        with pytest.raises(IndexError):
            f(x, axis=-3)
        with pytest.raises(TypeError):
            f(x, keepdims=None)
        with pytest.raises(TypeError):
            f([True, False])



@pytest.mark.parametrize("dtype", NUMERIC)
def test_diff_matches_numpy(device: str, dtype: str) -> None:
    a = sample(dtype, (3, 6), seed=1)
    x = xp.asarray(a, device=device)
    # NumPy in x's own dtype (integers wrap alike); bfloat16 through float32 (exact for these values).
    ref = a.astype(np.float32) if dtype == "bfloat16" else a
    for axis in (0, 1, -1):
        for n in (0, 1, 2, 3):
            out = xp.diff(x, axis=axis, n=n)
            assert out.dtype == x.dtype
            expected = np.diff(ref, axis=axis, n=n)
            np.testing.assert_array_equal(host(out), expected.astype(storage(dtype)))


def test_diff_prepend_append(device: str) -> None:
    a = sample("int32", (3, 4), seed=2)
    pre, app = sample("int32", (3, 2), seed=3), sample("int32", (3, 1), seed=4)
    x = xp.asarray(a, device=device)
    out = xp.diff(x, axis=1, n=2, prepend=xp.asarray(pre, device=device), append=xp.asarray(app, device=device))
    np.testing.assert_array_equal(host(out), np.diff(a, axis=1, n=2, prepend=pre, append=app))
    out = xp.diff(x, axis=0, append=xp.asarray(a[:1], device=device))
    np.testing.assert_array_equal(host(out), np.diff(a, axis=0, append=a[:1]))
    # prepend/append of another dtype promote with x.
    out = xp.diff(x, prepend=xp.asarray(pre.astype(np.int64), device=device))
    assert out.dtype == xp.int64


def test_diff_views_and_edges(device: str) -> None:
    a = sample("float32", (5, 6), seed=5)
    view = xp.asarray(a, device=device)[::2, ::-1]
    np.testing.assert_array_equal(host(xp.diff(view, axis=0)), np.diff(a[::2, ::-1], axis=0))
    short = xp.asarray(np.arange(2.0), device=device)
    assert xp.diff(short, n=3).shape == (0,)  # more differences than elements: empty
    assert xp.diff(short, n=10**20).shape == (0,)  # (at once: the loop had run n times)
    assert xp.diff(xp.asarray(np.zeros((0, 3)), device=device), axis=0).shape == (0, 3)


def test_diff_bad_arguments(device: str) -> None:
    x = xp.asarray(np.arange(6.0).reshape(2, 3), device=device)
    with pytest.raises(TypeError, match=r"^diff\(\) expects an array, got NoneType"):
        xp.diff(None)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        xp.diff(x, n=-1)
    with pytest.raises(TypeError, match=r"diff\(\): n must be an integer"):
        xp.diff(x, n=1.5)
    with pytest.raises(IndexError):
        xp.diff(x, axis=2)
    with pytest.raises(ValueError):
        xp.diff(xp.asarray(np.float64(1), device=device))
    with pytest.raises(ValueError, match=r"^diff\(\): prepend and append must have x's shape"):
        xp.diff(x, axis=1, prepend=xp.asarray(np.zeros((3, 1)), device=device))  # shapes differ off-axis
    with pytest.raises(TypeError):
        xp.diff(xp.asarray(np.array([True, False]), device=device))
    with pytest.raises(TypeError):
        xp.diff(x, append=np.zeros((2, 1)))
