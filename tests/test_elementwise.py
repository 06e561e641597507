"""The elementwise functions (every row of the table, clip, where) against NumPy on every device."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rocm_array as xp
from helpers import host
from rocm_array.dtypes import ALL, CATEGORIES, PROMOTION, DType
from rocm_array_plugins.elementwise.table import UFUNCS

UNARY = [u for u in UFUNCS if u.arity == 1]
BINARY = [u for u in UFUNCS if u.arity == 2]
HALF = (xp.float16, xp.bfloat16)
RETURNS_BOOL = {"isfinite", "isinf", "isnan", "signbit", "logical_not", "logical_and", "logical_or",
                "logical_xor", "equal", "not_equal", "greater", "greater_equal", "less", "less_equal"}
RETURNS_REAL = {"abs", "real", "imag"}
# Inputs where NumPy departs from the standard (tested with literal values below), and
# operand ranges where results are defined: shift counts below the bit width, integer exponents >= 0.
FINITE_ONLY = {"floor_divide", "expm1"}
COUNTS = {"pow", "bitwise_left_shift", "bitwise_right_shift"}
_SPECIAL = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0]



def sample(dtype: DType, shape: tuple[int, ...], seed: int = 0, *, finite: bool = False,
           count: bool = False) -> np.ndarray:
    """Values of ``dtype`` with the float special values mixed in (unless ``finite``);
    ``count``: small non-negative integers (shift counts, exponents)."""
    rng = np.random.default_rng(seed)
    n = math.prod(shape)
    if dtype == xp.bool:
        a = rng.integers(0, 2, n).astype(bool)
    elif dtype.kind in "iu":
        lo, hi = (0, dtype.itemsize * 8) if count else (-100 if dtype.kind == "i" else 0, 100)
        a = rng.integers(lo, hi, n)
    else:
        pool = np.array([v for v in _SPECIAL if not finite or math.isfinite(v)])
        parts = [np.where(rng.random(n) < 0.4, rng.choice(pool, n), rng.uniform(-4, 4, n))
                 for _ in range(2 if dtype.kind == "c" else 1)]
        a = parts[0] if dtype.kind == "f" else np.array(parts[0], np.complex128)
        if dtype.kind == "c":
            a.imag = parts[1]
    return a.astype(dtype.numpy).reshape(shape)


def expected_dtype(name: str, dtype: DType) -> DType:
    if name in RETURNS_BOOL:
        return xp.bool
    if name in RETURNS_REAL:
        return {xp.complex64: xp.float32, xp.complex128: xp.float64}.get(dtype, dtype)
    return dtype


def reference(name: str, *arrays: np.ndarray) -> np.ndarray:
    """NumPy's result; half types in float64, so the device's float32 compute is checked too
    (but nextafter steps in the half type itself)."""
    if arrays[0].dtype in (np.float16, ml_dtypes.bfloat16) and name != "nextafter":
        arrays = tuple(a.astype(np.float64) for a in arrays)
    with np.errstate(all="ignore"):
        return np.asarray(getattr(np, name)(*arrays))


def left_open(name: str, a: np.ndarray, b: np.ndarray, dtype: DType) -> np.ndarray | None:
    """Where the standard leaves a binary result to the implementation: a complex divided by
    zero (divide's "remaining cases"; C99's one-infinity model and the textbook formula differ)."""
    if name == "divide" and dtype.kind == "c":
        return np.broadcast_to(b == 0, np.broadcast_shapes(a.shape, b.shape))
    return None


def growth(name: str, a: np.ndarray, b: np.ndarray, dtype: DType) -> float:
    """How much rounding errors may grow in a binary result: complex pow is exp(b * log(a)) (in
    NumPy too), whose relative error is |b * log(a)| times that of its argument."""
    if name != "pow" or dtype.kind != "c":
        return 1.0
    with np.errstate(all="ignore"):
        w = np.abs(b.astype(np.complex128) * np.log(a.astype(np.complex128)))
    w = w[np.isfinite(w)]
    return max(1.0, float(w.max())) if w.size else 1.0


def assert_matches(out: xp.Array, ref: np.ndarray, dtype: DType, open_: np.ndarray | None = None,
                   growth: float = 1.0) -> None:
    """``out`` equals NumPy's ``ref`` within 4 ulp (times ``growth``); where ``open_`` is set, only
    non-finite as NumPy's is."""
    assert out.dtype == dtype
    got = host(out)
    assert got.shape == ref.shape
    if open_ is not None and open_.any():
        assert not np.isfinite(got[open_]).any()
        got, ref = got[~open_], ref[~open_]
    with np.errstate(all="ignore"):
        ref = ref.astype(dtype.numpy)  # a reference computed wider overflows where the dtype does
    if dtype.kind in "biu":
        np.testing.assert_array_equal(got, ref)
        return
    eps = float(xp.finfo(dtype).eps)
    np.testing.assert_allclose(got.astype(np.complex128), ref.astype(np.complex128),
                               rtol=4 * eps * growth, atol=4 * eps * growth, equal_nan=True)


