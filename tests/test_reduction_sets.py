"""Set functions against NumPy: unique_all / unique_counts / unique_inverse / unique_values, isin."""

from __future__ import annotations

import numpy as np
import pytest

import rocm_array as xp
from helpers import host, storage

ALL = ["bool", "int8", "uint8", "int16", "uint32", "int64", "uint64", "float16", "bfloat16", "float32",
       "float64", "complex64", "complex128"]



def sample(dtype: str, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4, shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.integers(0, 2, shape)
    return np.asarray(a).astype(storage(dtype))


def check_unique_all(x: xp.Array, a: np.ndarray) -> None:
    """values sorted and distinct, first indices, inverse rebuilding a, counts: as np.unique."""
    out = xp.unique_all(x)
    values, first, inverse, counts = np.unique(a.reshape(-1), return_index=True, return_inverse=True,
                                               return_counts=True, equal_nan=False)
    assert out.values.dtype == x.dtype
    for got in (out.indices, out.inverse_indices, out.counts):
        assert got.dtype == xp.int64
    np.testing.assert_array_equal(host(out.values), values)
    np.testing.assert_array_equal(host(out.indices), first)
    np.testing.assert_array_equal(host(out.inverse_indices), inverse.reshape(a.shape))
    np.testing.assert_array_equal(host(out.counts), counts)


@pytest.mark.parametrize("dtype", ALL)
def test_unique_all_matches_numpy(device: str, dtype: str) -> None:
    for shape in ((9,), (3, 4), (2, 0), ()):
        a = sample(dtype, shape)
        check_unique_all(xp.asarray(a, device=device), a)


@pytest.mark.parametrize("dtype", ["int32", "float32", "complex64"])
def test_unique_variants_agree(device: str, dtype: str) -> None:
    a = sample(dtype, (4, 5), seed=1)
    x = xp.asarray(a, device=device)
    full = xp.unique_all(x)
    counts = xp.unique_counts(x)
    inverse = xp.unique_inverse(x)
    values = xp.unique_values(x)
    for v in (counts.values, inverse.values, values):
        np.testing.assert_array_equal(host(v), host(full.values))
    np.testing.assert_array_equal(host(counts.counts), host(full.counts))
    np.testing.assert_array_equal(host(inverse.inverse_indices), host(full.inverse_indices))
    assert counts._fields == ("values", "counts")
    assert inverse._fields == ("values", "inverse_indices")
    assert full._fields == ("values", "indices", "inverse_indices", "counts")


def test_nans_distinct_signed_zeros_one(device: str) -> None:
    a = np.array([np.nan, 0.0, -0.0, 1.0, np.nan, 1.0], dtype=np.float32)
    out = xp.unique_counts(xp.asarray(a, device=device))
    values, counts = host(out.values), host(out.counts)
    assert values.size == 4 and np.isnan(values[2:]).all()
    np.testing.assert_array_equal(counts, [2, 2, 1, 1])
    z = np.array([complex(np.nan, 0), complex(np.nan, 0), 1j], dtype=np.complex64)
    assert host(xp.unique_values(xp.asarray(z, device=device))).size == 3


def test_unique_of_view(device: str) -> None:
    a = sample("int16", (6, 7), seed=2)
    check_unique_all(xp.asarray(a, device=device)[::2, ::-3], a[::2, ::-3])


def test_unique_rejects_non_arrays() -> None:
    for f in (xp.unique_all, xp.unique_counts, xp.unique_inverse, xp.unique_values):
        with pytest.raises(TypeError):
            f([1, 2, 2])


@pytest.mark.parametrize("dtypes", [("int8", "int8"), ("int16", "uint8"), ("uint32", "int64"),
                                    ("float32", "float64"), ("bfloat16", "float32")])
@pytest.mark.parametrize("invert", [False, True])
def test_isin_matches_numpy(device: str, dtypes: tuple[str, str], invert: bool) -> None:
    a1, a2 = sample(dtypes[0], (3, 4), seed=3), sample(dtypes[1], (2,), seed=4)
    out = xp.isin(xp.asarray(a1, device=device), xp.asarray(a2, device=device), invert=invert)
    assert out.dtype == xp.bool and out.shape == a1.shape
    np.testing.assert_array_equal(host(out), np.isin(a1.astype(np.float64), a2.astype(np.float64),
                                                     invert=invert))


def test_isin_scalars_views_and_nans(device: str) -> None:
    a = np.arange(12).reshape(3, 4)
    x = xp.asarray(a, device=device)
    np.testing.assert_array_equal(host(xp.isin(x, 5)), a == 5)
    out = xp.isin(5, x)
    assert out.shape == () and bool(out)
    assert not bool(xp.isin(99, x))
    np.testing.assert_array_equal(host(xp.isin(x[:, ::-2], x[0])), np.isin(a[:, ::-2], a[0]))
    f = xp.asarray(np.array([np.nan, 1.0, -0.0]), device=device)
    np.testing.assert_array_equal(host(xp.isin(f, f)), [False, True, True])  # NaN equals nothing
    np.testing.assert_array_equal(host(xp.isin(f, 0.0)), [False, False, True])


def test_isin_bad_arguments(device: str) -> None:
    x = xp.asarray(np.arange(3), device=device)
    with pytest.raises(TypeError):
        xp.isin(1, 2)  # no array
    with pytest.raises(TypeError):
        xp.isin(x, xp.asarray(np.arange(3, dtype=np.uint64), device=device))  # int64 and uint64

    with pytest.raises(TypeError):
        xp.isin(x, x, invert=None)
    with pytest.raises(OverflowError):
        xp.isin(xp.asarray(np.arange(3, dtype=np.int8), device=device), 1000)
