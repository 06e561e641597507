"""Data type functions: astype, can_cast, finfo, iinfo, isdtype, result_type."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import rocm_array as xp
from helpers import host
from rocm_array.dtypes import ALL, DType



def sample(dtype: DType) -> np.ndarray:
    """Values every dtype holds exactly (0..5), so any cast is exact."""
    a = np.array([[0, 1, 2], [3, 4, 5]])
    if dtype == xp.bool:
        return a % 2 == 1
    if dtype.kind == "c":
        return (a + 1j * a[::-1]).astype(dtype.numpy)
    return a.astype(dtype.numpy)


@pytest.mark.parametrize("src", ALL, ids=lambda d: d.name)
def test_astype_every_pair_matches_numpy(device: str, src: DType) -> None:
    a = sample(src)
    x = xp.asarray(a, device=device)
    for dst in ALL:
        if src.kind == "c" and dst.kind not in "cb":
            with pytest.raises(TypeError):
                xp.astype(x, dst)
            continue
        out = xp.astype(x, dst)
        assert out.dtype == dst and out.shape == x.shape and str(out.device) == device
        np.testing.assert_array_equal(host(out), a.astype(dst.numpy))


def test_astype_bool_rules(device: str) -> None:
    f = xp.asarray([0.0, -0.0, 2.5, float("nan")], device=device)
    assert host(xp.astype(f, xp.bool)).tolist() == [False, False, True, True]
    z = xp.asarray([0j, 1j, 2 + 0j], device=device)
    assert host(xp.astype(z, xp.bool)).tolist() == [False, True, True]
    b = xp.asarray([True, False], device=device)
    assert host(xp.astype(b, xp.complex64)).tolist() == [1 + 0j, 0j]
    assert host(xp.astype(b, xp.bfloat16)).astype(float).tolist() == [1.0, 0.0]


def test_astype_copy_and_views(device: str) -> None:
    x = xp.asarray(np.arange(12, dtype=np.int32).reshape(3, 4), device=device)
    assert xp.astype(x, xp.int32, copy=False) is x
    c = xp.astype(x, xp.int32)
    assert c is not x
    c += 1
    assert int(x[0, 0]) == 0  # a copy does not share memory
    v = x[::2, ::-3]
    np.testing.assert_array_equal(host(xp.astype(v, xp.float32)), np.arange(12).reshape(3, 4)[::2, ::-3])
    assert xp.astype(x, xp.float64, copy=False).dtype == xp.float64
    assert xp.astype(xp.asarray(7, device=device), xp.int8).shape == ()
    assert xp.astype(x[:0], xp.float16).shape == (0, 4)
    out = xp.astype(x, xp.int64, device="cpu")
    assert str(out.device) == "cpu" and host(out).tolist() == host(x).tolist()


def test_astype_bad_inputs(device: str) -> None:
    x = xp.asarray([1.0], device=device)
    with pytest.raises(TypeError):
        xp.astype(x, "float32")
    assert xp.astype(x, np.float32).dtype is xp.float32  # NumPy's dtypes name ours (as in CuPy)
    with pytest.raises(TypeError):
        xp.astype([1.0], xp.float32)
    with pytest.raises(TypeError):
        xp.astype(xp.asarray([1j], device=device), xp.float64)
    with pytest.raises(ValueError):
        xp.astype(x, xp.float32, device="nowhere")


@pytest.mark.parametrize(("src", "dst", "ok"), [
    (xp.int8, xp.int16, True), (xp.int16, xp.int8, False), (xp.uint8, xp.int16, True),
    (xp.uint8, xp.int8, False), (xp.int8, xp.uint8, False), (xp.uint64, xp.int64, False),
    (xp.bool, xp.bool, True), (xp.bool, xp.int8, False), (xp.int8, xp.bool, False),
    (xp.float32, xp.float64, True), (xp.float64, xp.float32, False), (xp.float16, xp.bfloat16, False),
    (xp.bfloat16, xp.float32, True), (xp.float32, xp.complex64, True), (xp.float64, xp.complex64, False),
    (xp.complex64, xp.float32, False), (xp.complex64, xp.complex128, True),
    (xp.int32, xp.float64, True),  # integers to floating: the library's documented extension
    (xp.float32, xp.int64, False),
])
def test_can_cast(device: str, src: DType, dst: DType, ok: bool) -> None:
    assert xp.can_cast(src, dst) is ok
    assert xp.can_cast(xp.ones(2, dtype=src, device=device), dst) is ok


def test_can_cast_bad_inputs() -> None:
    with pytest.raises(TypeError):
        xp.can_cast("int8", xp.int16)
    with pytest.raises(TypeError):
        xp.can_cast(xp.int8, "int16")


@pytest.mark.parametrize("dtype", [xp.float16, xp.bfloat16, xp.float32, xp.float64, xp.complex64, xp.complex128],
                         ids=lambda d: d.name)
def test_finfo(device: str, dtype: DType) -> None:
    real = {xp.complex64: xp.float32, xp.complex128: xp.float64}.get(dtype, dtype)
    ref = ml_dtypes.finfo(real.numpy)
    for arg in (dtype, xp.ones(1, dtype=dtype, device=device)):
        info = xp.finfo(arg)
        assert info.dtype == real and info.bits == real.itemsize * 8
        for field in ("eps", "max", "min", "smallest_normal"):
            value = getattr(info, field)
            assert type(value) is float and value == float(getattr(ref, field))
    assert xp.finfo(xp.float32).eps == float(np.finfo(np.float32).eps)


@pytest.mark.parametrize("dtype", [d for d in ALL if d.kind in "iu"], ids=lambda d: d.name)
def test_iinfo(device: str, dtype: DType) -> None:
    ref = np.iinfo(dtype.numpy)
    for arg in (dtype, xp.ones(1, dtype=dtype, device=device)):
        info = xp.iinfo(arg)
        assert (info.bits, info.min, info.max, info.dtype) == (ref.bits, int(ref.min), int(ref.max), dtype)
        assert type(info.max) is int and type(info.min) is int


def test_finfo_iinfo_reject_other_kinds() -> None:
    for bad in (xp.int32, xp.bool):
        with pytest.raises(TypeError):
            xp.finfo(bad)
    for bad in (xp.float32, xp.bool, xp.complex64):
        with pytest.raises(TypeError):
            xp.iinfo(bad)
    assert xp.finfo(np.float32).bits == 32  # a NumPy dtype names ours
    assert xp.iinfo(int).bits == 64  # as does a Python type NumPy takes (int: int64)
    with pytest.raises(TypeError):
        xp.iinfo("int32")


def test_isdtype() -> None:
    assert xp.isdtype(xp.bfloat16, "real floating") and xp.isdtype(xp.float16, ("integral", "real floating"))
    assert xp.isdtype(xp.uint8, "integral") and not xp.isdtype(xp.uint8, "signed integer")
    assert xp.isdtype(xp.complex64, "numeric") and not xp.isdtype(xp.bool, "numeric")
    assert xp.isdtype(xp.int8, xp.int8) and not xp.isdtype(xp.int8, (xp.int16, "bool"))
    with pytest.raises(ValueError):
        xp.isdtype(xp.int8, "floating")
    with pytest.raises(TypeError):
        xp.isdtype("int8", "integral")


def test_result_type(device: str) -> None:
    assert xp.result_type(xp.int8, xp.uint8) == xp.int16
    assert xp.result_type(xp.float16, xp.bfloat16) == xp.float32
    assert xp.result_type(xp.ones(1, dtype=xp.float32, device=device), xp.complex64, xp.float64) == xp.complex128
    assert xp.result_type(xp.int8) == xp.int8
    # Python scalars take the dtype of the rest; a complex one makes a real floating dtype complex.
    assert xp.result_type(xp.int16, 1) == xp.int16
    assert xp.result_type(1.5, xp.float32) == xp.float32
    assert xp.result_type(xp.float32, 1j) == xp.complex64
    assert xp.result_type(True, xp.ones(1, dtype=xp.bool, device=device)) == xp.bool
    assert xp.result_type(xp.int8, 1, xp.int32) == xp.int32


def test_result_type_bad_inputs() -> None:
    with pytest.raises(ValueError):
        xp.result_type()
    with pytest.raises(TypeError, match="beside Python scalars"):
        xp.result_type(1, 2.0)  # scalars alone have no dtype
    assert xp.result_type(xp.int8, 1.5) is xp.float64  # NumPy's choice where the standard leaves it open
    with pytest.raises(TypeError):
        xp.result_type(xp.bool, 1)
    with pytest.raises(TypeError, match=r"^result_type\(\): uint64 and int64 cannot be promoted"):
        xp.result_type(xp.uint64, xp.int64)
    with pytest.raises(TypeError):
        xp.result_type(xp.int8, "int16")
    with pytest.raises(ValueError, match=r"^dtypes\(\): unknown dtype kind 'bogus'; the kinds are 'bool'"):
        xp.__array_namespace_info__().dtypes(kind="bogus")
    with pytest.raises(TypeError):
        xp.result_type(xp.bool, xp.int8)


def test_bfloat16_from_wider_values_rounds_once(device: str) -> None:
    # Past float32's halfway points, so a cast through float32 rounds twice to the even neighbour
    # (ml_dtypes' NumPy cast did, on cpu and for every value made on the host).
    tricky = [1 + 2**-8 + 2**-40, -(1 + 2**-8 + 2**-40)]
    want = [1 + 2**-7, -(1 + 2**-7)]
    for got in (xp.astype(xp.asarray(tricky, device=device), xp.bfloat16),
                xp.asarray(tricky, dtype=xp.bfloat16, device=device),
                xp.asarray(np.array(tricky), dtype=xp.bfloat16, device=device),
                xp.full(2, tricky[0], dtype=xp.bfloat16, device=device) * xp.asarray([1.0, -1.0], dtype=xp.bfloat16,
                                                                                    device=device),
                xp.asarray([1.0, -1.0], dtype=xp.bfloat16, device=device) * tricky[0]):
        assert host(got).astype(np.float64).tolist() == want
    ints = xp.astype(xp.asarray([2**24 + 2**16 + 1], device=device), xp.bfloat16)
    assert host(ints).astype(np.float64).tolist() == [2**24 + 2**17]
