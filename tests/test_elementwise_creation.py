"""Creation functions against NumPy on every device."""

from __future__ import annotations

import array

import numpy as np
import pytest

import rocm_array as xp
from helpers import host

ALL = [xp.bool, xp.int8, xp.int16, xp.int32, xp.int64, xp.uint8, xp.uint16, xp.uint32, xp.uint64,
       xp.float16, xp.bfloat16, xp.float32, xp.float64, xp.complex64, xp.complex128]



@pytest.mark.parametrize(("obj", "dtype"), [
    (True, xp.bool), (3, xp.int64), (2.5, xp.float64), (1j, xp.complex128),
    ([True, False], xp.bool), ([True, 2], xp.int64), ([[1, 2.0], [3, 4]], xp.float64),
    ([1, 2.0, 3j], xp.complex128), ([], xp.float64), ([[], []], xp.float64),
])
def test_asarray_infers_dtype(device, obj, dtype):
    out = xp.asarray(obj, device=device)
    assert out.dtype == dtype and str(out.device) == device
    np.testing.assert_array_equal(host(out), np.array(obj, dtype=dtype.numpy))


@pytest.mark.parametrize("dtype", ALL)
def test_asarray_dtype(device, dtype):
    obj = [[0, 1], [1, 0]] if dtype != xp.bool else [[False, True], [True, False]]
    out = xp.asarray(obj, dtype=dtype, device=device)
    assert out.dtype == dtype and out.shape == (2, 2)
    np.testing.assert_array_equal(host(out), np.array(obj, dtype=dtype.numpy))


def test_asarray_rejects(device):
    with pytest.raises(TypeError):
        xp.asarray([1.5], dtype=xp.int32, device=device)
    with pytest.raises(TypeError):
        xp.asarray(1j, dtype=xp.float64, device=device)
    with pytest.raises(TypeError):
        xp.asarray(["a"], device=device)
    with pytest.raises(TypeError):
        xp.asarray(object(), device=device)
    with pytest.raises(ValueError):
        xp.asarray([[1], [1, 2]], device=device)
    with pytest.raises(OverflowError):
        xp.asarray(2**70, device=device)
    with pytest.raises(TypeError):
        xp.asarray([1], dtype="int32", device=device)
    with pytest.raises(ValueError):
        xp.asarray([1, 2], copy=False, device=device)


def test_asarray_from_arrays(device):
    x = xp.asarray([1, 2, 3], device=device)
    assert xp.asarray(x) is x
    assert xp.asarray(x, copy=False) is x
    c = xp.asarray(x, copy=True)
    assert c._buf is not x._buf
    np.testing.assert_array_equal(host(c), [1, 2, 3])
    f = xp.asarray(x, dtype=xp.float32)
    assert f.dtype == xp.float32
    np.testing.assert_array_equal(host(f), [1.0, 2.0, 3.0])
    with pytest.raises(ValueError):
        xp.asarray(x, dtype=xp.float32, copy=False)
    moved = xp.asarray(x, device="cpu")
    assert str(moved.device) == "cpu"
    np.testing.assert_array_equal(host(moved), [1, 2, 3])
    # A sequence of 0-D arrays and scalars.
    s = xp.asarray([x[0], 5], device=device)
    assert s.dtype == xp.int64
    np.testing.assert_array_equal(host(s), [1, 5])


def test_asarray_host_memory():
    a = np.arange(6, dtype=np.int16).reshape(2, 3)
    x = xp.asarray(a, device="cpu")
    a[0, 0] = 42  # zero-copy on cpu
    assert x.dtype == xp.int16 and int(x[0, 0]) == 42
    y = xp.asarray(a, copy=True, device="cpu")
    a[0, 0] = 0
    assert int(y[0, 0]) == 42
    assert xp.asarray(a[:, ::-2], copy=False, device="cpu").shape == (2, 2)
    with pytest.raises(ValueError):
        xp.asarray(a, dtype=xp.int32, copy=False, device="cpu")
    buf = array.array("f", [1.0, 2.0])
    b = xp.asarray(buf, device="cpu")
    assert b.dtype == xp.float32
    buf[0] = 9.0
    assert float(b[0]) == 9.0
    assert xp.asarray(np.float32(1.5)).dtype == xp.float32
    assert xp.asarray(b"\x01\x02", device="cpu").dtype == xp.uint8
    with pytest.raises(TypeError):
        xp.asarray(np.array(["a"]))


