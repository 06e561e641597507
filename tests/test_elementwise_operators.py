"""Array operators (forward, reflected, in-place) against NumPy on every device."""

from __future__ import annotations

import operator

import numpy as np
import pytest

import rocm_array as xp
from helpers import host
from rocm_array.dtypes import DType

# Each Python operator with a dtype it admits.
BINARY = {
    operator.add: xp.float32, operator.sub: xp.int16, operator.mul: xp.complex64,
    operator.truediv: xp.float64, operator.floordiv: xp.int32, operator.mod: xp.float32,
    operator.pow: xp.float64, operator.and_: xp.uint8, operator.or_: xp.bool, operator.xor: xp.int64,
    operator.lshift: xp.uint16, operator.rshift: xp.int8,
    operator.eq: xp.complex128, operator.ne: xp.bool, operator.lt: xp.float32, operator.le: xp.int8,
    operator.gt: xp.uint32, operator.ge: xp.float64,
}
INPLACE = {
    operator.iadd: operator.add, operator.isub: operator.sub, operator.imul: operator.mul,
    operator.itruediv: operator.truediv, operator.ifloordiv: operator.floordiv, operator.imod: operator.mod,
    operator.ipow: operator.pow, operator.iand: operator.and_, operator.ior: operator.or_,
    operator.ixor: operator.xor, operator.ilshift: operator.lshift, operator.irshift: operator.rshift,
}
INPLACE_DTYPES = {operator.iadd: xp.int8, operator.isub: xp.float32, operator.imul: xp.complex128,
                  operator.itruediv: xp.float32, operator.ifloordiv: xp.int64, operator.imod: xp.uint8,
                  operator.ipow: xp.int32, operator.iand: xp.bool, operator.ior: xp.int16,
                  operator.ixor: xp.uint64, operator.ilshift: xp.int32, operator.irshift: xp.uint8}



def sample(dtype: DType, shape: tuple[int, ...], seed: int) -> np.ndarray:
    """Values where every operator is defined: positive (shift counts, divisors) and small."""
    rng = np.random.default_rng(seed)
    a = rng.integers(1, 6, shape)
    if dtype == xp.bool:
        return a % 2 == 0
    if dtype.kind == "c":
        return (a + 1j * rng.integers(1, 6, shape)).astype(dtype.numpy)
    return a.astype(dtype.numpy)


def scalar_for(dtype: DType) -> bool | int | float:
    return True if dtype == xp.bool else 2 if dtype.kind in "iu" else 1.5


@pytest.mark.parametrize("op", BINARY, ids=lambda o: o.__name__)
def test_binary_operators_match_numpy(device: str, op) -> None:
    dtype = BINARY[op]
    a, b = sample(dtype, (3, 4), 0), sample(dtype, (4,), 1)
    x, y = xp.asarray(a, device=device), xp.asarray(b, device=device)
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(host(op(x, y)), op(a, b), rtol=1e-6)
        s = scalar_for(dtype)
        np.testing.assert_allclose(host(op(x, s)), op(a, np.asarray(s, dtype.numpy)), rtol=1e-6)
        np.testing.assert_allclose(host(op(s, x)), op(np.asarray(s, dtype.numpy), a), rtol=1e-6)
    assert op(x, y).dtype == (xp.bool if op in (operator.eq, operator.ne, operator.lt, operator.le,
                                                operator.gt, operator.ge) else dtype)


def test_unary_operators(device: str) -> None:
    a = np.array([-2, 0, 3], np.int16)
    x = xp.asarray(a, device=device)
    for op, ref in ((operator.neg, -a), (operator.pos, a), (abs, np.abs(a)), (operator.invert, ~a)):
        out = op(x)
        assert out.dtype == xp.int16
        np.testing.assert_array_equal(host(out), ref)
    assert host(~xp.asarray([True, False], device=device)).tolist() == [False, True]
    assert abs(xp.asarray([3 + 4j], dtype=xp.complex64, device=device)).dtype == xp.float32


def test_operators_reject_other_types(device: str) -> None:
    x = xp.asarray([1, 2], device=device)
    for bad in ("a", [1, 2], None, object()):
        with pytest.raises(TypeError):
            x + bad
        with pytest.raises(TypeError):
            bad * x
    assert (x + 1.5).dtype is xp.float64  # a Python float beside integers: the default float (NumPy's rule)
    assert (x / 2).dtype is xp.float64 and (x / x).dtype is xp.float64  # true division of integers
    with pytest.raises(TypeError):
        xp.asarray([1.0], device=device) < 1j
    with pytest.raises(TypeError):
        xp.asarray([1, 2], dtype=xp.uint64, device=device) + xp.asarray([1], dtype=xp.int64, device=device)


