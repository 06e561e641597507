"""Manipulation functions (fronts), all device independent.

Most are views made by stride arithmetic (they share the input's buffer); the
rest (concat, stack, tile, repeat, roll, reshape when the layout forbids a
view) copy through ``memory.copy_into`` into slices of a new array, so no
manipulation function needs a back of its own.
"""

from __future__ import annotations

import math
from typing import Any, Sequence, cast

import numpy as np

from rocm_array import broadcast, dtypes, memory
from rocm_array.array import Array, contiguous_strides
from rocm_array.axes import flag, int_tuple, normalize_axes, normalize_axis
from rocm_array.devices import check_same
from rocm_array.hookspecs import Impl

from .front_indexing import take
from rocm_array.views import copy_as, insert_unit, permuted, pick, slab


def _check_array(name: str, x: Any) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"{name}() expected an array, got {type(x).__name__}")
    return x


def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The shape that arrays of ``shapes`` broadcast to, by the standard's rules.

    Parameters
    ----------
    *shapes : tuple of ints
        The shapes.

    Returns
    -------
    tuple of ints
        The broadcast shape.

    Raises
    ------
    ValueError
        Shapes that do not broadcast together.

    Notes
    -----
    Pure shape arithmetic on the host.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.broadcast_shapes((3, 1), (1, 4))
    (3, 4)
    """
    return broadcast.broadcast_shapes(*(int_tuple(s, "broadcast_shapes") for s in shapes), name="broadcast_shapes")


def broadcast_to(x: Array, /, shape: tuple[int, ...]) -> Array:
    """A read-only view of ``x`` broadcast to ``shape``.

    Parameters
    ----------
    x : Array
        The input array.
    shape : tuple of ints
        The target shape.

    Returns
    -------
    Array
        A view with stride 0 along broadcast axes; writing to it is a ValueError (the write would
        land on one element many times and change ``x``).

    Raises
    ------
    ValueError
        A shape ``x`` does not broadcast to.

    Notes
    -----
    Devices: stride arithmetic only: the result is a view of ``x``'s buffer, no kernel runs.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.broadcast_to(xp.asarray([1, 2, 3], device="cpu"), (2, 3))
    Array([[1, 2, 3],
           [1, 2, 3]], dtype=int64, device=cpu)
    """
    return broadcast.broadcast_view(_check_array("broadcast_to", x), int_tuple(shape, "broadcast_to"), name="broadcast_to")


def broadcast_arrays(*arrays: Array) -> tuple[Array, ...]:
    """Views of ``arrays`` broadcast to their common shape.

    Parameters
    ----------
    *arrays : Array
        On one device.

    Returns
    -------
    tuple of Array
        Read-only views (as ``broadcast_to``'s).

    Raises
    ------
    ValueError
        Shapes that do not broadcast, or arrays on several devices.

    Notes
    -----
    Devices: stride arithmetic only: the result is a view of ``x``'s buffer, no kernel runs.

    Examples
    --------
    >>> import rocm_array as xp
    >>> a, b = xp.broadcast_arrays(xp.asarray([[1], [2]], device="cpu"), xp.asarray([10, 20, 30], device="cpu"))
    >>> b.shape
    (2, 3)
    """
    for a in arrays:
        _check_array("broadcast_arrays", a)
    if arrays:
        check_same(*arrays)
    shape = broadcast.broadcast_shapes(*(a.shape for a in arrays), name="broadcast_arrays")
    return tuple(broadcast.broadcast_view(a, shape) for a in arrays)


def _joined(name: str, arrays: Sequence[Array]) -> tuple[Array, ...]:
    """The arrays to join, checked: at least one, all Arrays on one device."""
    if not isinstance(arrays, (tuple, list)):
        raise TypeError(f"{name}() expected a tuple or list of arrays, got {type(arrays).__name__}")
    if not arrays:
        raise ValueError(f"{name}() needs at least one array")
    for a in arrays:
        _check_array(name, a)
    check_same(*arrays)
    return tuple(arrays)


def concat(arrays: tuple[Array, ...] | list[Array], /, *, axis: int | None = 0) -> Array:
    """Arrays joined along an existing axis.

    Parameters
    ----------
    arrays : tuple or list of Array
        At least one; the same shape but along ``axis``, on one device.
    axis : int or None, optional
        The axis to join along; None flattens each array first. Default: 0.

    Returns
    -------
    Array
        A new array; its dtype is the inputs' promoted dtype.

    Raises
    ------
    TypeError
        Not a sequence of arrays, or dtypes without a promoted dtype.
    ValueError
        No arrays, shapes that differ beyond ``axis``, or several devices.
    AxisError
        An axis out of range or repeated (both an IndexError and a ValueError, as NumPy's).

    Notes
    -----
    Devices: one strided copy on the inputs' device (NumPy on ``cpu``, the copy kernels of
    ``rocm_array_kernels/copy`` on a GPU).

    Examples
    --------
    >>> import rocm_array as xp
    >>> a = xp.asarray([[1, 2]], device="cpu")
    >>> xp.concat([a, a], axis=0)
    Array([[1, 2],
           [1, 2]], dtype=int64, device=cpu)
    """
    arrays = _joined("concat", arrays)
    if axis is None:
        arrays = tuple(reshape(a, (-1,)) for a in arrays)
        axis = 0
    ndim = arrays[0].ndim
    ax = normalize_axis(axis, ndim, "concat")
    rest = arrays[0].shape[:ax] + arrays[0].shape[ax + 1:]
    for a in arrays:
        if a.ndim != ndim or a.shape[:ax] + a.shape[ax + 1:] != rest:
            raise ValueError("concat(): arrays must have the same shape except along the axis, got "
                             + ", ".join(str(a.shape) for a in arrays))
    dtype = dtypes.result_type(*(a.dtype for a in arrays))
    total = sum(a.shape[ax] for a in arrays)
    out = memory.empty(rest[:ax] + (total,) + rest[ax:], dtype, arrays[0].device)
    start = 0
    for a in arrays:
        memory.copy_into(slab(out, ax, start, start + a.shape[ax]), a)
        start += a.shape[ax]
    return out


def stack(arrays: tuple[Array, ...] | list[Array], /, *, axis: int = 0) -> Array:
    """Arrays joined along a new axis.

    Parameters
    ----------
    arrays : tuple or list of Array
        At least one, all of one shape, on one device.
    axis : int, optional
        Where the new axis goes in the result. Default: 0.

    Returns
    -------
    Array
        A new array with one more dimension; its dtype is the inputs' promoted dtype.

    Raises
    ------
    TypeError
        Not a sequence of arrays, or dtypes without a promoted dtype.
    ValueError
        No arrays, shapes that differ, or several devices.
    AxisError
        An axis out of range or repeated (both an IndexError and a ValueError, as NumPy's).

    Notes
    -----
    Devices: one strided copy on the inputs' device (NumPy on ``cpu``, the copy kernels of
    ``rocm_array_kernels/copy`` on a GPU).

    Examples
    --------
    >>> import rocm_array as xp
    >>> a = xp.asarray([1, 2], device="cpu")
    >>> xp.stack([a, a], axis=1)
    Array([[1, 1],
           [2, 2]], dtype=int64, device=cpu)
    """
    arrays = _joined("stack", arrays)
    shape = arrays[0].shape
    if any(a.shape != shape for a in arrays):
        raise ValueError("stack(): arrays must all have one shape, got " + ", ".join(str(a.shape) for a in arrays))
    ax = normalize_axis(axis, len(shape) + 1, "stack")
    dtype = dtypes.result_type(*(a.dtype for a in arrays))
    out = memory.empty(shape[:ax] + (len(arrays),) + shape[ax:], dtype, arrays[0].device)
    for i, a in enumerate(arrays):
        memory.copy_into(pick(out, ax, i), a)
    return out


def unstack(x: Array, /, *, axis: int = 0) -> tuple[Array, ...]:
    """The slices of ``x`` along ``axis``, as a tuple.

    Parameters
    ----------
    x : Array
        The input array.
    axis : int, optional
        Default: 0.

    Returns
    -------
    tuple of Array
        ``x.shape[axis]`` views, each without that axis.

    Raises
    ------
    ValueError
        A 0-D ``x``.
    AxisError
        An axis out of range or repeated (both an IndexError and a ValueError, as NumPy's).

    Notes
    -----
    Devices: stride arithmetic only: the result is a view of ``x``'s buffer, no kernel runs.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.unstack(xp.asarray([[1, 2], [3, 4]], device="cpu"), axis=1)
    (Array([1, 3], dtype=int64, device=cpu), Array([2, 4], dtype=int64, device=cpu))
    """
    _check_array("unstack", x)
    if x.ndim == 0:
        raise ValueError("unstack() needs an array with at least one dimension")
    ax = normalize_axis(axis, x.ndim, "unstack")
    return tuple(pick(x, ax, i) for i in range(x.shape[ax]))


def expand_dims(x: Array, /, axis: int | tuple[int, ...]) -> Array:
    """``x`` with new axes of size 1 inserted at ``axis``.

    Parameters
    ----------
    x : Array
        The input array.
    axis : int or tuple of ints
        Positions of the new axes in the result.

    Returns
    -------
    Array
        A view of ``x``.

    Raises
    ------
    AxisError
        An axis out of range or repeated (both an IndexError and a ValueError, as NumPy's).

    Notes
    -----
    Devices: stride arithmetic only: the result is a view of ``x``'s buffer, no kernel runs.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.expand_dims(xp.asarray([1, 2], device="cpu"), axis=0).shape
    (1, 2)
    """
    _check_array("expand_dims", x)
    if isinstance(axis, tuple):
        new = sorted(normalize_axes(axis, x.ndim + len(axis), "expand_dims", none_is_all=False))
    else:
        new = [normalize_axis(axis, x.ndim + 1, "expand_dims")]
    for a in new:
        x = insert_unit(x, a)
    return x


def squeeze(x: Array, /, axis: int | tuple[int, ...]) -> Array:
    """``x`` without the axes of size 1 named by ``axis``.

    Parameters
    ----------
    x : Array
        The input array.
    axis : int or tuple of ints
        Axes to remove; each must have size 1.

    Returns
    -------
    Array
        A view of ``x``.

    Raises
    ------
    ValueError
        An axis whose size is not 1.
    AxisError
        An axis out of range or repeated (both an IndexError and a ValueError, as NumPy's).

    Notes
    -----
    Devices: stride arithmetic only: the result is a view of ``x``'s buffer, no kernel runs.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.squeeze(xp.zeros((1, 3, 1), device="cpu"), axis=(0, 2)).shape
    (3,)
    """
    _check_array("squeeze", x)
    axes = normalize_axes(axis, x.ndim, "squeeze", none_is_all=False)
    for a in axes:
        if x.shape[a] != 1:
            raise ValueError(f"squeeze(): axis {a} has size {x.shape[a]}, not 1")
    keep = [i for i in range(x.ndim) if i not in axes]
    return x._view(tuple(x.shape[i] for i in keep), tuple(x.strides[i] for i in keep), x.offset)


def permute_dims(x: Array, /, axes: tuple[int, ...]) -> Array:
    """``x`` with its axes in the order ``axes``.

    Parameters
    ----------
    x : Array
        The input array.
    axes : tuple of ints
        A permutation of ``range(x.ndim)`` (negative values count from the end).

    Returns
    -------
    Array
        A view of ``x``.

    Raises
    ------
    ValueError
        ``axes`` is not a permutation of x's axes.

    Notes
    -----
    Devices: stride arithmetic only: the result is a view of ``x``'s buffer, no kernel runs.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.permute_dims(xp.zeros((2, 3, 4), device="cpu"), (2, 0, 1)).shape
    (4, 2, 3)
    """
    _check_array("permute_dims", x)
    order = normalize_axes(axes, x.ndim, "permute_dims", none_is_all=False)
    if len(order) != x.ndim:
        raise ValueError(f"permute_dims(): axes {axes} are not a permutation of {x.ndim} axes")
    return permuted(x, order)


def moveaxis(x: Array, source: int | tuple[int, ...], destination: int | tuple[int, ...], /) -> Array:
    """``x`` with axes ``source`` moved to positions ``destination``; the others keep their order.

    Parameters
    ----------
    x : Array
        The input array.
    source : int or tuple of ints
        The axes to move.
    destination : int or tuple of ints
        Their new positions.

    Returns
    -------
    Array
        A view of ``x``.

    Raises
    ------
    ValueError
        source and destination of different lengths.
    AxisError
        An axis out of range or repeated (both an IndexError and a ValueError, as NumPy's).

    Notes
    -----
    Devices: stride arithmetic only: the result is a view of ``x``'s buffer, no kernel runs.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.moveaxis(xp.zeros((2, 3, 4), device="cpu"), 0, -1).shape
    (3, 4, 2)
    """
    _check_array("moveaxis", x)
    src = normalize_axes(source, x.ndim, "moveaxis", none_is_all=False)
    dst = normalize_axes(destination, x.ndim, "moveaxis", none_is_all=False)
    if len(src) != len(dst):
        raise ValueError(f"moveaxis(): source {source} and destination {destination} differ in length")
    order = [i for i in range(x.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permuted(x, tuple(order))


def flip(x: Array, /, *, axis: int | tuple[int, ...] | None = None) -> Array:
    """``x`` with the order of elements reversed along ``axis``.

    Parameters
    ----------
    x : Array
        The input array.
    axis : int, tuple of ints or None, optional
        The axes; None reverses all. Default: None.

    Returns
    -------
    Array
        A view of ``x`` (negative strides).

    Raises
    ------
    AxisError
        An axis out of range or repeated (both an IndexError and a ValueError, as NumPy's).

    Notes
    -----
    Devices: stride arithmetic only: the result is a view of ``x``'s buffer, no kernel runs.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.flip(xp.asarray([1, 2, 3], device="cpu"))
    Array([3, 2, 1], dtype=int64, device=cpu)
    """
    _check_array("flip", x)
    axes = normalize_axes(axis, x.ndim, "flip")
    strides, offset = list(x.strides), x.offset
    for a in axes:
        if x.shape[a]:
            offset += (x.shape[a] - 1) * strides[a]
            strides[a] = -strides[a]
    return x._view(x.shape, tuple(strides), offset)


def _view_strides(x: Array, shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """Strides that show ``x``'s elements (row-major order) with ``shape``, or None when none exist.

    Groups of old axes whose product matches a group of new axes must be
    contiguous among themselves (NumPy's no-copy reshape rule).
    """
    if x.size == 0:
        return contiguous_strides(shape)
    old = [(n, s) for n, s in zip(x.shape, x.strides) if n != 1]
    new = list(shape)
    out = [1] * len(new)
    oi = ni = 0
    while oi < len(old) and ni < len(new):
        np_, op = new[ni], old[oi][0]
        nj, oj = ni + 1, oi + 1
        while np_ != op:
            if np_ < op:
                np_ *= new[nj]
                nj += 1
            else:
                op *= old[oj][0]
                oj += 1
        for k in range(oi, oj - 1):
            if old[k][1] != old[k + 1][0] * old[k + 1][1]:
                return None
        out[nj - 1] = old[oj - 1][1]
        for k in range(nj - 1, ni, -1):
            out[k - 1] = out[k] * new[k]
        oi, ni = oj, nj
    return tuple(out)


def _resolve_shape(x: Array, shape: Any) -> tuple[int, ...]:
    shape = int_tuple(shape, "reshape", int_ok=True)
    unknown = [i for i, n in enumerate(shape) if n == -1]
    if len(unknown) > 1 or any(n < -1 for n in shape):
        raise ValueError(f"reshape(): invalid shape {shape}")
    known = math.prod(n for n in shape if n != -1)
    if unknown:
        if known == 0:
            raise ValueError(f"reshape(): cannot infer the -1 in {shape} for an array of size {x.size}")
        shape = tuple(x.size // known if n == -1 else n for n in shape)
    if math.prod(shape) != x.size:
        raise ValueError(f"reshape(): cannot reshape an array of shape {x.shape} into {shape}")
    return cast("tuple[int, ...]", shape)


def reshape(x: Array, /, shape: tuple[int, ...], *, copy: bool | None = None) -> Array:
    """``x``'s elements, in row-major order, with a new ``shape``.

    Parameters
    ----------
    x : Array
        The input array.
    shape : tuple of ints
        The new shape; one entry may be -1, inferred from the size.
    copy : bool or None, optional
        True: always copy. False: never (ValueError if the layout needs one). None: a view when the
        strides allow, else a copy. Default: None.

    Returns
    -------
    Array
        A view of ``x`` when possible, else a new array.

    Raises
    ------
    ValueError
        A shape of another size, more than one -1, or copy=False where a copy is needed.

    Notes
    -----
    Devices: a view costs nothing; a copy is one strided copy on ``x``'s device.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.reshape(xp.arange(6, device="cpu"), (2, -1))
    Array([[0, 1, 2],
           [3, 4, 5]], dtype=int64, device=cpu)
    """
    _check_array("reshape", x)
    flag(copy, "reshape", "copy", none=True)
    shape = _resolve_shape(x, shape)
    strides = None if copy else _view_strides(x, shape)
    if strides is not None:
        return x._view(shape, strides, x.offset)
    if copy is False:
        raise ValueError(f"reshape(copy=False): an array of shape {x.shape} and strides {x.strides} "
                         f"cannot be viewed with shape {shape}; a copy is needed")
    c = copy_as(x) if copy else memory.contiguous(x)
    return c._view(shape, contiguous_strides(shape), c.offset)


def tile(x: Array, repetitions: tuple[int, ...], /) -> Array:
    """``x`` repeated ``repetitions`` times along each axis.

    Parameters
    ----------
    x : Array
        The input array.
    repetitions : tuple of ints
        Non-negative counts per axis (aligned to the last axes).

    Returns
    -------
    Array
        A new array.

    Raises
    ------
    ValueError
        A negative count.

    Notes
    -----
    Devices: one strided copy on the inputs' device (NumPy on ``cpu``, the copy kernels of
    ``rocm_array_kernels/copy`` on a GPU).

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.tile(xp.asarray([1, 2], device="cpu"), (2, 2))
    Array([[1, 2, 1, 2],
           [1, 2, 1, 2]], dtype=int64, device=cpu)
    """
    _check_array("tile", x)
    reps = int_tuple(repetitions, "tile", "repetitions")
    if any(r < 0 for r in reps):
        raise ValueError(f"tile(): repetitions must be non-negative, got {reps}")
    d = max(x.ndim, len(reps))
    reps = (1,) * (d - len(reps)) + reps
    shape = (1,) * (d - x.ndim) + x.shape
    strides = (0,) * (d - x.ndim) + x.strides
    # Each axis (n, stride) becomes the pair (r, 0), (n, stride): a broadcast view, copied once.
    view = x._view(sum(((r, n) for r, n in zip(reps, shape)), ()),
                   sum(((0, s) for s in strides), ()), x.offset)
    return reshape(copy_as(view), tuple(r * n for r, n in zip(reps, shape)))


def repeat(x: Array, repeats: int | Array, /, *, axis: int | None = None) -> Array:
    """Each element of ``x`` repeated ``repeats`` times along ``axis``.

    Parameters
    ----------
    x : Array
        The input array.
    repeats : int or Array
        One count, or one per element along the axis (an integer array).
    axis : int or None, optional
        None repeats the flattened array. Default: None.

    Returns
    -------
    Array
        A new array.

    Raises
    ------
    TypeError
        repeats that is neither an int nor an integer array.
    ValueError
        A negative count, or counts that do not match the axis.
    AxisError
        An axis out of range or repeated (both an IndexError and a ValueError, as NumPy's).

    Notes
    -----
    Devices: one count is one copy of a broadcast view on ``x``'s device; per-element counts are read
    to the host (the result's size depends on them) to build an index array, then one gather.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.repeat(xp.asarray([1, 2], device="cpu"), 3)
    Array([1, 1, 1, 2, 2, 2], dtype=int64, device=cpu)
    """
    _check_array("repeat", x)
    if axis is None:
        x, ax = reshape(x, (-1,)), 0
    else:
        ax = normalize_axis(axis, x.ndim, "repeat")
    n = x.shape[ax]
    if isinstance(repeats, Array):
        check_same(x, repeats)
        if repeats.dtype not in dtypes.CATEGORIES["integral"]:
            raise TypeError(f"repeat(): repeats must have an integer dtype, got {repeats.dtype.name}")
        if repeats.ndim != 1 or repeats.shape[0] not in (1, n):
            raise ValueError(f"repeat(): repeats of shape {repeats.shape} do not broadcast to ({n},)")
        counts = np.asarray(memory.to_host(repeats), dtype=np.int64)
        if (counts < 0).any():
            raise ValueError("repeat(): repeats must be non-negative")
        if counts.shape[0] != 1:
            # Data-dependent: read the counts, then gather.
            index = memory.from_host(np.repeat(np.arange(n), counts), dtypes.int64, x.device)
            return take(x, index, axis=ax)
        repeats = int(counts[0])
    if isinstance(repeats, bool) or not isinstance(repeats, int):
        raise TypeError(f"repeat(): repeats must be an int or an integer array, got {type(repeats).__name__}")
    if repeats < 0:
        raise ValueError(f"repeat(): repeats must be non-negative, got {repeats}")
    # Axis ax (n, stride) becomes (n, stride), (repeats, 0): a broadcast view, copied once.
    view = x._view(x.shape[:ax + 1] + (repeats,) + x.shape[ax + 1:],
                   x.strides[:ax + 1] + (0,) + x.strides[ax + 1:], x.offset)
    return reshape(copy_as(view), x.shape[:ax] + (n * repeats,) + x.shape[ax + 1:])


def roll(x: Array, /, shift: int | tuple[int, ...], *, axis: int | tuple[int, ...] | None = None) -> Array:
    """``x`` shifted cyclically by ``shift`` along ``axis``.

    Parameters
    ----------
    x : Array
        The input array.
    shift : int or tuple of ints
        Positions to shift (negative: towards the start).
    axis : int, tuple of ints or None, optional
        None rolls the flattened array and restores the shape. Default: None.

    Returns
    -------
    Array
        A new array.

    Raises
    ------
    TypeError
        A shift that is not an int or tuple of ints.
    ValueError
        shift and axis of different lengths.
    AxisError
        An axis out of range or repeated (both an IndexError and a ValueError, as NumPy's).

    Notes
    -----
    Devices: one strided copy on the inputs' device (NumPy on ``cpu``, the copy kernels of
    ``rocm_array_kernels/copy`` on a GPU).

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.roll(xp.asarray([1, 2, 3, 4], device="cpu"), 1)
    Array([4, 1, 2, 3], dtype=int64, device=cpu)
    """
    _check_array("roll", x)
    if axis is None:
        return reshape(roll(reshape(x, (-1,)), shift, axis=0), x.shape)
    axes = axis if isinstance(axis, tuple) else (axis,)
    shifts = shift if isinstance(shift, tuple) else (shift,) * len(axes)
    if len(shifts) != len(axes):
        raise ValueError(f"roll(): shift {shift} and axis {axis} differ in length")
    total: dict[int, int] = {}
    for s, a in zip(shifts, axes):
        if isinstance(s, bool) or not isinstance(s, int):
            raise TypeError(f"roll(): shift must be an int or a tuple of ints, got {shift!r}")
        a = normalize_axis(a, x.ndim, "roll")
        total[a] = total.get(a, 0) + s
    out = copy_as(x)
    for a, s in total.items():
        n = x.shape[a]
        s = s % n if n else 0
        if s:
            src, out = out, memory.empty(x.shape, x.dtype, x.device)
            memory.copy_into(slab(out, a, s, n), slab(src, a, 0, n - s))
            memory.copy_into(slab(out, a, 0, s), slab(src, a, n - s, n))
    return out


IMPLS: list[Impl] = [Impl(f.__name__, f) for f in (
    broadcast_arrays, broadcast_shapes, broadcast_to, concat, expand_dims, flip, moveaxis,
    permute_dims, repeat, reshape, roll, squeeze, stack, tile, unstack,
)]
