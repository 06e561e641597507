"""Statistical functions against NumPy: sum, prod, max, min, mean, var, std, cumulative_sum/prod."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rocm_array as xp
from helpers import host, small_values as sample

NUMERIC = ["int8", "uint8", "int16", "uint32", "int64", "uint64", "float16", "bfloat16",
           "float32", "float64", "complex64", "complex128"]
REAL = [d for d in NUMERIC if not d.startswith("complex")]
# The spec's sum/prod/cumulative dtype: narrow integers widen to the default (unsigned) integer.
ACCUMULATED = {"int8": "int64", "int16": "int64", "uint8": "uint64", "uint32": "uint64"}
# mean/var/std of an integer array give the default floating dtype.
FLOATED = {d: "float64" for d in ("int8", "uint8", "int16", "uint32", "int64", "uint64")}
RESULT = {"sum": ACCUMULATED, "prod": ACCUMULATED, "mean": FLOATED, "var": FLOATED, "std": FLOATED,
          "max": {}, "min": {}}
ADMITS = {"sum": NUMERIC, "prod": NUMERIC, "mean": NUMERIC, "max": REAL, "min": REAL,
          "var": REAL, "std": REAL}
NP_FUNC = {"sum": np.sum, "prod": np.prod, "mean": np.mean, "max": np.max, "min": np.min,
           "var": np.var, "std": np.std}
AXES = [(None, False), (0, True), (-1, False), ((0, 2), False), ((2, 0), True), ((), False), ((0, 1, 2), True)]


def tolerance(dtype: str) -> float:
    return {"float16": 2e-3, "bfloat16": 1e-2, "float32": 1e-5, "complex64": 1e-5}.get(dtype, 1e-12)


def reference(name: str, a: np.ndarray, out_dtype: str, **kw: object) -> np.ndarray:
    """NumPy's answer computed wide (float64 / complex128 / 64-bit ints) and cast to ``out_dtype``."""
    kind = np.dtype(out_dtype).kind if out_dtype != "bfloat16" else "f"
    wide = {"f": np.float64, "c": np.complex128, "i": np.int64, "u": np.uint64}[kind]
    r = NP_FUNC[name](a.astype(wide), **kw)
    return np.asarray(r).astype(ml_dtypes.bfloat16 if out_dtype == "bfloat16" else out_dtype)


def assert_matches(out: xp.Array, expected: np.ndarray, dtype: str) -> None:
    assert out.dtype == getattr(xp, dtype)
    got = host(out)
    assert got.shape == expected.shape
    if np.dtype(got.dtype).kind in "iub":
        np.testing.assert_array_equal(got, expected)
    else:
        wide = np.complex128 if np.iscomplexobj(got) else np.float64
        np.testing.assert_allclose(got.astype(wide), expected.astype(wide), rtol=tolerance(dtype),
                                   atol=tolerance(dtype))


@pytest.mark.parametrize("name, dtype", [(n, d) for n in sorted(NP_FUNC) for d in ADMITS[n]])
def test_reductions_match_numpy(device: str, name: str, dtype: str) -> None:
    a = sample(dtype, (3, 4, 2))
    x = xp.asarray(a, device=device)
    out_dtype = RESULT[name].get(dtype, dtype)
    for axis, keepdims in AXES:
        out = getattr(xp, name)(x, axis=axis, keepdims=keepdims)
        assert_matches(out, reference(name, a, out_dtype, axis=axis, keepdims=keepdims), out_dtype)
        assert out.device == x.device


@pytest.mark.parametrize("name", sorted(NP_FUNC))
def test_non_contiguous_view(device: str, name: str) -> None:
    a = sample("float32", (4, 6, 5), seed=1)
    view = xp.asarray(a, device=device)[1::2, :, ::-2]
    assert not view.is_contiguous
    for axis in (None, 1, (0, 2)):
        expected = reference(name, a[1::2, :, ::-2], "float32", axis=axis)
        assert_matches(getattr(xp, name)(view, axis=axis), expected, "float32")


@pytest.mark.parametrize("name", ["var", "std"])
@pytest.mark.parametrize("correction", [0, 1, 2.5])
def test_correction(device: str, name: str, correction: float) -> None:
    a = sample("float64", (5, 4))
    out = getattr(xp, name)(xp.asarray(a, device=device), axis=0, correction=correction)
    assert_matches(out, NP_FUNC[name](a, axis=0, ddof=correction), "float64")


@pytest.mark.parametrize("name", ["var", "std"])
def test_too_few_elements_for_correction_is_nan(device: str, name: str) -> None:
    x = xp.asarray(sample("float32", (3, 2)), device=device)
    out = host(getattr(xp, name)(x, axis=1, correction=2))
    assert out.shape == (3,) and np.isnan(out).all()
    assert not np.isnan(host(getattr(xp, name)(x, axis=1, correction=1.5))).any()