@pytest.mark.parametrize("op", INPLACE, ids=lambda o: o.__name__)
def test_inplace_operators_write_into_self(device: str, op) -> None:
    dtype = INPLACE_DTYPES[op]
    a, b = sample(dtype, (3, 4), 2), sample(dtype, (4,), 3)
    x = xp.asarray(a, device=device)
    before = x
    with np.errstate(all="ignore"):
        want = INPLACE[op](a, b).astype(dtype.numpy)
        x = op(x, xp.asarray(b, device=device))
    assert x is before and x.dtype == dtype
    np.testing.assert_allclose(host(x), want, rtol=1e-6)
    s = scalar_for(dtype)
    with np.errstate(all="ignore"):
        want = INPLACE[op](want, np.asarray(s, dtype.numpy)).astype(dtype.numpy)
    x = op(x, s)
    assert x is before
    np.testing.assert_allclose(host(x), want, rtol=1e-6)


def test_inplace_on_views_writes_the_base(device: str) -> None:
    base = np.arange(12, dtype=np.float64).reshape(3, 4)
    x = xp.asarray(base.copy(), device=device)  # asarray shares host memory on cpu
    v = x[::2, 1::2]
    v += 100
    v *= xp.asarray([1.0, -1.0], device=device)
    want = base.copy()
    want[::2, 1::2] = (want[::2, 1::2] + 100) * [1.0, -1.0]
    np.testing.assert_array_equal(host(x), want)
    t = x.T
    t -= xp.asarray([1.0, 2.0, 3.0], device=device)  # broadcast along the transposed rows
    want -= np.array([1.0, 2.0, 3.0])[:, None]
    np.testing.assert_array_equal(host(x), want)
    z = xp.asarray(5, dtype=xp.int32, device=device)
    z //= 2
    assert z.shape == () and int(z) == 2


def test_inplace_reads_before_writing_overlaps(device: str) -> None:
    x = xp.asarray(np.arange(6.0), device=device)
    a = x[1:]
    a += x[:-1]  # reads from the buffer it writes
    np.testing.assert_array_equal(host(x), [0, 1, 3, 5, 7, 9])


def test_inplace_must_keep_dtype_and_shape(device: str) -> None:
    x8 = xp.asarray([1, 2], dtype=xp.int8, device=device)
    with pytest.raises(TypeError):
        x8 += xp.asarray([1, 2], dtype=xp.int16, device=device)
    with pytest.raises(TypeError):
        x8 += 1.5
    with pytest.raises(TypeError):
        x8 /= 2  # true division is for floating dtypes
    f = xp.asarray([1.0, 2.0], dtype=xp.float32, device=device)
    with pytest.raises(TypeError):
        f += 1j
    with pytest.raises(ValueError):
        f += xp.ones((3, 2), dtype=xp.float32, device=device)
    with pytest.raises(TypeError):
        f += "a"
    b = xp.asarray([True], device=device)
    with pytest.raises(TypeError):
        b += 1
    np.testing.assert_array_equal(host(x8), [1, 2])  # failed operators leave self as it was
    np.testing.assert_array_equal(host(f), [1.0, 2.0])


def test_an_operator_calls_what_the_table_holds_now(device: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``a + b`` calls the row's ``hot`` item (its last lane, cheaper than calling the row), and follows
    the table when it holds another function: one without ``hot`` is called itself."""
    from rocm_array.namespace import TABLE

    a = xp.asarray([1.0, 2.0], device=device)
    assert host(a + a).tolist() == [2.0, 4.0] and host(-a).tolist() == [-1.0, -2.0]
    calls: list[str] = []
    monkeypatch.setitem(TABLE, "add", lambda x, y: calls.append("add") or x)
    monkeypatch.setitem(TABLE, "negative", lambda x: calls.append("negative") or x)
    two = 2.0
    assert (a + a) is a and (two + a) is two and (-a) is a
    assert calls == ["add", "add", "negative"]
    monkeypatch.undo()
    assert host(a + a).tolist() == [2.0, 4.0] and host(-a).tolist() == [-1.0, -2.0]