def admissible(fns: list) -> list:
    return [pytest.param(u, d, id=f"{u.name}-{d.name}") for u in fns for d in ALL if d in CATEGORIES[u.category]]


@pytest.mark.parametrize(("fn", "dtype"), admissible(UNARY))
def test_unary_matches_numpy(device: str, fn, dtype: DType) -> None:
    a = sample(dtype, (3, 7), finite=fn.name in FINITE_ONLY)
    out = getattr(xp, fn.name)(xp.asarray(a, device=device))
    assert_matches(out, reference(fn.name, a), expected_dtype(fn.name, dtype))


@pytest.mark.parametrize(("fn", "dtype"), admissible(BINARY))
def test_binary_matches_numpy_with_broadcasting(device: str, fn, dtype: DType) -> None:
    finite = fn.name in FINITE_ONLY
    a = sample(dtype, (2, 1, 6), 1, finite=finite)
    b = sample(dtype, (3, 1), 2, finite=finite, count=fn.name in COUNTS)
    out = getattr(xp, fn.name)(xp.asarray(a, device=device), xp.asarray(b, device=device))
    assert out.shape == (2, 3, 6)
    assert_matches(out, reference(fn.name, a, b), expected_dtype(fn.name, dtype), left_open(fn.name, a, b, dtype),
                   growth(fn.name, a, b, dtype))


@pytest.mark.parametrize("fn", UFUNCS, ids=lambda u: u.name)
def test_rejects_other_dtypes(device: str, fn) -> None:
    for d in ALL:
        if d not in CATEGORIES[fn.category] and not (fn.integers and d.kind in "iu"):
            x = xp.asarray(np.ones(2, d.numpy), device=device)
            with pytest.raises(TypeError, match=fn.name):
                getattr(xp, fn.name)(*[x] * fn.arity)


def _promotable_pairs() -> list[tuple]:
    return [(u, a, b) for u in BINARY for a in ALL for b in ALL
            if a in CATEGORIES[u.category] and b in CATEGORIES[u.category] and (a, b) in PROMOTION]


# ``device`` is a plain string parameter: sharing it across examples is safe.
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=st.sampled_from(_promotable_pairs()), seed=st.integers(0, 2**16))
def test_binary_mixed_dtypes_promote(device: str, case: tuple, seed: int) -> None:
    fn, d1, d2 = case
    dtype = PROMOTION[d1, d2]
    finite, count = fn.name in FINITE_ONLY, fn.name in COUNTS
    a, b = sample(d1, (4,), seed, finite=finite), sample(d2, (4,), seed + 1, finite=finite, count=count)
    out = getattr(xp, fn.name)(xp.asarray(a, device=device), xp.asarray(b, device=device))
    ref = reference(fn.name, a.astype(dtype.numpy), b.astype(dtype.numpy))
    assert_matches(out, ref, expected_dtype(fn.name, dtype), left_open(fn.name, a, b, dtype),
                   growth(fn.name, a, b, dtype))


def _scalars_for(dtype: DType) -> list:
    if dtype == xp.bool:
        return [True]
    if dtype.kind in "iu":
        return [3]
    return [3, -1.5] + ([2 - 1j] if dtype.kind == "c" else [])