@pytest.mark.parametrize("name", ["var", "std", "mean", "sum", "max", "min"])
@pytest.mark.parametrize("value", [math.nan, math.inf])
def test_one_non_finite_element_propagates(device: str, name: str, value: float) -> None:
    """A lone NaN (or inf) reduces like NumPy's: var/std of [inf] is NaN, not 0."""
    for a in (np.array(value), np.array([1.0, 2.0, value, 4.0])):
        with np.errstate(invalid="ignore"):
            expected = getattr(np, name)(a)
        out = host(getattr(xp, name)(xp.asarray(a, device=device)))
        np.testing.assert_array_equal(out, expected)


def test_complex_mean_divides_each_part(device: str) -> None:
    # An infinite or NaN part leaves its partner's mean alone on every device (NumPy, dividing by
    # count + 0j, gives inf + nanj; the GPU's kernel divides the parts).
    for values, want in (([complex(math.inf, 0), 1j], complex(math.inf, 0.5)),
                         ([complex(math.nan, 0), 1j, 1j], complex(math.nan, 2 / 3))):
        got = complex(host(xp.mean(xp.asarray(values, device=device))))
        assert (math.isnan(got.real) if math.isnan(want.real) else got.real == want.real) and got.imag == want.imag


@pytest.mark.parametrize("name", ["sum", "prod"])
@pytest.mark.parametrize("dtype, requested", [("int8", "int8"), ("int8", "int16"), ("uint8", "float32"),
                                              ("float32", "float64"), ("float64", "float16"),
                                              ("int32", "complex64"), ("float16", "bfloat16")])
def test_dtype_argument(device: str, name: str, dtype: str, requested: str) -> None:
    a = sample(dtype, (3, 5))
    out = getattr(xp, name)(xp.asarray(a, device=device), axis=1, dtype=getattr(xp, requested))
    # The spec: the input is cast to dtype before combining (integers wrap there).
    cast = a.astype(ml_dtypes.bfloat16 if requested == "bfloat16" else requested)
    assert_matches(out, reference(name, cast, requested, axis=1), requested)


def test_half_precision_accumulates_in_float32(device: str) -> None:
    for dtype in (xp.float16, xp.bfloat16):
        ones = xp.asarray(np.ones(4096, dtype=dtype.numpy), device=device)
        assert float(xp.sum(ones)) == 4096.0  # a float16 running sum stops at 2048
        assert float(xp.mean(ones)) == 1.0


def test_integer_sum_wraps_in_result_dtype(device: str) -> None:
    x = xp.asarray(np.array([2**62, 2**62], dtype=np.int64), device=device)
    assert int(xp.sum(x)) == -(2**63)
    assert int(xp.sum(xp.asarray(np.array([200, 100], np.uint8), device=device))) == 300


@pytest.mark.parametrize("dtype", ["int16", "float32", "complex64", "bfloat16"])
def test_zero_dimensional(device: str, dtype: str) -> None:
    a = sample(dtype, ())
    x = xp.asarray(a, device=device)
    for name in ("sum", "prod", "mean"):
        out_dtype = RESULT[name].get(dtype, dtype)
        for axis in (None, ()):
            out = getattr(xp, name)(x, axis=axis)
            assert out.shape == ()
            assert_matches(out, reference(name, a, out_dtype), out_dtype)
    with pytest.raises(IndexError):
        xp.sum(x, axis=0)


@pytest.mark.parametrize("dtype", ["int8", "float32", "complex128"])
def test_empty_reductions(device: str, dtype: str) -> None:
    x = xp.asarray(np.zeros((0, 3), dtype=dtype), device=device)
    out_dtype = ACCUMULATED.get(dtype, dtype)
    assert_matches(xp.sum(x, axis=0), np.zeros(3, out_dtype), out_dtype)
    assert_matches(xp.prod(x, axis=(0,), keepdims=True), np.ones((1, 3), out_dtype), out_dtype)
    assert_matches(xp.sum(x), np.zeros((), out_dtype), out_dtype)
    # Reducing the non-empty axis leaves an empty result.
    assert xp.sum(x, axis=1).shape == (0,)
    mean = host(xp.mean(x, axis=0))
    assert mean.shape == (3,) and np.isnan(mean).all()
    if dtype.startswith("complex"):  # the spec: NaN + NaN j
        assert np.isnan(mean.imag).all()
    if not dtype.startswith("complex"):
        for name in ("max", "min"):
            with pytest.raises(ValueError):
                getattr(xp, name)(x, axis=0)
        assert getattr(xp, "max")(x, axis=1).shape == (0,)


@pytest.mark.parametrize("name, dtype", [("mean", "bool"),
                                         ("max", "complex64"), ("min", "bool"), ("var", "complex128"),
                                         ("std", "bool")])
def test_rejected_dtypes(device: str, name: str, dtype: str) -> None:
    x = xp.asarray(np.zeros(3, dtype=dtype), device=device)
    with pytest.raises(TypeError):
        getattr(xp, name)(x)