def test_asarray_numpy_in_sequences(device):
    assert xp.asarray([np.int64(1), 2], device=device).dtype == xp.int64
    assert xp.asarray([np.float32(1.5), True], device=device).dtype == xp.float64
    rows = xp.asarray([np.array([1, 2], dtype=np.int8), np.array([3, 4], dtype=np.int8)], device=device)
    assert rows.dtype == xp.int8
    np.testing.assert_array_equal(host(rows), [[1, 2], [3, 4]])


def test_asarray_host_to_device(device):
    a = np.arange(4.0)
    x = xp.asarray(a, dtype=xp.float32, device=device)
    assert x.dtype == xp.float32 and str(x.device) == device
    np.testing.assert_array_equal(host(x), a)


@pytest.mark.parametrize("dtype", ALL)
def test_fills(device, dtype):
    for fn, value in ((xp.zeros, 0), (xp.ones, 1)):
        out = fn((2, 3), dtype=dtype, device=device)
        assert out.dtype == dtype and out.shape == (2, 3)
        np.testing.assert_array_equal(host(out), np.full((2, 3), value, dtype=dtype.numpy))
        like = {xp.zeros: xp.zeros_like, xp.ones: xp.ones_like}[fn](out[:, ::2])
        assert like.dtype == dtype and like.shape == (2, 2)
        np.testing.assert_array_equal(host(like), np.full((2, 2), value, dtype=dtype.numpy))
    e = xp.empty(4, dtype=dtype, device=device)
    assert e.shape == (4,) and e.dtype == dtype
    assert xp.empty_like(e, dtype=xp.int8).dtype == xp.int8


def test_default_dtypes(device):
    for fn in (xp.zeros, xp.ones, xp.empty):
        assert fn((), device=device).dtype == xp.float64
        assert fn(0, device=device).shape == (0,)
    assert xp.full(2, True, device=device).dtype == xp.bool
    assert xp.full(2, 1, device=device).dtype == xp.int64
    assert xp.full(2, 1.0, device=device).dtype == xp.float64
    assert xp.full(2, 1j, device=device).dtype == xp.complex128


def test_full(device):
    out = xp.full((2, 2), 3, dtype=xp.float32, device=device)
    np.testing.assert_array_equal(host(out), np.full((2, 2), 3, np.float32))
    out = xp.full_like(out, 2.5)
    assert out.dtype == xp.float32
    np.testing.assert_array_equal(host(out), np.full((2, 2), 2.5, np.float32))
    assert np.isnan(host(xp.full(1, float("nan"), device=device))[0])
    with pytest.raises(TypeError):
        xp.full(2, 1.5, dtype=xp.int32, device=device)
    with pytest.raises(TypeError):
        xp.full(2, 1, dtype=xp.bool, device=device)
    with pytest.raises(TypeError):
        xp.full_like(out, 1j)
    with pytest.raises(OverflowError):
        xp.full(2, 300, dtype=xp.uint8, device=device)
    with pytest.raises(TypeError):
        xp.full(2, "x", device=device)


def test_shape_errors(device):
    with pytest.raises(ValueError):
        xp.zeros((2, -1), device=device)
    with pytest.raises(MemoryError, match="out of memory"):  # on every device alike
        xp.zeros(2**62, device=device)
    most = xp.__array_namespace_info__().capabilities()["max dimensions"]
    assert xp.ones((1,) * most, device=device).ndim == most
    for call in (lambda: xp.ones((1,) * (most + 1), device=device), lambda: xp.reshape(xp.ones(1), (1,) * (most + 1))):
        with pytest.raises(ValueError, match=rf"^(ones|reshape)\(\): shape has {most + 1} dimensions"):
            call()
    huge = xp.broadcast_to(xp.ones(3, device=device), (2**62, 3))  # (a view: no memory)
    for make in (lambda: xp.arange(2**62, device=device), lambda: xp.linspace(0, 1, 2**62, device=device),
                 lambda: huge + 1, lambda: xp.where(huge > 0, huge, 0.0)):
        with pytest.raises(MemoryError, match="out of memory"):  # the result's, not NumPy's ValueError
            make()
    with pytest.raises(TypeError):
        xp.zeros((2.0,), device=device)
    with pytest.raises(TypeError):
        xp.ones((True,), device=device)
    with pytest.raises(TypeError):
        xp.zeros_like(np.zeros(2))


