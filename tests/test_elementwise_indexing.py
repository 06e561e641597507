"""__getitem__, __setitem__, take and take_along_axis against NumPy on every device."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import rocm_array as xp
from helpers import host
from rocm_array_plugins.elementwise import front_indexing



def grid(shape: tuple[int, ...], device: str, dtype=xp.int64) -> tuple[xp.Array, np.ndarray]:
    ref = np.arange(int(np.prod(shape)), dtype=dtype.numpy).reshape(shape)
    return xp.asarray(ref, device=device), ref


@settings(max_examples=40, deadline=None)
@given(data=st.data(), shape=hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5))
def test_basic_getitem_matches_numpy(data, shape):
    key = data.draw(hnp.basic_indices(shape, allow_newaxis=True, allow_ellipsis=True))
    ref = np.arange(int(np.prod(shape))).reshape(shape)
    x = xp.asarray(ref)
    out = x[key]
    want = ref[key]
    assert out.shape == np.shape(want)
    np.testing.assert_array_equal(host(out), want)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=6))
def test_a_key_of_slices_and_ints_takes_the_general_walks_view(data, shape):
    """getitem's short path (``_basic``: Python slices and ints, a loop's ``u[1:-1, 2:]``) gives the
    view the general walk (``_parse``) gives, on a view with an offset and a negative stride."""
    ref = np.arange(2 * int(np.prod(shape))).reshape((2, *shape))
    x = xp.asarray(ref)[1, ..., ::-1]
    key = data.draw(hnp.basic_indices(shape, allow_newaxis=False, allow_ellipsis=False))
    fast = front_indexing._basic(x, key)
    slow, advanced = front_indexing._parse(x, key)
    assert fast is not None and advanced is None
    assert (fast.shape, fast.strides, fast.offset) == (slow.shape, slow.strides, slow.offset)
    np.testing.assert_array_equal(host(fast), ref[1, ..., ::-1][key])


def test_basic_indexing_is_a_view(device):
    x, ref = grid((4, 5), device)
    v = x[1:, ::-2]
    assert v.shape == (3, 3) and v.strides == (5, -2)
    v[0, 0] = -1
    ref[1:, ::-2][0, 0] = -1
    np.testing.assert_array_equal(host(x), ref)


def test_integer_index_gives_0d(device):
    x, ref = grid((3,), device)
    out = x[-1]
    assert out.shape == () and int(out) == ref[-1]
    assert x[()].shape == (3,)
    z = xp.asarray(5, device=device)
    assert z[()].shape == () and z[...].shape == ()


@pytest.mark.parametrize("key", [3, -4, (0, 5), (0, 0, 0)])
def test_index_errors(device, key):
    x, _ = grid((3, 5), device)
    with pytest.raises(IndexError):
        x[key]


def test_bad_keys(device):
    x, _ = grid((3, 5), device)
    with pytest.raises(IndexError):
        x[..., 0, ...]
    with pytest.raises(IndexError):
        x[1.5]
    with pytest.raises(IndexError):
        x[xp.asarray([0.5], device=device)]
    with pytest.raises(ValueError):
        x[::0]


@pytest.mark.parametrize("key", [
    lambda a: (a([0, 2, -1]),),
    lambda a: (a([[0, 1], [2, 0]]), 1),
    lambda a: (a([0, 2]), a([[1], [3]])),
    lambda a: (slice(None), a([3, 0])),
    lambda a: (a([1, 0]), slice(None), a([0, 1])),
    lambda a: (slice(None), a([0, 1]), a([1, 2])),
    lambda a: (None, a([0]), Ellipsis, a([2])),
    lambda a: (a(1), a([0, 2])),
])
def test_integer_array_getitem(device, key):
    x, ref = grid((3, 4, 5), device)
    k = key(lambda v: xp.asarray(v, device=device))
    want = ref[key(np.asarray)]
    out = x[k]
    assert out.shape == want.shape
    np.testing.assert_array_equal(host(out), want)


def test_integer_array_index_dtypes(device):
    x, ref = grid((6,), device)
    for dt in (xp.int8, xp.uint8, xp.int32, xp.uint64):
        np.testing.assert_array_equal(host(x[xp.asarray([5, 1], dtype=dt, device=device)]), ref[[5, 1]])


@pytest.mark.parametrize("dtype", [xp.bool, xp.int8, xp.float16, xp.bfloat16, xp.float32, xp.complex128])
def test_mask_getitem(device, dtype):
    n = np.arange(12).reshape(3, 4)
    ref = ((n % 2 == 1) if dtype == xp.bool else n + 1j * (n % 5) if dtype == xp.complex128 else n).astype(dtype.numpy)
    x = xp.asarray(ref, device=device)
    m = n % 3 == 0
    out = x[xp.asarray(m, device=device)]
    assert out.dtype == dtype
    np.testing.assert_array_equal(host(out), ref[m])
    row = np.array([True, False, True])
    np.testing.assert_array_equal(host(x[xp.asarray(row, device=device)]), ref[row])


def test_a_mask_gather_reuses_its_axes_and_fills_no_flag(device, monkeypatch):
    """A gather by a mask's positions (in bounds: the flag is never read) fills no flag, and the
    sizes and strides it reads are uploaded once for a shape: a second mask of the same array
    uploads only its blocks' starts."""
    if not device.startswith("gpu"):
        pytest.skip("the gpu back's driver calls")
    from rocm_array_plugins.elementwise import gpu_indexing

    monkeypatch.setattr(gpu_indexing, "_AXES", {})  # (another test may have used this shape)
    x, ref = grid((64, 8), device, xp.float32)
    driver = xp.asarray(0, device=device).device.runtime.driver
    uploads = []
    memcpy = driver.memcpy
    monkeypatch.setattr(driver, "memcpy", lambda d, s, n, kind: (uploads.append(kind), memcpy(d, s, n, kind))[1])
    memset = driver.memset_d8
    monkeypatch.setattr(driver, "memset_d8", lambda p, v, n: (uploads.append("memset"), memset(p, v, n))[1])
    for k in range(3):
        m = np.arange(64) % 3 == k
        mask = xp.asarray(m, device=device)
        uploads.clear()
        np.testing.assert_array_equal(host(x[mask]), ref[m])
        assert uploads.count("htod") == (1 if k else 2), (k, uploads)  # the starts (and the axes once)
        assert "memset" not in uploads, uploads