@pytest.mark.parametrize("fn", [u for u in BINARY if u.name not in COUNTS], ids=lambda u: u.name)
def test_python_scalars_on_either_side(device: str, fn) -> None:
    for dtype in (xp.bool, xp.int16, xp.uint8, xp.float32, xp.complex128):
        if dtype not in CATEGORIES[fn.category]:
            continue
        x = xp.asarray(sample(dtype, (5,), 3, finite=True), device=device)
        f = getattr(xp, fn.name)
        for s in _scalars_for(dtype):
            like = xp.asarray(s, dtype=dtype, device=device)
            assert_matches(f(x, s), host(f(x, like)), expected_dtype(fn.name, dtype))
            assert_matches(f(s, x), host(f(like, x)), expected_dtype(fn.name, dtype))


def test_complex_scalar_with_real_floating_array(device: str) -> None:
    x = xp.asarray([1.0, 2.0], dtype=xp.float32, device=device)
    out = xp.multiply(x, 1j)
    assert out.dtype == xp.complex64
    np.testing.assert_array_equal(host(out), [1j, 2j])
    assert xp.add(xp.asarray([1.0], device=device), 1j).dtype == xp.complex128


@pytest.mark.parametrize("shape", [(), (0,), (2, 0, 3)])
def test_zero_d_and_empty(device: str, shape: tuple[int, ...]) -> None:
    a = sample(xp.float64, shape, 4)
    x = xp.asarray(a, device=device)
    assert_matches(xp.sin(x), reference("sin", a), xp.float64)
    assert_matches(xp.add(x, x), reference("add", a, a), xp.float64)
    assert_matches(xp.less(x, 1.0), a < 1.0, xp.bool)
    assert xp.add(x, xp.ones((4,) + shape, device=device)).shape == (4,) + shape


def test_non_contiguous_views(device: str) -> None:
    a = sample(xp.float32, (6, 8), 5)
    x = xp.asarray(a, device=device)
    views = [(x[::2, 1::3], a[::2, 1::3]), (x.T, a.T), (x[::-1, ::-2], a[::-1, ::-2])]
    for v, va in views:
        assert_matches(xp.exp(v), reference("exp", va), xp.float32)
        assert_matches(xp.maximum(v, v[:1]), reference("maximum", va, va[:1]), xp.float32)


@pytest.mark.parametrize("bad", [
    lambda x: xp.add(x),  # arity
    lambda x: xp.sin(x, x),
    lambda x: xp.add(x, [1, 2]),  # a list is not an array
    lambda x: xp.add(1, 2),  # at least one array
    lambda x: xp.add(x, True),  # a bool does not meet a numeric array
    lambda x: xp.logical_and(x, x),
    lambda x: xp.add(x, xp.asarray([True], device=x.device)),
    lambda x: xp.add(xp.asarray([1], dtype=xp.uint64, device=x.device), xp.asarray([1], dtype=xp.int8, device=x.device)),
])
def test_bad_arguments_are_type_errors(device: str, bad) -> None:
    with pytest.raises(TypeError):
        bad(xp.asarray([1, 2], dtype=xp.int8, device=device))


def test_bad_values(device: str) -> None:
    x = xp.asarray([1, 2], dtype=xp.int8, device=device)
    with pytest.raises(ValueError):
        xp.add(x, xp.ones(3, dtype=xp.int8, device=device))
    with pytest.raises(OverflowError):
        xp.add(x, 300)


def assert_same_zero_signs(got: np.ndarray, want: list) -> None:
    zero = np.asarray(want) == 0
    np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(np.asarray(want)[zero]))


# -- the standard's special cases where NumPy departs from it, and defined integer results ----------

def _values(name: str, a: list, b: list, dtype: DType, device: str) -> np.ndarray:
    return host(getattr(xp, name)(xp.asarray(a, dtype=dtype, device=device), xp.asarray(b, dtype=dtype, device=device)))


@pytest.mark.parametrize("dtype", [xp.float32, xp.float64, xp.bfloat16])
def test_floor_divide_special_cases(device: str, dtype: DType) -> None:
    inf, nan = math.inf, math.nan
    a = [inf, inf, -inf, -inf, 5.0, 5.0, -5.0, -5.0, inf, 0.0, 1.0, -1.0, 1.0, nan, 7.0, -7.0]
    b = [2.0, -2.0, 2.0, -2.0, inf, -inf, inf, -inf, inf, 0.0, 0.0, 0.0, -0.0, 1.0, 2.0, 2.0]
    want = [inf, -inf, -inf, inf, 0.0, -0.0, -0.0, 0.0, nan, nan, inf, -inf, -inf, nan, 3.0, -4.0]
    got = _values("floor_divide", a, b, dtype, device).astype(np.float64)
    np.testing.assert_array_equal(got, want)
    assert_same_zero_signs(got, want)