@pytest.mark.parametrize("name", sorted(NP_FUNC))
def test_bad_arguments(device: str, name: str) -> None:
    f = getattr(xp, name)
    x = xp.asarray(sample("float32", (2, 3)), device=device)
    with pytest.raises(TypeError):
        f(np.zeros(3))  # not an Array
    with pytest.raises(ValueError):
        f(x, axis=(0, -2))  # the same axis twice
    for bad in (2, -3, (0, 2)):
        with pytest.raises(ValueError):
            f(x, axis=bad)
        with pytest.raises(IndexError):
            f(x, axis=bad)
    for bad in (1.0, True, "0"):
        with pytest.raises(TypeError):
            f(x, axis=bad)
    with pytest.raises(TypeError):
        f(x, keepdims=1)
    with pytest.raises(TypeError):
        f(x, bogus=1)


def test_bad_dtype_and_correction(device: str) -> None:
    x = xp.asarray(sample("complex64", (3,)), device=device)
    with pytest.raises(TypeError):
        xp.sum(x, dtype=xp.float64)  # would discard the imaginary part
    with pytest.raises(TypeError):
        xp.sum(x, dtype=xp.bool)
    with pytest.raises(TypeError):
        xp.prod(x, dtype="complex64")
    y = xp.asarray(sample("float32", (3,)), device=device)
    for bad in ("1", True, None):
        with pytest.raises(TypeError):
            xp.var(y, correction=bad)


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(0, 4), min_size=1, max_size=4).map(tuple), data=st.data())
def test_sum_axes_property(shape: tuple[int, ...], data: st.DataObject) -> None:
    axes = data.draw(st.none() | st.sets(st.integers(-len(shape), len(shape) - 1)).filter(
        lambda s: len({a % len(shape) for a in s}) == len(s)).map(tuple))
    keepdims = data.draw(st.booleans())
    a = sample("int32", shape, seed=math.prod(shape))
    out = xp.sum(xp.asarray(a), axis=axes, keepdims=keepdims)
    assert_matches(out, np.sum(a, axis=axes, keepdims=keepdims, dtype=np.int64), "int64")


# -- cumulative_sum / cumulative_prod ------------------------------------------------------

SCANS = {"cumulative_sum": (np.cumsum, 0), "cumulative_prod": (np.cumprod, 1)}


@pytest.mark.parametrize("name", sorted(SCANS))
@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize("include_initial", [False, True])
def test_cumulative_match_numpy(device: str, name: str, dtype: str, include_initial: bool) -> None:
    func, identity = SCANS[name]
    a = sample(dtype, (3, 4))
    x = xp.asarray(a, device=device)
    out_dtype = ACCUMULATED.get(dtype, dtype)
    for axis in (0, 1, -1):
        out = getattr(xp, name)(x, axis=axis, include_initial=include_initial)
        wide = a.astype(np.complex128 if dtype.startswith("complex") else
                        np.float64 if "float" in dtype else np.uint64 if dtype.startswith("u") else np.int64)
        expected = func(wide, axis=axis)
        if include_initial:
            lead = np.full_like(np.take(expected, [0], axis=axis), identity)
            expected = np.concatenate([lead, expected], axis=axis)
        assert_matches(out, expected.astype(ml_dtypes.bfloat16 if dtype == "bfloat16" else out_dtype),
                       out_dtype)


@pytest.mark.parametrize("name", sorted(SCANS))
def test_cumulative_shapes_and_views(device: str, name: str) -> None:
    func, identity = SCANS[name]
    f = getattr(xp, name)
    a = sample("float64", (5, 6))
    assert_matches(f(xp.asarray(a[0], device=device)), func(a[0]), "float64")  # 1-D: axis optional
    view = xp.asarray(a, device=device)[::2, ::-1]
    assert_matches(f(view, axis=1), func(a[::2, ::-1], axis=1), "float64")
    assert_matches(f(view, axis=0, dtype=xp.float32), func(a[::2, ::-1], axis=0).astype(np.float32), "float32")
    empty = xp.asarray(np.zeros((0, 3)), device=device)
    assert f(empty, axis=0).shape == (0, 3)
    assert_matches(f(empty, axis=0, include_initial=True), np.full((1, 3), identity, np.float64), "float64")


@pytest.mark.parametrize("name", sorted(SCANS))
def test_cumulative_bad_arguments(device: str, name: str) -> None:
    f = getattr(xp, name)
    x = xp.asarray(sample("float32", (2, 3)), device=device)
    with pytest.raises(ValueError):
        f(x)  # axis is required beyond 1-D
    with pytest.raises(ValueError):
        f(xp.asarray(np.float32(1), device=device))
    with pytest.raises(IndexError):
        f(x, axis=2)
    with pytest.raises(TypeError):
        f(x, axis=(0,))
    assert f(xp.asarray(np.array([True]), device=device)).dtype is xp.int64  # bool counts, as in NumPy
    with pytest.raises(TypeError):
        f(x, axis=0, include_initial=None)


def test_a_misspelt_keyword_names_the_one_meant(device: str) -> None:
    with pytest.raises(TypeError, match=r"sum\(\) got unexpected keyword argument\(s\) keepdim \(did you mean keepdims\?\); "
                                        r"it takes dtype, axis, keepdims"):
        xp.sum(xp.ones(3, device=device), keepdim=True)
