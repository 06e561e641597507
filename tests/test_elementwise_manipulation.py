"""Manipulation functions against NumPy on every device; views must share the buffer."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import rocm_array as xp
from helpers import host



def grid(shape: tuple[int, ...], device: str, dtype=xp.int64) -> tuple[xp.Array, np.ndarray]:
    ref = np.arange(math.prod(shape), dtype=dtype.numpy).reshape(shape)
    return xp.asarray(ref, device=device), ref


def shares(a: xp.Array, b: xp.Array) -> bool:
    return a._buf is b._buf


def test_broadcast(device):
    x, ref = grid((3, 1), device)
    out = xp.broadcast_to(x, (2, 3, 4))
    assert shares(out, x) and out.strides == (0, 1, 0)
    np.testing.assert_array_equal(host(out), np.broadcast_to(ref, (2, 3, 4)))
    y, _ = grid((4,), device)
    a, b = xp.broadcast_arrays(x, y)
    assert a.shape == b.shape == (3, 4)
    assert isinstance(xp.broadcast_arrays(x, y), tuple) and xp.broadcast_arrays() == ()
    assert xp.broadcast_shapes((2, 1), (3,), ()) == (2, 3) and xp.broadcast_shapes() == ()
    with pytest.raises(ValueError):
        xp.broadcast_to(x, (3, 2, 1))
    with pytest.raises(ValueError, match=r"broadcast_shapes\(\): shapes \(2,\), \(3,\) cannot be broadcast"):
        xp.broadcast_shapes((2,), (3,))
    for call in (lambda: xp.broadcast_to(x, 3), lambda: xp.broadcast_to(x, (True, 3, 1)),
                 lambda: xp.reshape(x, (True, 12)), lambda: xp.tile(x, (True,)), lambda: xp.zeros((True,))):
        with pytest.raises(TypeError, match=r"^\w+\(\): (shape|repetitions) must be"):  # (bools are not sizes)
            call()
    for call in (lambda: xp.broadcast_to(x, (-1, 3, 1)), lambda: xp.broadcast_shapes((-1,), (1,))):
        with pytest.raises(ValueError, match="negative size"):
            call()
    with pytest.raises(ValueError, match=r"add\(\): shapes"):
        xp.add(x, xp.ones((2, 2), device=device))


@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_concat(device, axis):
    a, ra = grid((2, 3), device, xp.int8)
    b, rb = grid((2, 3), device, xp.float32)
    out = xp.concat((a, b[:, ::-1]), axis=axis)
    assert out.dtype == xp.float32
    want = np.concatenate([ra.astype(np.float32), rb[:, ::-1]], axis=axis)
    np.testing.assert_array_equal(host(out), want)


def test_concat_errors(device):
    a, _ = grid((2, 3), device)
    with pytest.raises(ValueError):
        xp.concat([a, a[:, :2]], axis=0)
    with pytest.raises(ValueError):
        xp.concat([])
    with pytest.raises(IndexError):
        xp.concat([a], axis=2)
    with pytest.raises(TypeError):
        xp.concat([a, xp.zeros((2, 3), dtype=xp.bool, device=device)])


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_stack_unstack(device, axis):
    a, ra = grid((2, 3), device)
    out = xp.stack([a, a.T.T, a[::-1]], axis=axis)
    np.testing.assert_array_equal(host(out), np.stack([ra, ra, ra[::-1]], axis=axis))
    parts = xp.unstack(out, axis=axis)
    assert isinstance(parts, tuple) and len(parts) == 3
    assert all(shares(p, out) for p in parts)
    np.testing.assert_array_equal(host(parts[2]), ra[::-1])
    with pytest.raises(ValueError):
        xp.stack([a, a[:1]])


def test_expand_squeeze(device):
    x, ref = grid((2, 3), device)
    assert xp.expand_dims(x, 0).shape == (1, 2, 3)
    assert xp.expand_dims(x, axis=-1).shape == (2, 3, 1)
    e = xp.expand_dims(x, axis=(0, -1, 2))
    assert e.shape == np.expand_dims(ref, (0, -1, 2)).shape and shares(e, x)
    np.testing.assert_array_equal(host(xp.squeeze(e, axis=(0, 2))), ref[..., None])
    with pytest.raises(IndexError):
        xp.expand_dims(x, 3)
    with pytest.raises(ValueError):
        xp.expand_dims(x, (0, 0))
    with pytest.raises(ValueError):
        xp.squeeze(x, 0)
    with pytest.raises(IndexError):
        xp.squeeze(x, 5)


def test_permute_moveaxis_flip(device):
    x, ref = grid((2, 3, 4), device)
    p = xp.permute_dims(x, (2, 0, -2))
    assert shares(p, x)
    np.testing.assert_array_equal(host(p), np.transpose(ref, (2, 0, 1)))
    np.testing.assert_array_equal(host(xp.moveaxis(x, (0, 1), (-1, 0))), np.moveaxis(ref, (0, 1), (-1, 0)))
    np.testing.assert_array_equal(host(xp.flip(x)), np.flip(ref))
    np.testing.assert_array_equal(host(xp.flip(x, axis=(0, -1))), np.flip(ref, (0, -1)))
    with pytest.raises(ValueError):
        xp.permute_dims(x, (0, 1))
    with pytest.raises(ValueError):
        xp.permute_dims(x, (0, 0, 1))
    with pytest.raises(ValueError):
        xp.moveaxis(x, (0, 1), 2)


@settings(max_examples=40, deadline=None)
@given(data=st.data(), shape=hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4))
def test_reshape_matches_numpy(data, shape):
    ref = np.arange(math.prod(shape)).reshape(shape)
    key = data.draw(hnp.basic_indices(shape, allow_newaxis=False, allow_ellipsis=True))
    ref = ref[key]
    order = data.draw(st.permutations(range(ref.ndim)))
    ref = ref.transpose(order)
    x = xp.permute_dims(xp.asarray(np.arange(math.prod(shape)).reshape(shape))[key], tuple(order))
    new = data.draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=6)
                    .filter(lambda s: math.prod(s) == ref.size)) if ref.size <= 6 ** 4 else (ref.size,)
    out = xp.reshape(x, new)
    np.testing.assert_array_equal(host(out), ref.reshape(new))
    view = np.shares_memory(ref.reshape(new), ref)
    if ref.size > 1:
        assert shares(out, x) == view
    if not view and ref.size > 1:
        with pytest.raises(ValueError):
            xp.reshape(x, new, copy=False)


def test_reshape_rules(device):
    x, ref = grid((2, 3), device)
    v = xp.reshape(x, (3, -1))
    v[0, 0] = 100
    assert int(x[0, 0]) == 100  # a view writes through
    c = xp.reshape(x, (6,), copy=True)
    c[0] = -5
    assert int(x[0, 0]) == 100
    t = xp.reshape(x.T, (6,))
    np.testing.assert_array_equal(host(t), np.array([100, 3, 1, 4, 2, 5]))
    with pytest.raises(ValueError):
        xp.reshape(x.T, (6,), copy=False)
    with pytest.raises(ValueError):
        xp.reshape(x, (4, -1))
    with pytest.raises(ValueError):
        xp.reshape(x, (-1, -1))
    assert xp.reshape(xp.zeros((0, 3), device=device), (-1, 3)).shape == (0, 3)
    with pytest.raises(ValueError):
        xp.reshape(xp.zeros((0, 3), device=device), (0, -1))


@pytest.mark.parametrize("reps", [(2,), (2, 1), (1, 3), (2, 0, 2), ()])
def test_tile(device, reps):
    x, ref = grid((2, 3), device)
    np.testing.assert_array_equal(host(xp.tile(x[:, ::-1], reps)), np.tile(ref[:, ::-1], reps))


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_repeat(device, axis):
    x, ref = grid((2, 3), device)
    np.testing.assert_array_equal(host(xp.repeat(x, 2, axis=axis)), np.repeat(ref, 2, axis=axis))
    n = ref.size if axis is None else ref.shape[axis]
    counts = np.arange(n) % 3
    np.testing.assert_array_equal(host(xp.repeat(x, xp.asarray(counts, device=device), axis=axis)),
                                  np.repeat(ref, counts, axis=axis))
    np.testing.assert_array_equal(host(xp.repeat(x, xp.asarray([3], dtype=xp.uint8, device=device), axis=axis)),
                                  np.repeat(ref, 3, axis=axis))


def test_repeat_errors(device):
    x, _ = grid((2, 3), device)
    with pytest.raises(ValueError):
        xp.repeat(x, -1)
    with pytest.raises(TypeError):
        xp.repeat(x, xp.asarray([1.0], device=device))
    with pytest.raises(ValueError):
        xp.repeat(x, xp.asarray([1, 2], device=device), axis=1)
    with pytest.raises(TypeError):
        xp.repeat(x, 1.5)


@pytest.mark.parametrize(("shift", "axis"), [(1, None), (-7, None), (2, 1), ((1, -1), (0, 1)), (3, (0, 1)),
                                             ((1, 1), (1, 1))])
def test_roll(device, shift, axis):
    x, ref = grid((3, 4), device)
    np.testing.assert_array_equal(host(xp.roll(x, shift, axis=axis)), np.roll(ref, shift, axis=axis))


def test_roll_errors(device):
    x, _ = grid((3, 4), device)
    with pytest.raises(ValueError):
        xp.roll(x, (1, 2), axis=0)
    with pytest.raises(IndexError):
        xp.roll(x, 1, axis=2)
    assert xp.roll(xp.zeros((0,), device=device), 3).shape == (0,)


def test_axis_errors_are_both_index_and_value_errors(device):
    """Out-of-range and repeated axes raise AxisError (an IndexError and a ValueError, as NumPy's),
    here as in the reductions, naming the function."""
    from rocm_array.axes import AxisError

    x, _ = grid((2, 3), device)
    calls = {"concat": lambda: xp.concat([x, x], axis=3), "stack": lambda: xp.stack([x, x], axis=-4),
             "unstack": lambda: xp.unstack(x, axis=2), "expand_dims": lambda: xp.expand_dims(x, axis=5),
             "squeeze": lambda: xp.squeeze(x, axis=(0, 0)), "permute_dims": lambda: xp.permute_dims(x, (0, 0)),
             "moveaxis": lambda: xp.moveaxis(x, 2, 0), "flip": lambda: xp.flip(x, axis=(0, 0)),
             "roll": lambda: xp.roll(x, 1, axis=2), "repeat": lambda: xp.repeat(x, 2, axis=-3),
             "take": lambda: xp.take(x, xp.asarray([0], device=device), axis=2),
             "take_along_axis": lambda: xp.take_along_axis(x, xp.zeros((2, 3), dtype=xp.int64, device=device), axis=2)}
    for name, call in calls.items():
        with pytest.raises(AxisError, match=rf"^{name}\(\): "):
            call()
    with pytest.raises(TypeError):
        xp.permute_dims(x, None)
