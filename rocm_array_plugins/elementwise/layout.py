"""Layout helpers shared by creation, manipulation and indexing.

Normalizing axes, views made by stride arithmetic on Array metadata, and fresh
copies through the memory primitives: nothing here depends on the device.
"""

from __future__ import annotations

from typing import Any

from rocm_array import memory
from rocm_array.array import Array
from rocm_array.dtypes import DType


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


def copy_as(x: Array, dtype: DType | None = None) -> Array:
    """A new contiguous array holding ``x``'s elements, cast to ``dtype`` when given."""
    out = memory.empty(x.shape, x.dtype if dtype is None else dtype, x.device)
    memory.copy_into(out, x)
    return out
