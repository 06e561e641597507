"""The Array object itself: attributes, Python conversions, devices, DLPack and the namespace."""

from __future__ import annotations

import operator

import numpy as np
import pytest

import rocm_array as xp
from helpers import host



def test_attributes(device):
    ref = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = xp.asarray(ref, device=device)
    assert x.dtype == xp.float32 and str(x.device) == device
    assert (x.shape, x.ndim, x.size) == ((2, 3, 4), 3, 24)
    assert x.strides == (12, 4, 1) and x.offset == 0 and x.is_contiguous
    assert not x[:, ::2].is_contiguous
    np.testing.assert_array_equal(host(x.mT), np.swapaxes(ref, -1, -2))
    np.testing.assert_array_equal(host(x[0].T), ref[0].T)
    assert x[0].T._buf is x._buf
    with pytest.raises(ValueError):
        _ = x.T
    with pytest.raises(ValueError):
        _ = x[0, 0].mT
    assert xp.zeros((), device=device).size == 1 and xp.zeros((3, 0), device=device).size == 0


@pytest.mark.parametrize(("value", "dtype"), [(True, xp.bool), (-3, xp.int8), (7, xp.uint64),
                                              (2.5, xp.float32), (1.5, xp.bfloat16), (2 - 1j, xp.complex64)])
def test_scalar_conversions(device, value, dtype):
    x = xp.asarray(value, dtype=dtype, device=device)
    assert complex(x) == value
    assert bool(x) == bool(value)
    if dtype.kind != "c":
        assert float(x) == value and int(x) == int(value)
    else:
        with pytest.raises(TypeError):
            float(x)
        with pytest.raises(TypeError):
            int(x)
    if dtype.kind in "iu":
        assert operator.index(x) == value and list(range(-10, 10))[x] == list(range(-10, 10))[value]
    else:
        with pytest.raises(TypeError):
            x.__index__()


def test_conversions_need_0d(device):
    x = xp.asarray([1], device=device)
    for f in (bool, int, float, complex):
        with pytest.raises(TypeError):
            f(x)
    with pytest.raises(TypeError):
        hash(x)


def test_sequence_protocol(device):
    x = xp.asarray([[1, 2], [3, 4], [5, 6]], device=device)
    assert len(x) == 3
    rows = list(x)
    assert len(rows) == 3 and all(r._buf is x._buf for r in rows)
    np.testing.assert_array_equal(host(rows[2]), [5, 6])
    with pytest.raises(TypeError):
        len(x[0, 0])
    with pytest.raises(TypeError):
        iter(x[0, 0])


def test_to_device(device):
    x = xp.asarray([1.0, 2.0], device=device)
    assert x.to_device(device) is x
    y = x.to_device("cpu")
    assert str(y.device) == "cpu"
    np.testing.assert_array_equal(host(y), [1.0, 2.0])
    back = y.to_device(x.device)
    assert back.device == x.device
    with pytest.raises(ValueError):
        x.to_device("tpu")
    with pytest.raises(TypeError):
        x.to_device(3)


def test_dlpack_cpu():
    x = xp.asarray(np.arange(6, dtype=np.int32).reshape(2, 3), device="cpu")[:, ::-1]
    assert x.__dlpack_device__() == (1, 0)
    a = np.from_dlpack(x)
    np.testing.assert_array_equal(a, [[2, 1, 0], [5, 4, 3]])
    a[0, 0] = 9  # zero-copy: the consumer sees the same memory
    assert int(x[0, 0]) == 9
    assert np.from_dlpack(x, copy=True) is not None
    x.__dlpack__(max_version=(1, 0), dl_device=(1, 0), copy=False)
    with pytest.raises(ValueError):
        x.__dlpack__(stream=1)


def test_array_protocol_cpu():
    x = xp.asarray([1, 2, 3], dtype=xp.int16, device="cpu")
    a = np.asarray(x)
    assert a.dtype == np.int16
    a[0] = 7
    assert int(x[0]) == 7  # shares memory
    c = np.array(x, dtype=np.float64, copy=True)
    c[1] = 0
    assert c.dtype == np.float64 and int(x[1]) == 2


def test_namespace(device):
    x = xp.zeros(2, device=device)
    assert x.__array_namespace__() is xp
    assert x.__array_namespace__(api_version="2023.12") is xp
    assert x.__array_namespace__(api_version="2025.12") is xp
    with pytest.raises(ValueError):
        x.__array_namespace__(api_version="2021.12")
    assert xp.__array_api_version__ == "2025.12"


def test_repr(device):
    r = repr(xp.asarray([1.5, 2.0], dtype=xp.float32, device=device))
    assert "float32" in r and "1.5" in r and device in r