def test_asarray_and_from_dlpack_errors_name_the_function(device):
    for call, err, words in [
        (lambda: xp.asarray([[1, 2], [3]], device=device), ValueError, "different lengths"),
        (lambda: xp.asarray(2**63, device=device), OverflowError, "out of range for int64"),
        (lambda: xp.asarray([1, 2**64], device=device), OverflowError, "out of range for int64"),
        (lambda: xp.asarray([300], dtype=xp.uint8, device=device), OverflowError, "out of range for uint8"),
        (lambda: xp.from_dlpack(5), AttributeError, "not a DLPack producer"),
    ]:
        with pytest.raises(err, match=rf"^(asarray|from_dlpack)\(\): .*{words}"):
            call()
    assert host(xp.asarray([2**63], dtype=xp.uint64, device=device))[0] == 2**63  # the fix the message names


@pytest.mark.parametrize(("args", "kw"), [
    ((5,), {}), ((2, 9), {}), ((10, 0, -3), {}), ((0, 1, 0.1), {}), ((1, 5), {"dtype": xp.float32}),
    ((-3, 3, 2), {"dtype": xp.int8}), ((5, 1), {}), ((0.5, 3.0), {}), ((2**64 - 3, 2**64 - 1), {"dtype": xp.uint64}),
    ((10, 0, -2), {"dtype": xp.uint8}),
])
def test_arange(device, args, kw):
    out = xp.arange(*args, **kw, device=device)
    want = np.arange(*args, dtype=kw["dtype"].numpy if kw else None)
    assert out.dtype == kw.get("dtype", xp.int64 if all(isinstance(a, int) for a in args) else xp.float64)
    np.testing.assert_allclose(host(out), want)


def test_arange_errors(device):
    with pytest.raises(ValueError):
        xp.arange(0, 5, 0, device=device)
    with pytest.raises(TypeError):
        xp.arange(1j, device=device)
    with pytest.raises(TypeError):
        xp.arange(True, device=device)
    with pytest.raises(ValueError):
        xp.arange(0, float("inf"), device=device)


@pytest.mark.parametrize("endpoint", [True, False])
@pytest.mark.parametrize(("start", "stop", "num", "dtype"), [
    (0, 1, 5, None), (-2.5, 7.0, 11, xp.float32), (1, 1, 3, None), (3, 0, 1, None), (0, 1, 0, None),
    (0, 1 + 2j, 4, None), (0.0, 1.0, 7, xp.complex64), (0, 10, 6, xp.int32),
])
def test_linspace(device, start, stop, num, dtype, endpoint):
    out = xp.linspace(start, stop, num, dtype=dtype, device=device, endpoint=endpoint)
    want = np.linspace(start, stop, num, endpoint=endpoint)
    if dtype is not None:
        want = want.astype(dtype.numpy)
    assert out.dtype == (dtype or (xp.complex128 if isinstance(stop, complex) else xp.float64))
    np.testing.assert_allclose(host(out), want, rtol=1e-6)
    if endpoint and num > 1:
        assert host(out)[-1] == np.asarray(stop).astype(out.dtype.numpy)


def test_linspace_errors(device):
    with pytest.raises(ValueError):
        xp.linspace(0, 1, -1, device=device)
    with pytest.raises(TypeError):
        xp.linspace(0, 1j, 3, dtype=xp.float64, device=device)
    with pytest.raises(TypeError):
        xp.linspace(0, 1, 2.0, device=device)


@pytest.mark.parametrize(("n", "m", "k"), [(3, None, 0), (3, 5, 1), (4, 2, -1), (2, 3, 5), (0, None, 0), (3, 3, -3)])
def test_eye(device, n, m, k):
    out = xp.eye(n, m, k=k, dtype=xp.int16, device=device)
    assert out.dtype == xp.int16
    np.testing.assert_array_equal(host(out), np.eye(n, m, k=k, dtype=np.int16))
    assert xp.eye(2, device=device).dtype == xp.float64
    with pytest.raises(ValueError):
        xp.eye(-1, device=device)
    with pytest.raises(TypeError):
        xp.eye(2.0, device=device)


@pytest.mark.parametrize("k", [-2, 0, 1, 4])
def test_tril_triu(device, k):
    ref = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4) + 1
    x = xp.asarray(ref, device=device)
    np.testing.assert_array_equal(host(xp.tril(x, k=k)), np.tril(ref, k))
    np.testing.assert_array_equal(host(xp.triu(x[:, ::-1], k=k)), np.triu(ref[:, ::-1], k))
    with pytest.raises(ValueError):
        xp.tril(x[0, 0])
    for far in (10**20, -10**20):  # past the corner: as the corner (cpu had overflowed a C long)
        np.testing.assert_array_equal(host(xp.tril(x, k=far)), np.tril(ref, 10 if far > 0 else -10))
        np.testing.assert_array_equal(host(xp.triu(x, k=far)), np.triu(ref, 10 if far > 0 else -10))


