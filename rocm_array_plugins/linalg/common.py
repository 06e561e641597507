"""What the linalg fronts share: operand checks, views, the error singular input raises.

Singular or non-positive-definite input to ``inv``, ``solve``, ``cholesky`` and
``matrix_power`` (negative powers) raises ``LinAlgError``, a ValueError, as
NumPy does (the standard leaves it undefined; CuPy by default returns NaNs
instead). It is exported as ``rocm_array.linalg.LinAlgError``.
"""

from __future__ import annotations

from rocm_array import dtypes
from rocm_array.array import Array, contiguous_strides
from rocm_array.broadcast import broadcast_shapes
from rocm_array.devices import check_same
from rocm_array.dtypes import CATEGORIES, DType
from rocm_array.memory import contiguous


class LinAlgError(ValueError):
    """A matrix the operation is undefined for: singular, or not positive definite."""

    __module__ = "rocm_array.linalg"


#: What each kind of undefined input means and what to do instead, by the function that met it
#: (``"*"``: any other); on every device alike.
FAILURES: dict[str, dict[str, str]] = {
    "singular": {
        "inv": "the matrix is singular: it has no inverse; linalg.pinv(x) gives the pseudo-inverse",
        "solve": "the matrix is singular: the system has no unique solution; linalg.pinv(x1) @ x2 gives "
                 "the least-squares one",
        "*": "the matrix is singular",
    },
    "not positive definite": {
        "*": "the matrix is not positive definite: cholesky needs a Hermitian positive-definite matrix "
             "(symmetrize it, (x + x.mT) / 2, or add a small multiple of the identity)",
    },
}


def failure(name: str, kind: str) -> LinAlgError:
    """The LinAlgError of ``linalg.name`` for input of ``kind`` (a key of ``FAILURES``)."""
    said = FAILURES[kind]
    return LinAlgError(f"linalg.{name}(): {said.get(name, said['*'])}")


def operands(name: str, *xs: object, category: str) -> DType:
    """The promoted dtype of arrays ``xs`` on one device, each of ``category``; TypeError otherwise."""
    for x in xs:
        if not isinstance(x, Array):
            raise TypeError(f"{name}() expects arrays, got {type(x).__name__}")
        if x.dtype not in CATEGORIES[category]:
            raise TypeError(f"{name}() does not accept {x.dtype.name} input; it needs a {category} dtype")
    arrays: list[Array] = list(xs)  # type: ignore[arg-type]
    check_same(*arrays)
    first = arrays[0].dtype
    if all(x.dtype is first for x in arrays):  # the common case, without the promotion table
        return first
    return dtypes.result_type(*(x.dtype for x in arrays))


def matrices(name: str, x: Array, *, square: bool = False) -> None:
    """ValueError unless ``x`` is a (stack of) matrices, square ones when asked."""
    if x.ndim < 2:
        raise ValueError(f"{name}() needs an array of at least 2 dimensions, got shape {x.shape}")
    if square and x.shape[-1] != x.shape[-2]:
        raise ValueError(f"{name}() needs square matrices, got shape {x.shape}")


def floating_matrices(name: str, x: object, *, square: bool = False) -> DType:
    """The dtype of ``x``, a floating-point (stack of) matrices; TypeError/ValueError otherwise."""
    dtype = operands(name, x, category="floating-point")
    matrices(name, x, square=square)  # type: ignore[arg-type]
    return dtype


def permute(x: Array, order: tuple[int, ...]) -> Array:
    """A view of ``x`` with its axes in ``order``."""
    return x._view(tuple(x.shape[i] for i in order), tuple(x.strides[i] for i in order), x.offset)


def reshape(x: Array, shape: tuple[int, ...]) -> Array:
    """``x`` with ``shape`` (same size): a view of ``x`` or of a contiguous copy."""
    c = contiguous(x)
    return c._view(shape, contiguous_strides(shape), c.offset)


def insert_axis(x: Array, axis: int) -> Array:
    """A view of ``x`` with a new length-1 axis at position ``axis`` (in ``0..ndim``)."""
    return x._view((*x.shape[:axis], 1, *x.shape[axis:]), (*x.strides[:axis], 0, *x.strides[axis:]), x.offset)


def drop_axis(x: Array, axis: int) -> Array:
    """A view of ``x`` without its length-1 axis ``axis``."""
    return x._view((*x.shape[:axis], *x.shape[axis + 1:]), (*x.strides[:axis], *x.strides[axis + 1:]), x.offset)


def diagonal_view(x: Array, offset: int) -> Array:
    """The ``offset`` diagonals of ``x``'s last two axes as a view, on the last axis."""
    *batch, m, n = x.shape
    *bstrides, sm, sn = x.strides
    size = max(0, min(m, n - offset) if offset >= 0 else min(m + offset, n))
    start = x.offset + (offset * sn if offset >= 0 else -offset * sm) if size else x.offset
    return x._view((*batch, size), (*bstrides, sm + sn), start)


def move_axis(x: Array, source: int, destination: int) -> Array:
    """A view of ``x`` with axis ``source`` moved to ``destination`` (both in ``0..ndim-1``)."""
    order = [i for i in range(x.ndim) if i != source]
    order.insert(destination, source)
    return permute(x, tuple(order))


def broadcast_batch(name: str, *shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The broadcast of stack shapes; ValueError naming ``name`` when they do not fit."""
    return broadcast_shapes(*shapes, name=name)