def test_mask_rules(device):
    x, ref = grid((2, 3), device)
    assert x[xp.asarray(True, device=device)].shape == (1, 2, 3)
    assert x[xp.asarray(False, device=device)].shape == (0, 2, 3)
    assert x[True].shape == (1, 2, 3)
    assert x[xp.zeros((0, 3), dtype=xp.bool, device=device)].shape == (0,)
    with pytest.raises(IndexError):
        x[xp.ones((3,), dtype=xp.bool, device=device)]
    with pytest.raises(IndexError):
        x[xp.ones((2, 3, 1), dtype=xp.bool, device=device)]


def test_setitem_basic(device):
    x, ref = grid((3, 4), device, xp.float32)
    x[1] = 7.5
    ref[1] = 7.5
    x[:, ::-2] = xp.asarray([1.0, 2.0], dtype=xp.float32, device=device)
    ref[:, ::-2] = [1.0, 2.0]
    x[..., 0] = xp.asarray(3, dtype=xp.int8, device=device)  # int8 promotes to float32
    ref[..., 0] = 3
    x[0, 0] = 2  # a Python int goes into a float array
    ref[0, 0] = 2
    np.testing.assert_array_equal(host(x), ref)


def test_setitem_overlapping(device):
    x, ref = grid((6,), device)
    x[1:] = x[:-1]
    ref[1:] = ref[:-1].copy()
    np.testing.assert_array_equal(host(x), ref)


def test_setitem_advanced(device):
    x, ref = grid((3, 4), device)
    x[xp.asarray([0, 2], device=device), 1] = xp.asarray([-1, -2], device=device)
    ref[[0, 2], 1] = [-1, -2]
    m = ref % 2 == 0
    x[xp.asarray(m, device=device)] = 0
    ref[m] = 0
    x[:, xp.asarray([3, 0], device=device)] = xp.asarray([[9], [8], [7]], device=device)
    ref[:, [3, 0]] = [[9], [8], [7]]
    x[xp.asarray(True, device=device)] = 5
    np.testing.assert_array_equal(host(x), np.full_like(ref, 5))


def test_setitem_errors(device):
    x, _ = grid((3,), device, xp.int32)
    with pytest.raises(TypeError):
        x[0] = 1.5
    with pytest.raises(TypeError):
        x[0] = xp.asarray(1, dtype=xp.int64, device=device)
    with pytest.raises(TypeError):
        x[0] = "a"
    with pytest.raises(OverflowError):
        x[0] = 2**40
    with pytest.raises(ValueError):
        x[:] = xp.asarray([1, 2], dtype=xp.int32, device=device)
    f = xp.zeros(2, dtype=xp.float32, device=device)
    with pytest.raises(TypeError):
        f[0] = 1j
    b = xp.zeros(2, dtype=xp.bool, device=device)
    with pytest.raises(TypeError):
        b[0] = 1


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_take(device, axis):
    x, ref = grid((3, 4), device)
    idx = [2, 0, -1, 0]
    np.testing.assert_array_equal(host(xp.take(x, xp.asarray(idx, device=device), axis=axis)),
                                  np.take(ref, idx, axis=axis))


