"""Broadcasting: result shapes and zero-stride views (device independent)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .array import Array

__all__ = ["broadcast_shapes", "broadcast_view"]


def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The standard's broadcast of ``shapes``; ValueError naming them when they do not fit."""
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i, n in enumerate(s, ndim - len(s)):
            if n == out[i] or n == 1:
                continue
            if out[i] == 1:
                out[i] = n
            else:
                raise ValueError(f"shapes {', '.join(map(str, shapes))} cannot be broadcast together")
    return tuple(out)


def broadcast_view(x: Array, shape: tuple[int, ...]) -> Array:
    """``x`` seen with ``shape`` (stride 0 along broadcast axes); shares x's buffer."""
    if x.shape == shape:
        return x
    lead = len(shape) - x.ndim
    if lead < 0 or broadcast_shapes(x.shape, shape) != shape:
        raise ValueError(f"cannot broadcast shape {x.shape} to {shape}")
    strides = [0] * lead + [0 if n == 1 and m != 1 else s
                            for n, m, s in zip(x.shape, shape[lead:], x.strides)]
    return x._view(shape, tuple(strides), x.offset)