@pytest.mark.parametrize("indexing", ["xy", "ij"])
def test_meshgrid(device, indexing):
    a, b, c = np.arange(3), np.arange(4) * 10, np.arange(2) * 100
    out = xp.meshgrid(*(xp.asarray(v, device=device) for v in (a, b, c)), indexing=indexing)
    want = np.meshgrid(a, b, c, indexing=indexing)
    assert isinstance(out, tuple) and len(out) == 3
    for o, w in zip(out, want):
        np.testing.assert_array_equal(host(o), w)
    assert xp.meshgrid() == ()
    with pytest.raises(ValueError):
        xp.meshgrid(xp.asarray([1], device=device), xp.asarray([1.0], device=device))
    with pytest.raises(ValueError):
        xp.meshgrid(xp.asarray([[1]], device=device))
    with pytest.raises(ValueError):
        xp.meshgrid(xp.asarray([1], device=device), indexing="xx")


def test_from_dlpack_numpy():
    a = np.arange(6.0).reshape(2, 3)[:, ::2]
    x = xp.from_dlpack(a)
    assert x.shape == (2, 2) and x.dtype == xp.float64 and str(x.device) == "cpu"
    a[0, 0] = -1  # zero-copy
    assert float(x[0, 0]) == -1
    c = xp.from_dlpack(a, copy=True)
    a[0, 0] = 5
    assert float(c[0, 0]) == -1
    np.testing.assert_array_equal(host(xp.from_dlpack(a, device="cpu", copy=False)), a)


def test_from_dlpack_arrays(device):
    x = xp.asarray([1, 2, 3], dtype=xp.int32, device=device)
    assert xp.from_dlpack(x) is x
    y = xp.from_dlpack(x, copy=True)
    assert y._buf is not x._buf
    np.testing.assert_array_equal(host(y), [1, 2, 3])
    z = xp.from_dlpack(x, device="cpu")
    assert str(z.device) == "cpu"
    with pytest.raises(AttributeError, match=r"from_dlpack\(\): list is not a DLPack producer"):
        xp.from_dlpack([1, 2])


def test_bool_arguments_must_be_bools(device):
    """A string or int where a bool argument belongs is a TypeError naming it (truthy is not yes)."""
    x = xp.ones((3, 3), device=device)
    calls = {
        "asarray": lambda: xp.asarray([1.0], copy="yes", device=device),
        "astype": lambda: xp.astype(x, xp.float64, copy="no"),
        "reshape": lambda: xp.reshape(x, (9,), copy=1),
        "linspace": lambda: xp.linspace(0, 1, 5, endpoint=2, device=device),
        "sort": lambda: xp.sort(x, stable=1),
        "sum": lambda: xp.sum(x, keepdims="x"),
        "random.choice": lambda: xp.random.default_rng(0).choice(3, 2, replace="x", device=device),
    }
    for name, call in calls.items():
        with pytest.raises(TypeError, match=rf"^{name}\(\): \w+ must be a bool"):
            call()
    with pytest.raises(TypeError, match=r"arange\(\): dtype must be numeric, not bool"):
        xp.arange(3, dtype=xp.bool, device=device)


def test_device_errors_name_the_function() -> None:
    for call, exc, start in ((lambda: xp.zeros(3, device=5), TypeError, "zeros(): device must be"),
                             (lambda: xp.ones(3, device="bogus"), ValueError, "ones(): bad device 'bogus'"),
                             (lambda: xp.asarray([1], device="gpu:99"), ValueError, "asarray(): no device 'gpu:99'"),
                             (lambda: xp.ones(2, device="cpu").to_device("x"), ValueError, "to_device(): bad device"),
                             (lambda: xp.zeros_like(xp.ones(2, device="cpu"), device=1.5), TypeError, "zeros_like(): "),
                             (lambda: xp.linspace(xp.ones(2, device="cpu"), 1, 3), TypeError,
                              "linspace(): start must be a Python number, not an array")):
        with pytest.raises(exc) as info:
            call()
        assert str(info.value).startswith(start), str(info.value)