@pytest.mark.parametrize("dtype", [xp.float32, xp.float64])
def test_remainder_special_cases(device: str, dtype: DType) -> None:
    inf = math.inf
    a = [5.0, 5.0, -5.0, -5.0, 0.0, -0.0, 7.0, -7.0, inf]
    b = [inf, -inf, inf, -inf, -1.0, 1.0, -2.0, 2.0, 2.0]
    want = [5.0, -inf, inf, -5.0, -0.0, 0.0, -1.0, 1.0, math.nan]
    got = _values("remainder", a, b, dtype, device)
    np.testing.assert_array_equal(got, want)
    assert_same_zero_signs(got, want)


@pytest.mark.parametrize("dtype", [xp.complex64, xp.complex128])
def test_complex_zero_to_a_power(device: str, dtype: DType) -> None:
    """0 ** z as NumPy gives it: 0 when Re z > 0 (whatever Im z is), 1 for z = 0, NaN otherwise."""
    nan = complex(math.nan, math.nan)
    z = [1 + 1j, 2.5 - 3j, 1 + 0j, complex(1, math.nan), complex(math.inf, 1), 0j, -1 + 1j, 1j, -1 + 0j]
    want = [0j, 0j, 0j, 0j, 0j, 1 + 0j, nan, nan, nan]
    np.testing.assert_array_equal(_values("pow", [0j] * len(z), z, dtype, device), np.asarray(want, dtype.numpy))


@pytest.mark.parametrize("dtype", [xp.int8, xp.int32, xp.int64])
def test_integer_pow_with_negative_exponents_is_defined(device: str, dtype: DType) -> None:
    # A negative element of an exponent array: 1 / x1**-n truncated (cpu.power's documented value).
    got = _values("pow", [2, 1, -1, -1, 0, 3, -2], [-1, -5, -2, -3, -1, 2, 3], dtype, device)
    np.testing.assert_array_equal(got, [0, 1, 1, -1, 0, 9, -8])
    # A negative Python int power is a ValueError, as in NumPy and PyTorch, every time (no lane skips it).
    x = xp.asarray([2], dtype=dtype, device=device)
    for _ in range(2):
        with pytest.raises(ValueError, match="negative power -1"):
            x ** -1
        with pytest.raises(ValueError, match="negative power"):
            xp.pow(x, -2)
    assert host(x ** 2).tolist() == [4]


@pytest.mark.parametrize("dtype", [xp.int8, xp.int64, xp.uint8, xp.uint32])
def test_integer_division_by_zero_is_defined(device: str, dtype: DType) -> None:
    np.testing.assert_array_equal(_values("floor_divide", [5, 0], [0, 0], dtype, device), [0, 0])
    np.testing.assert_array_equal(_values("remainder", [5, 0], [0, 0], dtype, device), [0, 0])
    if dtype.kind == "i":  # floor division and remainder take the divisor's sign
        np.testing.assert_array_equal(_values("floor_divide", [7, -7, 7], [2, 2, -2], dtype, device), [3, -4, -4])
        np.testing.assert_array_equal(_values("remainder", [7, -7, 7], [2, 2, -2], dtype, device), [1, 1, -1])
        lo = xp.iinfo(dtype).min  # overflows: wraps, as NumPy and CuPy do
        np.testing.assert_array_equal(_values("floor_divide", [lo], [-1], dtype, device), [lo])


@pytest.mark.parametrize("dtype", [xp.int8, xp.int32, xp.uint16, xp.uint64])
def test_shift_counts_beyond_the_width(device: str, dtype: DType) -> None:
    bits = dtype.itemsize * 8
    np.testing.assert_array_equal(_values("bitwise_left_shift", [1, 1, 3], [bits, bits + 5, 1], dtype, device), [0, 0, 6])
    np.testing.assert_array_equal(_values("bitwise_right_shift", [64, 64], [bits, 2], dtype, device), [0, 16])
    if dtype.kind == "i":
        np.testing.assert_array_equal(_values("bitwise_right_shift", [-4, -4], [bits, -1], dtype, device), [-1, -1])
        np.testing.assert_array_equal(_values("bitwise_left_shift", [5], [-1], dtype, device), [0])


