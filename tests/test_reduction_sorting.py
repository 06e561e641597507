"""sort and argsort against NumPy and Python's sorted (stability, descending order, NaNs last)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rocm_array as xp
from helpers import host, storage

REAL = ["int8", "uint8", "int16", "uint32", "int64", "uint64", "float16", "bfloat16", "float32", "float64"]



def sample(dtype: str, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """Few distinct values, so ties are common; the extremes of integer dtypes included."""
    rng = np.random.default_rng(seed)
    if dtype.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        return rng.choice(np.array([info.min, 0, 1, 7, info.max], dtype=dtype), shape)
    a = rng.choice(np.array([-np.inf, -2.5, -0.0, 0.0, 1.0, 3.0, np.inf]), shape)
    return a.astype(storage(dtype))


def expected_order(row: list[float], descending: bool) -> list[int]:
    """Stable order by value (Python's sorted keeps ties in input order, also with reverse)."""
    return sorted(range(len(row)), key=row.__getitem__, reverse=descending)


@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("descending", [False, True])
def test_stable_argsort_and_sort(device: str, dtype: str, descending: bool) -> None:
    a = sample(dtype, (3, 4, 9))
    x = xp.asarray(a, device=device)
    for axis in (0, 1, -1):
        order = xp.argsort(x, axis=axis, descending=descending)
        assert order.dtype == xp.int64 and order.shape == a.shape
        moved = np.moveaxis(a.astype(np.float64), axis, -1).reshape(-1, a.shape[axis])
        expected = np.array([expected_order(list(r), descending) for r in moved])
        got = np.moveaxis(host(order), axis, -1).reshape(expected.shape)
        np.testing.assert_array_equal(got, expected)
        out = xp.sort(x, axis=axis, descending=descending)
        assert out.dtype == x.dtype
        np.testing.assert_array_equal(host(out), np.take_along_axis(a, host(order), axis))


@pytest.mark.parametrize("dtype", ["uint8", "int16", "bfloat16", "float32", "int64", "float64"])
@pytest.mark.parametrize("descending", [False, True])
def test_many_tiles(device: str, dtype: str, descending: bool) -> None:
    """Sizes past one tile of the GPU sort (and not a multiple of it): look-back across tiles,
    keys made of values in the first pass and values remade in the last, one or more rows."""
    rng = np.random.default_rng(7)
    if dtype.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        a = rng.integers(info.min, info.max, 9_001 * 3, dtype=dtype, endpoint=True)
    else:
        a = (rng.standard_normal(9_001 * 3) * 100).astype(storage(dtype))
        a[::97] = np.nan
        a[5::101] = -0.0
    x = xp.asarray(a, device=device)
    order = stable_order(a, descending)
    np.testing.assert_array_equal(host(xp.argsort(x, descending=descending)), order)
    wide = np.float64 if a.dtype.kind == "f" or a.dtype == storage("bfloat16") else a.dtype  # NaN == NaN
    np.testing.assert_array_equal(host(xp.sort(x, descending=descending)).astype(wide), a[order].astype(wide))
    rows = a.reshape(3, -1)
    got = host(xp.argsort(xp.asarray(rows, device=device), axis=1, descending=descending))
    np.testing.assert_array_equal(got, np.array([stable_order(r, descending) for r in rows]))


def stable_order(a: np.ndarray, descending: bool) -> np.ndarray:
    """NumPy's stable argsort, descending keeping ties (and NaNs, last) in input order."""
    if a.dtype.kind == "f" or a.dtype == storage("bfloat16"):
        wide = a.astype(np.float64)  # exact
        return np.argsort(-wide if descending else wide, kind="stable")
    if not descending:
        return np.argsort(a, kind="stable")
    return (a.size - 1 - np.argsort(a[::-1], kind="stable"))[::-1]


def assert_same_bits(got: np.ndarray, want: np.ndarray) -> None:
    """The same values and the same sign bits (so -0 and +0 where ``want`` has them); NaN matches NaN."""
    got, want = got.astype(np.float64), want.astype(np.float64)  # exact, signs and NaNs kept
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def sorted_along(a: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """``a`` sorted stably along ``axis`` (stable_order of each row)."""
    moved = np.moveaxis(a, axis, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    return np.moveaxis(np.stack([r[stable_order(r, descending)] for r in rows]).reshape(moved.shape), -1, axis)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("stable", [True, None], ids=["stable", "default"])
def test_signed_zeros_keep_their_order(device: str, dtype: str, descending: bool, stable: bool | None) -> None:
    """-0 == +0: a stable sort keeps the zeros in input order, each with its sign bit, as NumPy's
    does (the GPU's value sort put every -0 before every +0, #37): one row, past a GPU tile
    (9_001 * 3), through strided views, along either axis; NaNs and infinities about them."""
    kwargs = {"descending": descending, **({} if stable is None else {"stable": stable})}
    zeros = np.array([0.0, -0.0, 0.0, -0.0]).astype(storage(dtype))
    assert_same_bits(host(xp.sort(xp.asarray(zeros, device=device), **kwargs)), zeros)
    rng = np.random.default_rng(11)
    a = rng.choice(np.array([0.0, -0.0, 0.0, -0.0, 1.5, -1.5, np.inf, -np.inf, np.nan]), 9_001 * 3)
    a = a.astype(storage(dtype))
    x = xp.asarray(a, device=device)
    assert_same_bits(host(xp.sort(x, **kwargs)), a[stable_order(a, descending)])
    np.testing.assert_array_equal(host(xp.argsort(x, **kwargs)), stable_order(a, descending))
    assert_same_bits(host(xp.sort(x[::-3], **kwargs)), a[::-3][stable_order(a[::-3], descending)])
    m = a[:6000].reshape(40, 150)
    for view, y in ((m, xp.asarray(m, device=device)), (m.T[::2], xp.asarray(m, device=device).T[::2])):
        for axis in (0, 1):
            assert_same_bits(host(xp.sort(y, axis=axis, **kwargs)), sorted_along(view, axis, descending))


@pytest.mark.parametrize("dtype", ["int8", "int16", "uint16", "float16", "int32", "float32", "int64", "uint64"])
@pytest.mark.parametrize("spread", ["low byte", "second byte", "one value"])
def test_keys_sharing_bytes(device: str, dtype: str, spread: str) -> None:
    # Keys that differ in one byte only, or not at all: NumPy's stable order all the same.
    rng = np.random.default_rng(3)
    small = rng.integers(0, 4, 5000)
    values = {"low byte": small, "second byte": small * 256, "one value": np.full(5000, 5)}[spread]
    a = values.astype(dtype) if dtype != "int8" or spread != "second byte" else small.astype(dtype)
    x = xp.asarray(a, device=device)
    np.testing.assert_array_equal(host(xp.sort(x)), np.sort(a, kind="stable"))
    np.testing.assert_array_equal(host(xp.argsort(x, descending=True)), stable_order(a, True))
    np.testing.assert_array_equal(host(xp.unique_values(x)), np.unique(a))


@pytest.mark.parametrize("descending", [False, True])
def test_unstable_sort_is_sorted(device: str, descending: bool) -> None:
    a = sample("float32", (5, 40), seed=4)
    x = xp.asarray(a, device=device)
    out = host(xp.sort(x, stable=False, descending=descending))
    expected = np.sort(a, axis=-1)
    np.testing.assert_array_equal(out, expected[:, ::-1] if descending else expected)
    order = host(xp.argsort(x, stable=False, descending=descending))
    np.testing.assert_array_equal(np.take_along_axis(a, order, -1), out)


@pytest.mark.parametrize("descending", [False, True])
def test_nans_sort_last(device: str, descending: bool) -> None:
    a = np.array([np.nan, 2.0, -np.inf, np.nan, 0.5, np.inf], dtype=np.float32)
    out = host(xp.sort(xp.asarray(a, device=device), descending=descending))
    finite = [np.inf, 2.0, 0.5, -np.inf] if descending else [-np.inf, 0.5, 2.0, np.inf]
    np.testing.assert_array_equal(out, np.array([*finite, np.nan, np.nan], np.float32))
    order = host(xp.argsort(xp.asarray(a, device=device), descending=descending))
    np.testing.assert_array_equal(order[-2:], [0, 3])  # NaNs keep their input order


def test_views_and_zero_sized(device: str) -> None:
    a = sample("int16", (6, 8), seed=5)
    view = xp.asarray(a, device=device)[::2, ::-1]
    np.testing.assert_array_equal(host(xp.sort(view, axis=0)), np.sort(a[::2, ::-1], axis=0, kind="stable"))
    np.testing.assert_array_equal(host(xp.argsort(view)), np.argsort(a[::2, ::-1], kind="stable"))
    empty = xp.asarray(np.zeros((0, 3), np.float32), device=device)
    assert xp.sort(empty, axis=0).shape == (0, 3)
    assert xp.argsort(empty, axis=1).dtype == xp.int64


def test_bad_arguments(device: str) -> None:
    x = xp.asarray(np.arange(6.0).reshape(2, 3), device=device)
    for f in (xp.sort, xp.argsort):
        with pytest.raises(IndexError):
            f(x, axis=2)
        with pytest.raises(TypeError):
            f(x, axis=None)
        with pytest.raises(TypeError):
            f(x, descending=1)
        with pytest.raises(TypeError):
            f(x, stable="yes")
        with pytest.raises(TypeError):
            f(np.arange(3))
        with pytest.raises(ValueError):
            f(xp.asarray(np.float32(1), device=device))  # a 0-D array has no axis -1
        for dtype in ("bool", "complex64"):
            with pytest.raises(TypeError):
                f(xp.asarray(np.zeros(3, dtype), device=device))


@settings(max_examples=25, deadline=None)
@given(values=st.lists(st.integers(-3, 3), min_size=1, max_size=30), descending=st.booleans())
def test_argsort_property(values: list[int], descending: bool) -> None:
    order = host(xp.argsort(xp.asarray(np.array(values, np.int8)), descending=descending))
    assert order.tolist() == expected_order(values, descending)
