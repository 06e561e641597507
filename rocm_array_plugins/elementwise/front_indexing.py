"""Indexing: ``Array.__getitem__``, ``Array.__setitem__``, ``take`` and ``take_along_axis``.

Basic indexing (integers, slices, ellipsis, None) is stride arithmetic and
returns views. Integer arrays and boolean masks reduce to one canonical form,
"the leading k axes of a view, indexed by k index arrays of one shape", which
is all the device backs see: ``GATHER`` and ``SCATTER``, plus ``MASK_INDICES``
(a mask's row-major True positions, one index array per mask axis).
NumPy's placement rule decides where the indexed dimensions land: where the
first array index was, when the array indices are adjacent, else in front.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from rocm_array import dtypes, memory
from rocm_array.array import Array
from rocm_array.axes import normalize_axis
from rocm_array.broadcast import broadcast_shapes, broadcast_view
from rocm_array.devices import check_same
from rocm_array.dtypes import SCALARS
from rocm_array.hookspecs import Impl

from .backs import GATHER, MASK_INDICES, SCATTER, WHERE
from rocm_array.operands import scalar_array
from rocm_array.views import copy_as, insert_unit, permuted


# -- key parsing --------------------------------------------------------------------------------
@dataclass
class _Advanced:
    """The array part of a key: the view axes it indexes, its index arrays and their shape."""

    axes: list[int]
    indices: list[Array]
    shape: tuple[int, ...]
    in_bounds: bool = False  # every index came from a mask or a checked int: the backs skip their check

    def place(self) -> int:
        """Where the indexed dimensions go in the result (NumPy's rule)."""
        adjacent = self.axes == list(range(self.axes[0], self.axes[0] + len(self.axes)))
        return self.axes[0] if adjacent else 0

    def canonical(self, v: Array) -> Array:
        """``v`` with the indexed axes first, in key order."""
        return permuted(v, tuple(self.axes) + tuple(i for i in range(v.ndim) if i not in self.axes))


def _is_int(k: Any) -> bool:
    return not isinstance(k, (bool, np.bool_, Array)) and hasattr(type(k), "__index__")


def _sliced(k: slice, n: int, s: int) -> tuple[int, int, int]:
    """An axis of ``n`` elements ``s`` apart, sliced by ``k``: its length, its stride, and where it
    starts (elements from the axis's start; 0 when it is empty)."""
    start, stop, step = k.indices(n)
    length = len(range(start, stop, step))
    return length, s * step, start * s if length else 0


def _basic(x: Array, key: Any) -> Array | None:
    """The view a key of Python slices and ints selects, an item for each of x's leading axes or fewer
    (a loop's ``u[1:-1, 2:]``), found without ``_parse``'s general walk (a third of a small stencil
    op's host time); None for any other key, or an int out of range, which ``_parse`` takes (and
    raises for, in its order)."""
    items = key if type(key) is tuple else (key,)
    if len(items) > x.ndim:
        return None
    shape: list[int] = []
    strides: list[int] = []
    offset = x._offset
    for d, k in enumerate(items):
        n, s = x._shape[d], x._strides[d]
        if type(k) is slice:
            length, stride, at = _sliced(k, n, s)
            shape.append(length)
            strides.append(stride)
            offset += at
        elif type(k) is int and -n <= k < n:
            offset += (k % n) * s
        else:
            return None
    rest = len(items)
    return x._view((*shape, *x._shape[rest:]), (*strides, *x._strides[rest:]), offset)


def _parse(x: Array, key: Any) -> tuple[Array, _Advanced | None]:
    """The basic view a key selects, with array-indexed axes left whole, and the array part if any."""
    items = list(key) if isinstance(key, tuple) else [key]
    entries: list[Any] = []  # None, Ellipsis, slice, int, or ("array", Array)
    for k in items:
        if k is None or k is Ellipsis or isinstance(k, slice) or _is_int(k):
            entries.append(k)
        elif isinstance(k, Array):
            if k.dtype is dtypes.bool:
                if k.ndim == 0:
                    raise IndexError("a 0-D boolean index must be the only index")
                entries.append(("mask", k))
            elif k.dtype.kind in "iu":
                entries.append(int(k) if k.ndim == 0 else ("array", k))
            else:
                raise IndexError(f"arrays used as indices must have an integer or bool dtype, not {k.dtype.name}")
        elif isinstance(k, (bool, np.bool_)):
            raise IndexError("a boolean index must be the only index")
        else:
            raise IndexError(f"only integers, slices, ellipsis, None and integer or boolean arrays are "
                             f"valid indices, not {type(k).__name__}")
    if sum(e is Ellipsis for e in entries) > 1:
        raise IndexError("an index can only have a single ellipsis")
    used = sum(e[1].ndim if isinstance(e, tuple) and e[0] == "mask" else 1
               for e in entries if e is not None and e is not Ellipsis)
    if used > x.ndim:
        hint = ("; a 0-D array is indexed by x[()] or x[...]" if x.ndim == 0 else
                f"; index at most {x.ndim} axes (x.shape is {x.shape})")
        raise IndexError(f"too many indices: {used} for a {x.ndim}-D array{hint}")
    if Ellipsis not in entries:
        entries.append(Ellipsis)
    at = entries.index(Ellipsis)
    entries[at:at + 1] = [slice(None)] * (x.ndim - used)
    arrays = any(isinstance(e, tuple) for e in entries)

    shape: list[int] = []
    strides: list[int] = []
    offset = x.offset
    adv_axes: list[int] = []
    adv: list[Array | int] = []
    d = 0
    for e in entries:
        if e is None:
            shape.append(1)
            strides.append(0)
            continue
        if isinstance(e, tuple) and e[0] == "mask":
            mask = e[1]
            if any(m not in (n, 0) for m, n in zip(mask.shape, x.shape[d:])):
                raise IndexError(f"boolean index of shape {mask.shape} does not match the indexed "
                                 f"dimensions {x.shape[d:d + mask.ndim]}")
            check_same(x, mask)
            found = MASK_INDICES[mask.device.kind](mask)
            for i in found:
                adv_axes.append(len(shape))
                adv.append(i)
                shape.append(x.shape[d])
                strides.append(x.strides[d])
                d += 1
            continue
        n, s = x.shape[d], x.strides[d]
        if isinstance(e, slice):
            length, stride, at = _sliced(e, n, s)
            shape.append(length)
            strides.append(stride)
            offset += at
        else:
            i = e if isinstance(e, tuple) else operator.index(e)
            if isinstance(i, int) and not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {d} of size {n}")
            if arrays:
                adv_axes.append(len(shape))
                adv.append(i[1] if isinstance(i, tuple) else i)
                shape.append(n)
                strides.append(s)
            else:
                offset += (cast(int, i) % n) * s
        d += 1
    view = x._view(tuple(shape), tuple(strides), offset)
    if not adv:
        return view, None
    arrays_in = [a for a in adv if isinstance(a, Array)]
    check_same(x, *arrays_in)
    common = broadcast_shapes(*(a.shape for a in arrays_in))
    indices = [broadcast_view(a if isinstance(a, Array) else memory.full((), a, dtypes.int64, x.device), common)
               for a in adv]
    in_bounds = not any(isinstance(e, tuple) and e[0] == "array" for e in entries)
    return view, _Advanced(adv_axes, indices, common, in_bounds)


def _gather(view: Array, adv: _Advanced, name: str = "") -> Array:
    """The gather of ``adv``'s indices from ``view``; an out-of-range index is an IndexError, naming
    the function ``name`` where one is called (``x[i]`` has none)."""
    try:
        out = GATHER[view.device.kind](adv.canonical(view), adv.indices, adv.shape, adv.in_bounds)
    except IndexError as exc:
        if not name:
            raise
        raise IndexError(f"{name}(): {exc}") from None
    k, p = len(adv.shape), adv.place()
    rest = out.ndim - k
    return permuted(out, tuple(range(k, k + p)) + tuple(range(k)) + tuple(range(k + p, k + rest)))


def _lone(key: Any) -> Any:
    """The only item of a 1-tuple key, else the key itself (``x[m,]`` is ``x[m]``)."""
    return key[0] if isinstance(key, tuple) and len(key) == 1 else key


def _sole_bool(x: Array, key: Any) -> bool | None:
    """The value of a key that is a lone Python bool or 0-D boolean array, else None."""
    key = _lone(key)
    if isinstance(key, (bool, np.bool_)):
        return bool(key)
    if isinstance(key, Array) and key.dtype is dtypes.bool and key.ndim == 0:
        check_same(x, key)
        return bool(key)
    return None


def _numpy_keys(x: Array, key: Any) -> Any:
    """``key`` with its NumPy integer and boolean arrays as index arrays on x's device (as CuPy and
    PyTorch take them); IndexError for NumPy arrays of other dtypes."""
    if isinstance(key, np.ndarray):
        if key.dtype.kind not in "biu":
            raise IndexError(f"NumPy arrays used as indices must have an integer or bool dtype, not {key.dtype}")
        return memory.from_host(np.ascontiguousarray(key), dtypes.from_numpy(key.dtype), x.device)
    if isinstance(key, tuple) and any(isinstance(k, np.ndarray) for k in key):
        return tuple(_numpy_keys(x, k) for k in key)
    return key


def getitem(x: Array, key: Any, /) -> Array:
    view = _basic(x, key)
    if view is not None:
        return view
    key = _numpy_keys(x, key)
    flag = _sole_bool(x, key)
    if flag is not None:
        return insert_unit(x, 0) if flag else memory.empty((0, *x.shape), x.dtype, x.device)
    view, adv = _parse(x, key)
    return view if adv is None else _gather(view, adv)


def _value(x: Array, value: Any) -> Array:
    """The value of an assignment as an array of x's device, checked against x's dtype (the standard's rules)."""
    value = dtypes.python_scalar(value)
    if isinstance(value, SCALARS):
        dt = dtypes.scalar_dtype(value, x.dtype)
        if dt is not x.dtype:
            raise TypeError(f"cannot assign a Python {type(value).__name__} to a {x.dtype.name} array")
        return scalar_array(value, dt, x, "__setitem__")
    if not isinstance(value, Array):
        raise TypeError(f"the value assigned must be an array or a Python scalar, not {type(value).__name__}")
    check_same(x, value)
    if dtypes.promote(value.dtype, x.dtype) is not x.dtype:
        raise TypeError(f"cannot assign a {value.dtype.name} array to a {x.dtype.name} array without "
                        "changing its dtype; use astype() first")
    return value


def setitem(x: Array, key: Any, value: Any, /) -> None:
    x._check_writable("__setitem__")
    memory.before_write(x)
    key = _numpy_keys(x, key)
    value = _value(x, value)
    view = _basic(x, key)
    if view is not None:
        memory.copy_into(view, broadcast_view(value, view.shape, name="__setitem__"))
        return
    flag = _sole_bool(x, key)
    if flag is not None:
        target = insert_unit(x, 0) if flag else memory.empty((0, *x.shape), x.dtype, x.device)
        memory.copy_into(target, broadcast_view(value, target.shape, name="__setitem__"))
        return
    mask = _lone(key)
    if (isinstance(mask, Array) and mask.dtype is dtypes.bool and 0 < mask.ndim <= x.ndim
            and mask.shape == x.shape[:mask.ndim] and value.ndim <= x.ndim - mask.ndim):
        # The value is the same for every selected row: a where over x, with no count of the
        # selected elements to wait for (PyTorch's masked_fill; std[std == 0] = 1 in scikit-learn).
        check_same(x, mask)
        cond = broadcast_view(mask._view(mask.shape + (1,) * (x.ndim - mask.ndim),
                                         mask.strides + (0,) * (x.ndim - mask.ndim), mask.offset), x.shape)
        memory.copy_into(x, WHERE[x.device.kind](cond, broadcast_view(value, x.shape, name="__setitem__"), x, x.dtype,
                                                 x.shape))
        return
    view, adv = _parse(x, key)
    if adv is None:
        memory.copy_into(view, broadcast_view(value, view.shape, name="__setitem__"))
        return
    k, p = len(adv.shape), adv.place()
    rest = [n for i, n in enumerate(view.shape) if i not in adv.axes]
    result = (*rest[:p], *adv.shape, *rest[p:])
    value = broadcast_view(value, result, name="__setitem__")
    # From the result's order to the canonical one: indexed dimensions first.
    value = permuted(value, tuple(range(p, p + k)) + tuple(range(p)) + tuple(range(p + k, len(result))))
    if value.dtype is not x.dtype:
        value = copy_as(value, x.dtype)
    SCATTER[x.device.kind](adv.canonical(view), adv.indices, value, adv.in_bounds)


def _index_array(name: str, x: Any, indices: Any) -> None:
    if not isinstance(x, Array) or not isinstance(indices, Array):
        raise TypeError(f"{name}() expects arrays, got {type(x).__name__} and {type(indices).__name__}")
    if indices.dtype.kind not in "iu":
        raise TypeError(f"{name}(): indices must have an integer dtype, not {indices.dtype.name}")
    check_same(x, indices)


def take(x: Array, indices: Array | int, /, *, axis: int | None = None) -> Array:
    """Elements of ``x`` at ``indices`` along ``axis``.

    Parameters
    ----------
    x : Array
        The input array.
    indices : Array or int
        An integer array of positions (negative ones count from the end); an int, as NumPy takes it,
        drops the axis.
    axis : int or None, optional
        Required unless ``x`` is 1-D.

    Returns
    -------
    Array
        A new array: ``x``'s shape with the axis replaced by ``indices``' shape.

    Raises
    ------
    TypeError
        Indices that are not an integer array or int.
    ValueError
        No axis for an x of several dimensions.
    IndexError
        An index out of bounds (checked on the device).

    Notes
    -----
    Devices: one gather kernel on a GPU (``rocm_array_kernels/indexing``), NumPy on ``cpu``.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.take(xp.asarray([10, 20, 30], device="cpu"), xp.asarray([2, 0], device="cpu"))
    Array([30, 10], dtype=int64, device=cpu)
    """
    if isinstance(x, Array) and _is_int(indices):
        if axis is None and x.ndim != 1:
            raise ValueError(f"take(): axis is required for a {x.ndim}-D array")
        ax = normalize_axis(0 if axis is None else axis, x.ndim, "take")
        return getitem(x, (slice(None),) * ax + (operator.index(indices),))
    _index_array("take", x, indices)
    if axis is None:
        if x.ndim != 1:
            raise ValueError(f"take(): axis is required for a {x.ndim}-D array")
        axis = 0
    ax = normalize_axis(axis, x.ndim, "take")
    index = cast(Array, indices)  # (_index_array checked it)
    return _gather(x, _Advanced([ax], [index], index.shape), "take")


def take_along_axis(x: Array, indices: Array, /, *, axis: int = -1) -> Array:
    """Elements of ``x`` at ``indices`` matched along ``axis`` (as argsort's output picks them).

    Parameters
    ----------
    x : Array
        The input array.
    indices : Array
        An integer array of ``x``'s number of dimensions; it broadcasts with ``x`` along the other
        axes.
    axis : int, optional
        Default: -1.

    Returns
    -------
    Array
        A new array of the broadcast shape with ``indices``' length along ``axis``.

    Raises
    ------
    TypeError
        Indices that are not an integer array.
    ValueError
        indices with another number of dimensions.
    IndexError
        An index out of bounds.

    Notes
    -----
    Devices: one gather kernel on a GPU, NumPy on ``cpu``.

    Examples
    --------
    >>> import rocm_array as xp
    >>> x = xp.asarray([[3, 1, 2]], device="cpu")
    >>> xp.take_along_axis(x, xp.argsort(x, axis=1), axis=1)
    Array([[1, 2, 3]], dtype=int64, device=cpu)
    """
    _index_array("take_along_axis", x, indices)
    if indices.ndim != x.ndim:
        raise ValueError(f"take_along_axis(): indices must have x's {x.ndim} dimensions, not {indices.ndim}")
    ax = normalize_axis(axis, x.ndim, "take_along_axis")
    lead = broadcast_shapes(x.shape[:ax] + (1,) + x.shape[ax + 1:],
                            indices.shape[:ax] + (1,) + indices.shape[ax + 1:])
    out_shape = lead[:ax] + (indices.shape[ax],) + lead[ax + 1:]
    xb = broadcast_view(x, lead[:ax] + (x.shape[ax],) + lead[ax + 1:])
    index = []
    for d, n in enumerate(out_shape):
        if d == ax:
            index.append(broadcast_view(indices, out_shape))
            continue
        # The coordinate along axis d, as an array shaped to broadcast along that axis only.
        r = memory.from_host(np.arange(n), dtypes.int64, x.device)
        index.append(r._view(out_shape, tuple(1 if i == d else 0 for i in range(len(out_shape))), r.offset))
    return _gather(xb, _Advanced(list(range(x.ndim)), index, out_shape), "take_along_axis")


IMPLS: list[Impl] = [
    Impl("Array.__getitem__", getitem),
    Impl("Array.__setitem__", setitem),
    Impl("take", take),
    Impl("take_along_axis", take_along_axis),
]
