"""Broadcasting: result shapes and zero-stride views (device independent)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .array import Array

__all__ = ["broadcast_shapes", "broadcast_view"]


def broadcast_shapes(*shapes: tuple[int, ...], name: str = "") -> tuple[int, ...]:
    """The standard's broadcast of ``shapes``; ValueError when a size is negative or they do not
    fit, naming the function ``name`` (the caller's, for its users) when given."""
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i, n in enumerate(s, ndim - len(s)):
            if n == out[i] or n == 1:
                continue
            if n < 0:
                raise ValueError(f"{_caller(name)}shape {s} has a negative size; sizes are 0 or more")
            if out[i] == 1:
                out[i] = n
            else:
                raise ValueError(f"{_caller(name)}shapes {', '.join(map(str, shapes))} cannot be broadcast together "
                                 f"(each size must match the others' or be 1)")
    return tuple(out)


def broadcast_view(x: Array, shape: tuple[int, ...], name: str = "") -> Array:
    """``x`` seen with ``shape`` (stride 0 along broadcast axes); shares x's buffer. ValueError
    naming ``name`` (when given) if ``x`` does not broadcast to ``shape``."""
    if x.shape == shape:
        return x
    lead = len(shape) - x.ndim
    if lead < 0 or broadcast_shapes(x.shape, shape, name=name) != shape:
        raise ValueError(f"{_caller(name)}cannot broadcast shape {x.shape} to {shape}")
    strides = [0] * lead + [0 if n == 1 and m != 1 else s
                            for n, m, s in zip(x.shape, shape[lead:], x.strides)]
    return x._view(shape, tuple(strides), x.offset)


def _caller(name: str) -> str:
    return f"{name}(): " if name else ""
