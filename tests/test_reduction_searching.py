"""Searching functions against NumPy: argmax, argmin, count_nonzero, nonzero, searchsorted."""

from __future__ import annotations

import numpy as np
import pytest

import rocm_array as xp
from helpers import host, storage

REAL = ["int8", "uint8", "int16", "uint32", "int64", "uint64", "float16", "bfloat16", "float32", "float64"]
ALL = ["bool", *REAL, "complex64", "complex128"]



def sample(dtype: str, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """Few distinct values, so ties and zeros are common."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.integers(0, 2, shape)
    return np.asarray(a).astype(storage(dtype))


def assert_index(out: xp.Array, expected: np.ndarray) -> None:
    assert out.dtype == xp.int64
    np.testing.assert_array_equal(host(out), expected)
    assert host(out).shape == np.shape(expected)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("dtype", REAL)
def test_argmax_argmin_match_numpy(device: str, name: str, dtype: str) -> None:
    a = sample(dtype, (4, 5, 3))
    x = xp.asarray(a, device=device)
    f, ref = getattr(xp, name), getattr(np, name)
    for axis in (None, 0, 1, -1):
        for keepdims in (False, True):
            # NumPy also returns the first occurrence of the extreme value.
            assert_index(f(x, axis=axis, keepdims=keepdims), ref(a.astype(np.float64), axis=axis,
                                                                 keepdims=keepdims))


def test_argmax_first_occurrence_and_views(device: str) -> None:
    a = np.array([[1.0, 5.0, 5.0, 0.0], [-1.0, -1.0, 2.0, 2.0]], dtype=np.float32)
    x = xp.asarray(a, device=device)
    assert_index(xp.argmax(x, axis=1), [1, 2])
    assert_index(xp.argmin(x, axis=1), [3, 0])
    assert_index(xp.argmax(x), 1)
    assert_index(xp.argmin(x, keepdims=True), [[4]])
    view = x[:, ::-1]
    assert_index(xp.argmax(view, axis=1), np.argmax(a[:, ::-1], axis=1))
    assert_index(xp.argmin(view, axis=0), np.argmin(a[:, ::-1], axis=0))


def test_argmax_bad_arguments(device: str) -> None:
    x = xp.asarray(sample("float32", (2, 3)), device=device)
    with pytest.raises(TypeError):
        xp.argmax(x, axis=(0, 1))  # one axis only
    with pytest.raises(IndexError):
        xp.argmin(x, axis=2)
    with pytest.raises(ValueError):
        xp.argmax(xp.asarray(np.zeros((0, 3)), device=device), axis=0)
    with pytest.raises(ValueError):
        xp.argmin(xp.asarray(np.zeros(0), device=device))
    assert xp.argmax(xp.asarray(np.zeros((3, 0)), device=device), axis=0).shape == (0,)
    for dtype in ("bool", "complex64"):
        with pytest.raises(TypeError):
            xp.argmax(xp.asarray(np.zeros(3, dtype), device=device))


@pytest.mark.parametrize("dtype", ALL)
def test_count_nonzero_matches_numpy(device: str, dtype: str) -> None:
    a = sample(dtype, (3, 4, 2), seed=2)
    x = xp.asarray(a, device=device)
    for axis in (None, 1, (0, 2), (), (-1, 0, 1)):
        for keepdims in (False, True):
            expected = np.count_nonzero(a.astype(np.complex128), axis=axis, keepdims=keepdims)
            assert_index(xp.count_nonzero(x, axis=axis, keepdims=keepdims), expected)


def test_count_nonzero_special_values(device: str) -> None:
    a = np.array([0j, 1j, complex(0.0, -0.0), np.nan, -0.0], dtype=np.complex128)
    assert_index(xp.count_nonzero(xp.asarray(a, device=device)), 2)  # imaginary part, NaN count
    assert_index(xp.count_nonzero(xp.asarray(np.zeros((0, 2)), device=device), axis=0), [0, 0])
    view = xp.asarray(np.arange(12).reshape(3, 4) % 3, device=device)[::2, 1:]
    assert_index(xp.count_nonzero(view, axis=1), np.count_nonzero((np.arange(12).reshape(3, 4) % 3)[::2, 1:],
                                                                  axis=1))


@pytest.mark.parametrize("dtype", ALL)
def test_nonzero_matches_numpy(device: str, dtype: str) -> None:
    for shape in ((7,), (3, 4), (2, 3, 2), (0, 3)):
        a = sample(dtype, shape, seed=3)
        out = xp.nonzero(xp.asarray(a, device=device))
        expected = np.nonzero(a.astype(np.complex128))
        assert len(out) == len(expected)
        for o, e in zip(out, expected):
            assert_index(o, e)


def test_nonzero_view_and_zero_dimensional(device: str) -> None:
    a = np.arange(20).reshape(4, 5) % 3
    out = xp.nonzero(xp.asarray(a, device=device)[::-1, ::2])
    for o, e in zip(out, np.nonzero(a[::-1, ::2])):
        assert_index(o, e)
    with pytest.raises(ValueError):
        xp.nonzero(xp.asarray(np.int32(1), device=device))
    with pytest.raises(TypeError):
        xp.nonzero(a)


@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_matches_numpy(device: str, dtype: str, side: str) -> None:
    base = np.array([0, 1, 1, 2, 4, 4, 5]).astype(storage(dtype))
    v = np.array([[0, 1, 3], [4, 5, 2]]).astype(base.dtype)
    x1, x2 = xp.asarray(base, device=device), xp.asarray(v, device=device)
    expected = np.searchsorted(base.astype(np.float64), v.astype(np.float64), side=side)
    assert_index(xp.searchsorted(x1, x2, side=side), expected)
    # The same through a sorter over a shuffled x1.
    perm = np.random.default_rng(0).permutation(base.size)
    shuffled = xp.asarray(base[perm], device=device)
    sorter = xp.asarray(np.argsort(base[perm].astype(np.float64), kind="stable"), device=device)
    assert_index(xp.searchsorted(shuffled, x2, side=side, sorter=sorter), expected)
    # A Python scalar is a 0-D array of x1's dtype.
    assert_index(xp.searchsorted(x1, 1, side=side), np.searchsorted(base.astype(np.float64), 1, side=side))


def test_searchsorted_floats_views_and_scalars(device: str) -> None:
    base = np.array([-np.inf, -1.5, 0.0, 2.0, np.inf, np.nan])
    x1 = xp.asarray(base, device=device)
    v = np.array([np.nan, 3.0, -2.0, 0.0, 2.0])
    for side in ("left", "right"):
        # NaNs sort last, as in sort(), so they insert at the end.
        assert_index(xp.searchsorted(x1, xp.asarray(v, device=device), side=side),
                     np.searchsorted(base, v, side=side))
    assert_index(xp.searchsorted(x1, 1), 3)  # an int scalar with a float array
    assert_index(xp.searchsorted(x1[::2], -1.0), 1)  # a strided x1: [-inf, 0, inf]
    assert_index(xp.searchsorted(xp.asarray(np.arange(3), device=device), 1.5), 2)  # float beside ints, as NumPy


def test_searchsorted_bad_arguments(device: str) -> None:
    x1 = xp.asarray(np.arange(4.0), device=device)
    with pytest.raises(ValueError):
        xp.searchsorted(xp.asarray(np.zeros((2, 2)), device=device), x1)
    with pytest.raises(ValueError):
        xp.searchsorted(x1, x1, side="middle")
    with pytest.raises(TypeError):
        xp.searchsorted(x1, x1, sorter=xp.asarray(np.arange(4.0), device=device))
    with pytest.raises(ValueError):
        xp.searchsorted(x1, x1, sorter=xp.asarray(np.arange(3), device=device))
    for bad, dtype in ((9, np.int64), (-1, np.int8), (2**40, np.int64), (2**32 + 1, np.uint64)):
        # (read on the device, an out-of-range position had faulted or given garbage)
        sorter = xp.asarray(np.array([0, 1, 2, bad], dtype), device=device)
        with pytest.raises(ValueError, match=rf"^searchsorted\(\): sorter holds {bad}, outside x1's positions 0 to 3"):
            xp.searchsorted(x1, x1, sorter=sorter)
    with pytest.raises(TypeError):
        xp.searchsorted(x1, xp.asarray(np.zeros(2, np.complex64), device=device))
    with pytest.raises(TypeError):
        xp.searchsorted(np.arange(4.0), x1)