def test_sign_of_complex_and_signed_zeros(device: str) -> None:
    z = xp.asarray([3 + 4j, 0j, complex(math.nan, 0), -2j], device=device)
    np.testing.assert_allclose(host(xp.sign(z)), [0.6 + 0.8j, 0, complex(math.nan, math.nan), -1j], equal_nan=True)
    x = xp.asarray([-0.0, 0.0, -3.0, math.nan], device=device)
    got = host(xp.sign(x))
    np.testing.assert_array_equal(got, [0.0, 0.0, -1.0, math.nan])
    assert np.signbit(host(xp.negative(xp.asarray(0.0, device=device))))


def test_round_half_to_even(device: str) -> None:
    for dtype in (xp.float16, xp.bfloat16, xp.float64):
        got = host(xp.round(xp.asarray([0.5, 1.5, 2.5, -0.5, -1.5], dtype=dtype, device=device)))
        np.testing.assert_array_equal(got.astype(np.float64), [0.0, 2.0, 2.0, -0.0, -2.0])
    got = host(xp.round(xp.asarray([1.5 - 2.5j], device=device)))
    np.testing.assert_array_equal(got, [2 - 2j])


def test_expm1_complex_special_cases(device: str) -> None:
    inf, nan = math.inf, math.nan
    z = xp.asarray([complex(inf, 0), complex(-inf, inf), complex(-inf, nan), complex(nan, 0),
                    complex(-0.0, 0.0), complex(-inf, 1.0)], device=device)
    got = host(xp.expm1(z))
    np.testing.assert_array_equal(got.real, [inf, -1, -1, nan, 0, -1])
    assert got[0].imag == 0 and got[3].imag == 0 and not np.signbit(got[4].real)


def test_tanh_complex_infinite_real_part(device: str) -> None:
    inf = math.inf
    got = host(xp.tanh(xp.asarray([complex(inf, 1e30), complex(inf, -2.0), complex(-inf, 2.0)], device=device)))
    np.testing.assert_array_equal(got.real, [1.0, 1.0, -1.0])
    np.testing.assert_array_equal(np.signbit(got.imag), [False, True, False])  # the sign of b (conjugate symmetry)


@pytest.mark.parametrize("dtype", [xp.float16, xp.bfloat16, xp.float32])
def test_nextafter_steps_in_its_own_dtype(device: str, dtype: DType) -> None:
    x = xp.asarray([1.0, 1.0, 0.0], dtype=dtype, device=device)
    got = host(xp.nextafter(x, xp.asarray([2.0, 0.0, 1.0], dtype=dtype, device=device)))
    info = ml_dtypes.finfo(dtype.numpy)
    assert got[0] == np.asarray(1 + info.eps, dtype.numpy)
    assert 0 < got[1] < 1 and got[1] == np.asarray(1 - info.epsneg, dtype.numpy)
    assert got[2] == info.smallest_subnormal
    # Equal zeros: y itself, as the standard's special cases and C's nextafter (bfloat16's GPU lane had
    # given x).
    zeros = host(xp.nextafter(xp.asarray([0.0, -0.0], dtype=dtype, device=device),
                              xp.asarray([-0.0, 0.0], dtype=dtype, device=device))).astype(np.float32)
    assert np.signbit(zeros).tolist() == [True, False]


def test_result_dtypes_of_real_imag_abs(device: str) -> None:
    z = xp.asarray([3 + 4j], dtype=xp.complex64, device=device)
    for f, want in ((xp.real, 3.0), (xp.imag, 4.0), (xp.abs, 5.0)):
        out = f(z)
        assert out.dtype == xp.float32 and host(out).tolist() == [want]
    i = xp.asarray([-3], dtype=xp.int16, device=device)
    assert xp.real(i).dtype == xp.int16 and xp.abs(i).dtype == xp.int16 and xp.conj(i).dtype == xp.int16
    with pytest.raises(TypeError):
        xp.imag(i)
    with pytest.raises(TypeError):
        xp.less(z, z)  # ordering is undefined for complex