def test_take_rules(device):
    x, ref = grid((5,), device)
    np.testing.assert_array_equal(host(xp.take(x, xp.asarray([4, 1], device=device))), ref[[4, 1]])
    m, _ = grid((2, 2), device)
    with pytest.raises(ValueError):
        xp.take(m, xp.asarray([0], device=device))
    with pytest.raises(TypeError):
        xp.take(x, xp.asarray([0.0], device=device))
    with pytest.raises(IndexError):
        xp.take(x, xp.asarray([0], device=device), axis=1)


def test_an_index_out_of_bounds_is_named(device):
    """The offending index is in the message on every device (the GPU reports it from the kernel)."""
    x, _ = grid((2, 3), device)
    for call, bad, size, name in ((lambda: x[xp.asarray([0, 5], device=device)], 5, 2, ""),
                                  (lambda: x[:, xp.asarray([1, -7], device=device)], -7, 3, ""),
                                  (lambda: xp.take(x, xp.asarray([9], device=device), axis=1), 9, 3, "take(): "),
                                  (lambda: xp.take_along_axis(x, xp.asarray([[0], [4]], device=device), axis=1),
                                   4, 3, "take_along_axis(): ")):
        # The same words on every device, the function named where there is one (NumPy's, on cpu,
        # had named the axis of the canonical view).
        with pytest.raises(IndexError, match=rf"^{re.escape(name)}index {bad} is out of bounds for an axis of size {size}$"):
            call()


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_take_along_axis(device, axis):
    x, ref = grid((3, 4), device, xp.float64)
    idx = np.argsort(-ref, axis=axis)
    np.testing.assert_array_equal(
        host(xp.take_along_axis(x, xp.asarray(idx, device=device), axis=axis)),
        np.take_along_axis(ref, idx, axis=axis))


def test_take_along_axis_broadcasts(device):
    x, ref = grid((3, 4), device)
    idx = np.array([[3, 0]])
    np.testing.assert_array_equal(host(xp.take_along_axis(x, xp.asarray(idx, device=device), axis=1)),
                                  np.take_along_axis(ref, np.broadcast_to(idx, (3, 2)), axis=1))
    with pytest.raises(ValueError):
        xp.take_along_axis(x, xp.asarray([0], device=device), axis=0)


class _Foreign:
    """Another library's tensor over an array's memory (as a CuPy or PyTorch one would be)."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, **kw):
        return self.a.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


def test_writes_from_values_that_alias_the_target(device):
    """An operand or value sharing the target's memory is read as if copied first (NumPy's
    results): a prefix view broadcast over its own array, an integer-array key's value that is the
    target, and one allocation imported twice through DLPack."""
    a, m = np.array([1.0, 2.0, 3.0, 4.0]), np.array([[2.0, 4.0, 6.0], [3.0, 6.0, 9.0]])
    x = xp.asarray(a, copy=True, device=device)
    x += x[:1]
    np.testing.assert_array_equal(host(x), a + a[:1])
    y = xp.asarray(m, copy=True, device=device)
    y /= y[:, :1]  # rows normalized by their first column
    np.testing.assert_array_equal(host(y), m / m[:, :1])
    z = xp.asarray(a, copy=True, device=device)
    z[xp.asarray([1, 2, 3, 0], device=device)] = z
    want = a.copy()
    want[[1, 2, 3, 0]] = a
    np.testing.assert_array_equal(host(z), want)
    r = xp.asarray(m, copy=True, device=device)
    r[xp.asarray([1, 0], device=device)] = r
    np.testing.assert_array_equal(host(r), m[::-1])
    t = _Foreign(xp.asarray(a, copy=True, device=device))
    p, q = xp.from_dlpack(t), xp.from_dlpack(t)  # two arrays over one memory
    p[...] = q[::-1]
    np.testing.assert_array_equal(host(q), a[::-1])
    t = _Foreign(xp.asarray(a, copy=True, device=device))
    p, q = xp.from_dlpack(t), xp.from_dlpack(t)
    p[1:] += q[:-1]
    np.testing.assert_array_equal(host(p), [1.0, 3.0, 5.0, 7.0])


def test_too_many_indices_say_how_to_index(device: str) -> None:
    a = xp.asarray(1.0, device=device)
    with pytest.raises(IndexError, match=r"too many indices: 1 for a 0-D array; a 0-D array is indexed by x\[\(\)\] or x\[\.\.\.\]"):
        a[0] = 2.0
    a[()] = 2.0
    with pytest.raises(IndexError, match=r"too many indices: 3 for a 2-D array; index at most 2 axes \(x.shape is \(2, 2\)\)"):
        xp.zeros((2, 2), device=device)[0, 0, 0]
