"""Views made by stride arithmetic on an Array's metadata, and the copies that lay one out anew.

One module for every plugin (they had three sets of these, and 58 raw ``_view`` calls): a view
shares its array's memory and costs no device work; ``copy_as`` and ``moved_last`` copy through
the memory primitives. Nothing here depends on the device.
"""

from __future__ import annotations

import math

from . import memory
from .array import Array, contiguous_strides
from .dtypes import DType

__all__ = ["permuted", "slab", "pick", "insert_unit", "flat_view", "copy_as", "moved_last", "moved_back"]


def permuted(x: Array, order: tuple[int, ...]) -> Array:
    """The view of ``x`` whose axis ``i`` is ``x``'s axis ``order[i]``."""
    return x._view(tuple(x.shape[i] for i in order), tuple(x.strides[i] for i in order), x.offset)


def slab(x: Array, axis: int, start: int, stop: int) -> Array:
    """The view ``x[..., start:stop, ...]`` along ``axis`` (``0 <= start <= stop <= n``)."""
    shape = list(x.shape)
    shape[axis] = stop - start
    return x._view(tuple(shape), x.strides, x.offset + start * x.strides[axis])


def pick(x: Array, axis: int, i: int) -> Array:
    """The view ``x[..., i, ...]`` along ``axis``, which drops that axis (``0 <= i < n``)."""
    return x._view(x.shape[:axis] + x.shape[axis + 1:], x.strides[:axis] + x.strides[axis + 1:],
                   x.offset + i * x.strides[axis])


def insert_unit(x: Array, axis: int) -> Array:
    """``x`` with a new size-1 axis at position ``axis`` (``0 <= axis <= ndim``)."""
    stride = x.strides[axis] * x.shape[axis] if axis < x.ndim else 1
    return x._view(x.shape[:axis] + (1,) + x.shape[axis:], x.strides[:axis] + (stride,) + x.strides[axis:],
                   x.offset)


def flat_view(x: Array, shape: tuple[int, ...]) -> Array:
    """The contiguous ``x`` seen with another shape of the same size."""
    assert x.is_contiguous and math.prod(shape) == x.size
    return x._view(shape, contiguous_strides(shape), x.offset)


def copy_as(x: Array, dtype: DType | None = None) -> Array:
    """A new contiguous array holding ``x``'s elements, cast to ``dtype`` when given."""
    out = memory.empty(x.shape, x.dtype if dtype is None else dtype, x.device)
    memory.copy_into(out, x)
    return out


def moved_last(x: Array, axis: int, dtype: DType | None = None) -> tuple[Array, tuple[int, ...]]:
    """``x`` contiguous, of ``dtype`` (default: its own), with ``axis`` moved last (a view of ``x`` when
    it is all that already, else a copy), and the axis order it has (for ``moved_back``)."""
    order = tuple(d for d in range(x.ndim) if d != axis) + (axis,)
    return memory.contiguous(permuted(x, order), dtype), order


def moved_back(y: Array, order: tuple[int, ...]) -> Array:
    """The view of ``y`` (laid out in ``order``, as ``moved_last`` gives it) in the original axis order."""
    shape, strides = [0] * y.ndim, [0] * y.ndim
    for pos, d in enumerate(order):
        shape[d], strides[d] = y.shape[pos], y.strides[pos]
    return y._view(tuple(shape), tuple(strides), y.offset)