# -- clip --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [xp.int8, xp.uint16, xp.int64, xp.float16, xp.bfloat16, xp.float32, xp.float64])
def test_clip_matches_numpy(device: str, dtype: DType) -> None:
    a = sample(dtype, (4, 5), 6, finite=True)
    x = xp.asarray(a, device=device)
    lo, hi = sample(dtype, (5,), 7, finite=True), sample(dtype, (4, 1), 8, finite=True)
    lo, hi = np.minimum(lo, hi), np.maximum(lo, hi)
    cases = [({"min": 1}, np.maximum(a, 1)), ({"max": 2}, np.minimum(a, 2)), ({"min": 1, "max": 2}, np.clip(a, 1, 2)),
             ({"min": xp.asarray(lo, device=device), "max": xp.asarray(hi, device=device)},
              np.minimum(np.maximum(a, lo), hi))]
    for kw, want in cases:
        out = xp.clip(x, **kw)
        assert out.dtype == dtype and out.shape == want.shape
        np.testing.assert_array_equal(host(out).astype(np.float64), want.astype(np.float64))


def test_clip_nan_broadcast_and_copy(device: str) -> None:
    nan = math.nan
    x = xp.asarray([nan, 1.0, 5.0], device=device)
    np.testing.assert_array_equal(host(xp.clip(x, 2.0, 4)), [nan, 2.0, 4.0])
    np.testing.assert_array_equal(host(xp.clip(x, xp.asarray([nan, 0.0, 0.0], device=device))), [nan, 1.0, 5.0])
    assert xp.clip(x, xp.zeros((2, 1), device=device)).shape == (2, 3)
    same = xp.clip(x)
    assert same is not x
    np.testing.assert_array_equal(host(same), host(x))
    assert xp.clip(xp.asarray([1.5, 9.0], dtype=xp.float32, device=device), 2, 3).dtype == xp.float32


def test_clip_bad_inputs(device: str) -> None:
    x = xp.asarray([1, 2], dtype=xp.int8, device=device)
    with pytest.raises(TypeError):
        xp.clip(xp.asarray([1j], device=device), 0)
    with pytest.raises(TypeError):
        xp.clip(xp.asarray([True], device=device), False)
    with pytest.raises(TypeError):
        xp.clip(x, xp.asarray([1], dtype=xp.int16, device=device))
    with pytest.raises(TypeError):
        xp.clip([1, 2], 0)
    with pytest.raises(TypeError):
        xp.clip(x, 0.5)
    with pytest.raises(ValueError):
        xp.clip(x, xp.zeros(3, dtype=xp.int8, device=device))
    with pytest.raises(TypeError, match=r"clip\(\) min must be an array, an int, a float or None"):
        xp.clip(x, "a")


def test_numpy_keywords_name_the_function_and_what_to_write(device: str) -> None:
    x = xp.ones(3, device=device)
    with pytest.raises(TypeError, match=r"^add\(\) takes no keyword arguments, got out; .*out\[\.\.\.\] = xp\.add"):
        xp.add(x, x, out=x)
    with pytest.raises(TypeError, match=r"^sin\(\) takes no keyword arguments, got dtype; .*xp\.astype"):
        xp.sin(x, dtype=xp.float32)


def test_a_python_int_out_of_range_names_the_function_and_the_fix(device: str) -> None:
    x = xp.asarray([1, 2], dtype=xp.uint8, device=device)
    for call, name in ((lambda: xp.add(x, 300), "add"), (lambda: x * 256, "multiply"),
                       (lambda: xp.subtract(-1, x), "subtract")):
        with pytest.raises(OverflowError, match=rf"^{name}\(\): Python int -?\d+ is out of bounds for uint8 \(0 to 255\)"):
            call()


# -- where -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL, ids=lambda d: d.name)
def test_where_matches_numpy(device: str, dtype: DType) -> None:
    c = sample(xp.bool, (3, 1), 9)
    a, b = sample(dtype, (1, 4), 10), sample(dtype, (3, 4), 11)
    out = xp.where(xp.asarray(c, device=device), xp.asarray(a, device=device), xp.asarray(b, device=device))
    assert out.dtype == dtype
    np.testing.assert_array_equal(host(out), np.where(c, a, b))


def test_where_scalars_promotion_views(device: str) -> None:
    c = xp.asarray([True, False, True], device=device)
    x = xp.asarray([1, 2, 3], dtype=xp.int16, device=device)
    assert host(xp.where(c, x, 0)).tolist() == [1, 0, 3]
    assert host(xp.where(c, -1, x)).tolist() == [-1, 2, -1]
    out = xp.where(c, xp.asarray([1.5], dtype=xp.float32, device=device), 2.5)
    assert out.dtype == xp.float32 and host(out).tolist() == [1.5, 2.5, 1.5]
    out = xp.where(c, x, xp.asarray(7, dtype=xp.int64, device=device))
    assert out.dtype == xp.int64 and host(out).tolist() == [1, 7, 3]
    big = xp.asarray(np.arange(12).reshape(3, 4), device=device)
    np.testing.assert_array_equal(host(xp.where(c[::2], big.T[::2, ::2], 0)),
                                  np.where([True, True], np.arange(12).reshape(3, 4).T[::2, ::2], 0))
    assert xp.where(xp.asarray(True, device=device), x[:0], 1).shape == (0,)


def test_where_bad_inputs(device: str) -> None:
    c = xp.asarray([True, False], device=device)
    x = xp.asarray([1, 2], device=device)
    with pytest.raises(TypeError):
        xp.where(c, 1, 2)  # at least one array
    with pytest.raises(TypeError):
        xp.where(x, x, x)  # condition must be bool
    with pytest.raises(TypeError):
        xp.where([True, False], x, x)
    assert xp.where(c, xp.astype(x, xp.int8), 1.5).dtype is xp.float64  # a float beside ints: NumPy's rule
    with pytest.raises(TypeError):
        xp.where(c, x, xp.asarray([True, False], device=device))
    with pytest.raises(ValueError):
        xp.where(c, x, xp.ones(3, device=device))


def test_errors_name_the_function_called(device: str) -> None:
    # (where's broadcast had named none; clip's had named the maximum it runs; an assignment's none;
    # pinv's rtol none)
    f, f5 = xp.ones((2, 3), device=device), xp.ones(5, device=device)
    u8 = xp.ones(3, dtype=xp.uint8, device=device)
    for call, exc, start in ((lambda: xp.where(f > 0, f, f5), ValueError, "where(): shapes"),
                             (lambda: xp.clip(f, f5), ValueError, "clip(): shapes"),
                             (lambda: xp.clip(u8, -1), OverflowError, "clip(): Python int -1"),
                             (lambda: u8.__setitem__(0, -1), OverflowError, "__setitem__(): Python int -1"),
                             (lambda: xp.linalg.pinv(xp.eye(3, device=device), rtol=f5), ValueError, "pinv(): ")):
        with pytest.raises(exc) as info:
            call()
        assert str(info.value).startswith(start), str(info.value)


def test_complex_edges_alike_on_every_device(device: str) -> None:
    inf, nan = math.inf, math.nan
    # sign: NaN + NaN j where a part is NaN (NumPy's cpu gave 1 + 0j for inf + nan j).
    got = host(xp.sign(xp.asarray([complex(inf, nan), complex(nan, inf), 3 + 4j], device=device)))
    assert np.isnan(got[:2].real).all() and np.isnan(got[:2].imag).all() and got[2] == 0.6 + 0.8j
    # log1p and expm1 keep the digits of small parts (NumPy's log(1 + z) and exp(z) - 1 lost them).
    small = xp.asarray([1e-30j, 1e-30 + 1e-30j], device=device)
    np.testing.assert_allclose(host(xp.log1p(small)), [5e-61 + 1e-30j, 1e-30 + 1e-30j], rtol=1e-12)
    np.testing.assert_allclose(host(xp.expm1(small)), [-5e-61 + 1e-30j, 1e-30 + 1e-30j], rtol=1e-12)
    # expm1 of a real part past exp's range with a zero imaginary part: inf + 0j, the zero's sign
    # kept (the GPU's exp(x) * sin(0) had given NaN); complex64 as its float64 value (NumPy: inf).
    big = host(xp.expm1(xp.asarray([complex(800, 0.0), complex(800, -0.0)], device=device)))
    assert big.real.tolist() == [inf, inf] and np.signbit(big.imag).tolist() == [False, True]
    assert np.isfinite(host(xp.expm1(xp.asarray([89 + 1j], dtype=xp.complex64, device=device))).real).all()
