"""Creation functions (fronts).

Allocation, fills and copies go through ``rocm_array.memory``, so most of these
run on every device as they are. Two fills need a computation per element and
have backs: ``SEQUENCE`` (arange, linspace) and ``TRIANGLE`` (tril, triu).
``eye`` writes its diagonal through a strided view, ``meshgrid`` copies
broadcast views.
"""

from __future__ import annotations

import math
import operator
from typing import Any, cast

import numpy as np

from rocm_array import devices, dtypes, memory
from rocm_array.axes import flag, normalize_shape
from rocm_array.array import Array, wrap_numpy
from rocm_array.devices import Device, check_same
from rocm_array.docstrings import DEFAULT_DEVICE, parameters
from rocm_array.dtypes import SCALARS, DType
from rocm_array.hookspecs import Impl

from .backs import FROM_DLPACK, SEQUENCE, TRIANGLE
from rocm_array.operands import check_bounds
from rocm_array.views import copy_as

# DLPack device types (dlpack.h) and the device kind whose back imports them.
_DLPACK_KINDS = {1: "cpu", 3: "cpu", 2: "gpu", 10: "gpu", 13: "gpu"}


# -- argument checks ------------------------------------------------------------------------------
def _dtype(dtype: Any, default: DType, name: str) -> DType:
    return default if dtype is None else dtypes.check_dtype(dtype, name)


def _int_arg(name: str, what: str, value: Any) -> int:
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name}(): {what} must be an integer, not bool")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{name}(): {what} must be an integer, got {type(value).__name__}") from None


def _scalar_default(value: Any) -> DType:
    """The dtype a lone Python scalar takes (the standard's defaults)."""
    if isinstance(value, bool):
        return dtypes.bool
    if isinstance(value, int):
        return dtypes.DEFAULT_INT
    if isinstance(value, float):
        return dtypes.DEFAULT_FLOAT
    return dtypes.DEFAULT_COMPLEX


def _fill_dtype(name: str, value: Any, dtype: Any) -> DType:
    """The dtype of an array filled with the Python scalar ``value``; TypeError when they do not mix."""
    if not isinstance(value, SCALARS):
        raise TypeError(f"{name}(): fill_value must be a Python scalar, got {type(value).__name__}")
    if dtype is None:
        dt = _scalar_default(value)
    else:
        dt = dtypes.check_dtype(dtype, name)
        if dtypes.scalar_dtype(value, dt) is not dt:
            raise TypeError(f"{name}(): a {type(value).__name__} fill_value does not fit dtype {dt.name}")
    check_bounds(value, dt, name)
    return dt


def _like(name: str, x: Any, dtype: Any, device: Any) -> tuple[DType, Device]:
    if not isinstance(x, Array):
        raise TypeError(f"{name}() expected an array, got {type(x).__name__}")
    return _dtype(dtype, x.dtype, name), x.device if device is None else devices.parse(device, name)


#: The defaults of the ``*_like`` functions' shared parameter paragraphs (``docstrings.parameters``).
_LIKE = {"dtype": "x's dtype", "device": "x's device"}


# -- fills ----------------------------------------------------------------------------------------
@parameters(dtype='float64', device=DEFAULT_DEVICE)
def empty(shape: int | tuple[int, ...], *, dtype: DType | None = None, device: Any = None) -> Array:
    """A new array of ``shape`` whose elements are not initialized.

    Parameters
    ----------
    shape : int or tuple of ints
        The result's shape; non-negative.
    {dtype}
    {device}

    Returns
    -------
    Array
        Uninitialized contents, C-contiguous.

    Raises
    ------
    TypeError
        A shape that is not an int or a tuple of ints, or a dtype that is not a dtype.
    ValueError
        A negative dimension, or a device that does not exist.

    Notes
    -----
    Devices: an allocation only: on a GPU from the device's stream-ordered pool, no kernel runs.

    Examples
    --------
    >>> import rocm_array as xp
    >>> x = xp.empty((2, 3), dtype=xp.float32, device="cpu")
    >>> x.shape, x.dtype
    ((2, 3), rocm_array.float32)
    """
    return memory.empty(normalize_shape(shape, "empty"), _dtype(dtype, dtypes.DEFAULT_FLOAT, "empty"), devices.resolve(device, "empty"))


@parameters(dtype='float64', device=DEFAULT_DEVICE)
def zeros(shape: int | tuple[int, ...], *, dtype: DType | None = None, device: Any = None) -> Array:
    """A new array of ``shape`` filled with zeros.

    Parameters
    ----------
    shape : int or tuple of ints
        The result's shape; non-negative.
    {dtype}
    {device}

    Returns
    -------
    Array
        Zeros, C-contiguous.

    Raises
    ------
    TypeError
        A shape that is not an int or a tuple of ints, or a dtype that is not a dtype.
    ValueError
        A negative dimension, or a device that does not exist.

    Notes
    -----
    Devices: the fill runs on the device: NumPy on ``cpu``, the fill kernel of ``rocm_array_kernels/copy`` on a
    GPU.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.zeros((2, 2), dtype=xp.int32, device="cpu")
    Array([[0, 0],
           [0, 0]], dtype=int32, device=cpu)
    """
    return memory.full(normalize_shape(shape, "zeros"), 0, _dtype(dtype, dtypes.DEFAULT_FLOAT, "zeros"), devices.resolve(device, "zeros"))


@parameters(dtype='float64', device=DEFAULT_DEVICE)
def ones(shape: int | tuple[int, ...], *, dtype: DType | None = None, device: Any = None) -> Array:
    """A new array of ``shape`` filled with ones.

    Parameters
    ----------
    shape : int or tuple of ints
        The result's shape; non-negative.
    {dtype}
    {device}

    Returns
    -------
    Array
        Ones, C-contiguous.

    Raises
    ------
    TypeError
        A shape that is not an int or a tuple of ints, or a dtype that is not a dtype.
    ValueError
        A negative dimension, or a device that does not exist.

    Notes
    -----
    Devices: the fill runs on the device: NumPy on ``cpu``, the fill kernel of ``rocm_array_kernels/copy`` on a
    GPU.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.ones(3, device="cpu")
    Array([1., 1., 1.], dtype=float64, device=cpu)
    """
    return memory.full(normalize_shape(shape, "ones"), 1, _dtype(dtype, dtypes.DEFAULT_FLOAT, "ones"), devices.resolve(device, "ones"))


@parameters(dtype='inferred from fill_value: bool, int64, float64 or complex128', device=DEFAULT_DEVICE)
def full(shape: int | tuple[int, ...], fill_value: bool | int | float | complex, *,
         dtype: DType | None = None, device: Any = None) -> Array:
    """A new array of ``shape`` with every element ``fill_value``.

    Parameters
    ----------
    shape : int or tuple of ints
        The result's shape; non-negative.
    fill_value : bool, int, float or complex
        The value; a NumPy scalar counts as its Python scalar.
    {dtype}
    {device}

    Returns
    -------
    Array
        Every element ``fill_value``, C-contiguous.

    Raises
    ------
    TypeError
        A fill value that the dtype cannot hold by kind (a float for an integer dtype).
    OverflowError
        An int outside the integer dtype's range.
    ValueError
        A negative dimension, or a device that does not exist.

    Notes
    -----
    Devices: the fill runs on the device: NumPy on ``cpu``, the fill kernel of ``rocm_array_kernels/copy`` on a
    GPU.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.full((2, 2), 7, device="cpu")
    Array([[7, 7],
           [7, 7]], dtype=int64, device=cpu)
    >>> xp.full(3, 0.5, dtype=xp.float32, device="cpu")
    Array([0.5, 0.5, 0.5], dtype=float32, device=cpu)
    """
    dt = _fill_dtype("full", fill_value, dtype)
    return memory.full(normalize_shape(shape, "full"), fill_value, dt, devices.resolve(device, "full"))


@parameters(**_LIKE)
def empty_like(x: Array, /, *, dtype: DType | None = None, device: Any = None) -> Array:
    """A new uninitialized array with ``x``'s shape.

    Parameters
    ----------
    x : Array
        The array whose shape (and, by default, dtype and device) the result takes.
    {dtype}
    {device}

    Returns
    -------
    Array
        Uninitialized contents of ``x``'s shape.

    Raises
    ------
    TypeError
        ``x`` is not an array.
    ValueError
        A negative dimension, or a device that does not exist.

    Notes
    -----
    Devices: an allocation only.

    Examples
    --------
    >>> import rocm_array as xp
    >>> a = xp.asarray([[1, 2], [3, 4]], device="cpu")
    >>> xp.empty_like(a).shape
    (2, 2)
    """
    dt, dev = _like("empty_like", x, dtype, device)
    return memory.empty(x.shape, dt, dev)


@parameters(**_LIKE)
def zeros_like(x: Array, /, *, dtype: DType | None = None, device: Any = None) -> Array:
    """A new array of zeros with ``x``'s shape.

    Parameters
    ----------
    x : Array
        The array whose shape (and, by default, dtype and device) the result takes.
    {dtype}
    {device}

    Returns
    -------
    Array
        Zeros of ``x``'s shape.

    Raises
    ------
    TypeError
        ``x`` is not an array.
    ValueError
        A negative dimension, or a device that does not exist.

    Notes
    -----
    Devices: the fill runs on the device: NumPy on ``cpu``, the fill kernel of ``rocm_array_kernels/copy`` on a
    GPU.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.zeros_like(xp.asarray([1.5, 2.5], device="cpu"))
    Array([0., 0.], dtype=float64, device=cpu)
    """
    dt, dev = _like("zeros_like", x, dtype, device)
    return memory.full(x.shape, 0, dt, dev)


@parameters(**_LIKE)
def ones_like(x: Array, /, *, dtype: DType | None = None, device: Any = None) -> Array:
    """A new array of ones with ``x``'s shape.

    Parameters
    ----------
    x : Array
        The array whose shape (and, by default, dtype and device) the result takes.
    {dtype}
    {device}

    Returns
    -------
    Array
        Ones of ``x``'s shape.

    Raises
    ------
    TypeError
        ``x`` is not an array.
    ValueError
        A negative dimension, or a device that does not exist.

    Notes
    -----
    Devices: the fill runs on the device: NumPy on ``cpu``, the fill kernel of ``rocm_array_kernels/copy`` on a
    GPU.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.ones_like(xp.asarray([1, 2, 3], device="cpu"))
    Array([1, 1, 1], dtype=int64, device=cpu)
    """
    dt, dev = _like("ones_like", x, dtype, device)
    return memory.full(x.shape, 1, dt, dev)


@parameters(**_LIKE)
def full_like(x: Array, /, fill_value: bool | int | float | complex, *,
              dtype: DType | None = None, device: Any = None) -> Array:
    """A new array with ``x``'s shape and every element ``fill_value``.

    Parameters
    ----------
    x : Array
        The array whose shape (and, by default, dtype and device) the result takes.
    fill_value : bool, int, float or complex
        The value.
    {dtype}
    {device}

    Returns
    -------
    Array
        Every element ``fill_value``, of ``x``'s shape.

    Raises
    ------
    TypeError
        ``x`` is not an array, or a fill value the dtype cannot hold by kind.
    OverflowError
        An int outside the integer dtype's range.

    Notes
    -----
    Devices: the fill runs on the device: NumPy on ``cpu``, the fill kernel of ``rocm_array_kernels/copy`` on a
    GPU.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.full_like(xp.asarray([1, 2], device="cpu"), 9)
    Array([9, 9], dtype=int64, device=cpu)
    """
    dt, dev = _like("full_like", x, dtype, device)
    return memory.full(x.shape, fill_value, _fill_dtype("full_like", fill_value, dt), dev)


@parameters(dtype='float64', device=DEFAULT_DEVICE)
def eye(n_rows: int, n_cols: int | None = None, /, *, k: int = 0,
        dtype: DType | None = None, device: Any = None) -> Array:
    """A 2-D array with ones on diagonal ``k`` and zeros elsewhere.

    Parameters
    ----------
    n_rows : int
        Rows.
    n_cols : int, optional
        Columns. Default: n_rows.
    k : int, optional
        The diagonal: 0 the main one, positive above it, negative below. Default: 0.
    {dtype}
    {device}

    Returns
    -------
    Array
        Of shape ``(n_rows, n_cols)``.

    Raises
    ------
    TypeError
        A size or k that is not an int.
    ValueError
        A negative size, or a device that does not exist.

    Notes
    -----
    Devices: the fill runs on the device: NumPy on ``cpu``, the fill kernel of ``rocm_array_kernels/copy`` on a
    GPU. The diagonal is a strided view written by one copy.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.eye(3, k=1, dtype=xp.int8, device="cpu")
    Array([[0, 1, 0],
           [0, 0, 1],
           [0, 0, 0]], dtype=int8, device=cpu)
    """
    rows = _int_arg("eye", "n_rows", n_rows)
    cols = rows if n_cols is None else _int_arg("eye", "n_cols", n_cols)
    k = _int_arg("eye", "k", k)
    if rows < 0 or cols < 0:
        raise ValueError(f"eye(): n_rows and n_cols must be non-negative, got {rows} and {cols}")
    out = memory.full((rows, cols), 0, _dtype(dtype, dtypes.DEFAULT_FLOAT, "eye"), devices.resolve(device, "eye"))
    # Diagonal k is a 1-D view with stride cols + 1.
    length = max(0, min(rows, cols - k) if k >= 0 else min(rows + k, cols))
    if length:
        diag = out._view((length,), (cols + 1,), k if k >= 0 else -k * cols)
        memory.copy_into(diag, memory.full((), 1, out.dtype, out.device))
    return out


def _number(name: str, what: str, value: Any, complex_ok: bool = False) -> int | float | complex:
    """``value`` as a Python int, float or complex (NumPy scalars accepted); TypeError for others."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name}(): {what} must be a number, not bool")
    if isinstance(value, Array):  # (its __index__ would speak of 0-D arrays)
        raise TypeError(f"{name}(): {what} must be a Python number, not an array; use float(x) for a 0-D one")
    if hasattr(type(value), "__index__"):
        return operator.index(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    if complex_ok and isinstance(value, (complex, np.complexfloating)):
        return complex(value)
    raise TypeError(f"{name}(): {what} must be a real number{' or a complex' if complex_ok else ''}, "
                    f"got {type(value).__name__}")


@parameters(dtype='int64 when every argument is an int, else float64', device=DEFAULT_DEVICE)
def arange(start: int | float, /, stop: int | float | None = None, step: int | float = 1, *,
           dtype: DType | None = None, device: Any = None) -> Array:
    """Evenly spaced values in the half-open interval [start, stop).

    Parameters
    ----------
    start : int or float
        The first value; the stop when ``stop`` is not given (start is then 0).
    stop : int or float, optional
        The end, not included.
    step : int or float, optional
        The spacing; not zero. Default: 1.
    {dtype}
    {device}

    Returns
    -------
    Array
        A 1-D array of ``ceil((stop - start) / step)`` values (none when that is not positive).

    Raises
    ------
    TypeError
        An argument that is not a real number (bool is refused).
    ValueError
        A zero step, or an argument that is not finite.

    Notes
    -----
    Devices: NumPy on ``cpu``; on a GPU one sequence kernel writes ``start + i * step``.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.arange(5, device="cpu")
    Array([0, 1, 2, 3, 4], dtype=int64, device=cpu)
    >>> xp.arange(1.0, 2.0, 0.25, device="cpu")
    Array([1.  , 1.25, 1.5 , 1.75], dtype=float64, device=cpu)
    """
    if stop is None:
        start, stop = 0, start
    args = [cast("int | float", _number("arange", w, v)) for w, v in (("start", start), ("stop", stop), ("step", step))]
    start, stop, step = args
    if step == 0:
        raise ValueError("arange(): step must not be zero")
    exact = all(isinstance(v, int) for v in args)
    dt = _dtype(dtype, dtypes.DEFAULT_INT if exact else dtypes.DEFAULT_FLOAT, "arange")
    if dt.kind not in "iufc":  # (as linspace: a bool range is not a sequence of numbers)
        raise TypeError(f"arange(): dtype must be numeric, not {dt.name}")
    if not math.isfinite(start) or not math.isfinite(stop) or not math.isfinite(step):
        raise ValueError(f"arange(): arguments must be finite, got {start}, {stop}, {step}")
    n = -((start - stop) // step) if exact else math.ceil((stop - start) / step)
    dev = devices.resolve(device, "arange")
    return cast("Array", SEQUENCE[dev.kind](max(n, 0), start, step, dt, dev))


@parameters(dtype='float64, or complex128 for a complex end', device=DEFAULT_DEVICE)
def linspace(start: int | float | complex, stop: int | float | complex, /, num: int, *,
             dtype: DType | None = None, device: Any = None, endpoint: bool = True) -> Array:
    """``num`` evenly spaced values from ``start`` to ``stop``.

    Parameters
    ----------
    start, stop : int, float or complex
        The ends of the interval.
    num : int
        How many values; non-negative.
    {dtype}
    {device}
    endpoint : bool, optional
        Whether ``stop`` is the last value (exactly). Default: True.

    Returns
    -------
    Array
        A 1-D array of ``num`` values.

    Raises
    ------
    TypeError
        A non-number end, a complex end with a real dtype, or a non-numeric dtype.
    ValueError
        A negative num.

    Notes
    -----
    Devices: NumPy on ``cpu``; on a GPU one sequence kernel. With ``endpoint`` the last value is
    ``stop`` itself, not ``start + (num - 1) * step`` rounded.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.linspace(0, 1, 5, device="cpu")
    Array([0.  , 0.25, 0.5 , 0.75, 1.  ], dtype=float64, device=cpu)
    """
    start = _number("linspace", "start", start, complex_ok=True)
    stop = _number("linspace", "stop", stop, complex_ok=True)
    num = _int_arg("linspace", "num", num)
    if num < 0:
        raise ValueError(f"linspace(): num must be non-negative, got {num}")
    is_complex = isinstance(start, complex) or isinstance(stop, complex)
    dt = _dtype(dtype, dtypes.DEFAULT_COMPLEX if is_complex else dtypes.DEFAULT_FLOAT, "linspace")
    if is_complex and dt.kind != "c":
        raise TypeError(f"linspace(): complex start or stop needs a complex dtype, not {dt.name}")
    if dt.kind not in "iufc":
        raise TypeError(f"linspace(): dtype must be numeric, not {dt.name}")
    dev = devices.resolve(device, "linspace")
    div = num - 1 if flag(endpoint, "linspace", "endpoint") else num
    step = (stop - start) / div if div > 0 else 0.0
    out = SEQUENCE[dev.kind](num, start if isinstance(start, (float, complex)) else float(start), step, dt, dev)
    if endpoint and num > 1:
        # The last value is stop itself, not start + (num - 1) * step rounded.
        memory.copy_into(out._view((), (), out.offset + num - 1), memory.full((), stop, dt, dev))
    return cast("Array", out)


def _triangle(name: str, x: Array, k: int, upper: bool) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"{name}() expected an array, got {type(x).__name__}")
    if x.ndim < 2:
        raise ValueError(f"{name}() needs an array with at least 2 dimensions, got {x.ndim}")
    # A diagonal past the matrix's corner is that corner's (and fits the backs' C integers).
    k = max(-x.shape[-2], min(_int_arg(name, "k", k), x.shape[-1]))
    return cast("Array", TRIANGLE[x.device.kind](x, k, upper))


def tril(x: Array, /, *, k: int = 0) -> Array:
    """``x`` with the elements above diagonal ``k`` set to zero (of every matrix of a stack).

    Parameters
    ----------
    x : Array
        At least 2-D; the last two axes are the matrices.
    k : int, optional
        The diagonal kept last: 0 the main one, positive above, negative below. Default: 0.

    Returns
    -------
    Array
        A new array of ``x``'s shape and dtype.

    Raises
    ------
    TypeError
        ``x`` is not an array, or k is not an int.
    ValueError
        ``x`` has fewer than 2 dimensions.

    Notes
    -----
    Devices: NumPy on ``cpu``; one triangle kernel on a GPU.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.tril(xp.ones((3, 3), dtype=xp.int8, device="cpu"))
    Array([[1, 0, 0],
           [1, 1, 0],
           [1, 1, 1]], dtype=int8, device=cpu)
    """
    return _triangle("tril", x, k, upper=False)


def triu(x: Array, /, *, k: int = 0) -> Array:
    """``x`` with the elements below diagonal ``k`` set to zero (of every matrix of a stack).

    Parameters
    ----------
    x : Array
        At least 2-D; the last two axes are the matrices.
    k : int, optional
        The first diagonal kept: 0 the main one, positive above, negative below. Default: 0.

    Returns
    -------
    Array
        A new array of ``x``'s shape and dtype.

    Raises
    ------
    TypeError
        ``x`` is not an array, or k is not an int.
    ValueError
        ``x`` has fewer than 2 dimensions.

    Notes
    -----
    Devices: NumPy on ``cpu``; one triangle kernel on a GPU.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.triu(xp.ones((3, 3), dtype=xp.int8, device="cpu"), k=1)
    Array([[0, 1, 1],
           [0, 0, 1],
           [0, 0, 0]], dtype=int8, device=cpu)
    """
    return _triangle("triu", x, k, upper=True)


def meshgrid(*arrays: Array, indexing: str = "xy") -> tuple[Array, ...]:
    """Coordinate arrays of the grid that 1-D arrays span.

    Parameters
    ----------
    *arrays : Array
        1-D arrays of one dtype, on one device.
    indexing : {'xy', 'ij'}, optional
        ``'xy'``: Cartesian (the first two axes swapped); ``'ij'``: matrix indexing. Default: 'xy'.

    Returns
    -------
    tuple of Array
        One array per input, each of the grid's shape, copied (not views).

    Raises
    ------
    ValueError
        Inputs that are not 1-D, of several dtypes or devices, or an unknown indexing.

    Notes
    -----
    Devices: each output is one strided copy on the inputs' device.

    Examples
    --------
    >>> import rocm_array as xp
    >>> x, y = xp.meshgrid(xp.asarray([1, 2, 3], device="cpu"), xp.asarray([10, 20], device="cpu"))
    >>> y
    Array([[10, 10, 10],
           [20, 20, 20]], dtype=int64, device=cpu)
    """
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid(): indexing must be 'xy' or 'ij', got {indexing!r}")
    for a in arrays:
        if not isinstance(a, Array) or a.ndim != 1:
            raise ValueError("meshgrid() expects 1-D arrays")
    if not arrays:
        return ()
    check_same(*arrays)
    if len({a.dtype for a in arrays}) > 1:
        raise ValueError("meshgrid(): the arrays must all have one dtype, got "
                         + ", ".join(a.dtype.name for a in arrays))
    axes = list(range(len(arrays)))
    if indexing == "xy" and len(arrays) > 1:
        axes[0], axes[1] = 1, 0
    shape = [0] * len(arrays)
    for a, ax in zip(arrays, axes):
        shape[ax] = a.shape[0]
    out = []
    for a, ax in zip(arrays, axes):
        strides = tuple(a.strides[0] if i == ax else 0 for i in range(len(shape)))
        out.append(copy_as(a._view(tuple(shape), strides, a.offset)))
    return tuple(out)


# -- conversion -----------------------------------------------------------------------------------
def _scan(obj: Any, kinds: set[type], found: list[DType], held: list[Array]) -> Any:
    """``obj`` with Arrays replaced by host arrays; notes the scalar kinds, the array dtypes and the
    Arrays met."""
    if isinstance(obj, np.generic) and not isinstance(obj, SCALARS):
        obj = obj.item()  # a NumPy scalar counts as the Python scalar it holds
    if isinstance(obj, SCALARS):
        kinds.add(bool if isinstance(obj, bool) else int if isinstance(obj, int)
                  else float if isinstance(obj, float) else complex)
        return obj
    if isinstance(obj, Array):
        found.append(obj.dtype)
        held.append(obj)
        return memory.to_host(obj)
    if isinstance(obj, np.ndarray):
        found.append(dtypes.from_numpy(obj.dtype))
        return obj
    if isinstance(obj, (list, tuple)):
        return [_scan(o, kinds, found, held) for o in obj]
    raise TypeError(f"asarray(): cannot convert a {type(obj).__name__} inside a sequence")


def _infer(kinds: set[type], found: list[DType]) -> DType:
    """The standard's dtype for a nested sequence: bool < int < float < complex, then array dtypes."""
    if found:
        dt = dtypes.result_type(*found)
        for k in kinds:
            dt = dtypes.scalar_dtype(k(1), dt)
        return dt
    for k in (complex, float, int, bool):
        if k in kinds:
            return _scalar_default(k(1))
    return dtypes.DEFAULT_FLOAT  # an empty sequence


def _from_array(x: Array, dtype: DType | None, device: Any, copy: bool | None) -> Array:
    dev = x.device if device is None else devices.parse(device, "asarray")
    dt = x.dtype if dtype is None else dtype
    if dev == x.device and dt is x.dtype and not copy:
        return x
    if copy is False:
        raise ValueError(f"asarray(copy=False): converting a {x.dtype.name} array on {x.device} "
                         f"to {dt.name} on {dev} needs a copy")
    if dev != x.device:
        x = x.to_device(dev)
        if dt is x.dtype:
            return x
    return copy_as(x, dt)


@parameters(dtype="the data's: bool, int64, float64 or complex128 for Python values, NumPy's dtype for NumPy "
                  "arrays",
            device="the device of an array ``obj`` is or holds (arrays in a sequence must share one), else "
                   + DEFAULT_DEVICE)
def asarray(obj: Any, /, *, dtype: DType | None = None, device: Any = None,
            copy: bool | None = None) -> Array:
    """An array from ``obj``: a rocm_array array, a Python scalar or nested sequence, a NumPy array, or any object with DLPack or the buffer protocol.

    Parameters
    ----------
    obj : object
        The data.
    {dtype}
    {device}
    copy : bool or None, optional
        True: always copy. False: never (ValueError when a copy is needed). None: copy only when
        needed. Default: None.

    Returns
    -------
    Array
        The data as an array on the device (a view of a NumPy array on ``cpu`` when no copy is
        needed).

    Raises
    ------
    TypeError
        Values the dtype cannot hold by kind, or an object that is no array data.
    ValueError
        copy=False where a copy is needed, ragged sequences, arrays of several devices in a sequence
        with no device named, or an unknown device.
    OverflowError
        A Python int no dtype holds.

    Notes
    -----
    Devices: a GPU array from host data is one upload (pinned staging for large ones); between
    devices, one copy through the host. DLPack producers on the same device are not copied.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.asarray([[1, 2], [3, 4]], device="cpu")
    Array([[1, 2],
           [3, 4]], dtype=int64, device=cpu)
    >>> xp.asarray(3.5, dtype=xp.float32, device="cpu")
    Array(3.5, dtype=float32, device=cpu)
    """
    if dtype is not None:
        dtype = dtypes.check_dtype(dtype, "asarray")
    flag(copy, "asarray", "copy", none=True)
    if isinstance(obj, Array):
        return _from_array(obj, dtype, device, copy)
    if isinstance(obj, (*SCALARS, list, tuple)):
        if copy is False:
            raise ValueError("asarray(copy=False): a Python scalar or sequence always needs a copy")
        kinds: set[type] = set()
        found: list[DType] = []
        held: list[Array] = []
        host = _scan(obj, kinds, found, held)
        # Arrays in the sequence and no device named: they must share one, and the result goes there.
        dev = check_same(*held) if held and device is None else devices.resolve(device, "asarray")
        dt = _infer(kinds, found) if dtype is None else dtype
        if (complex in kinds and dt.kind != "c") or (float in kinds and dt.kind not in "fc"):
            raise TypeError(f"asarray(): Python {'complex' if complex in kinds else 'float'} values "
                            f"do not fit dtype {dt.name}")
        try:  # (bfloat16 from float64, which from_host rounds once: NumPy's cast rounds twice)
            a = np.array(host, dtype=np.float64 if dt is dtypes.bfloat16 else dt.numpy)
        except OverflowError:
            raise OverflowError(f"asarray(): a Python int is out of range for {dt.name}; pass a dtype that holds "
                                f"it (dtype=xp.int64, xp.uint64 or a float dtype)") from None
        except ValueError:  # (NumPy's word for nested sequences of different lengths)
            raise ValueError("asarray(): the nested sequences have different lengths; an array needs every "
                             "sequence at one depth to have the same length") from None
        return memory.from_host(a, dt, dev)
    dev = devices.resolve(device, "asarray")
    if hasattr(obj, "__dlpack__") and not hasattr(obj, "__array__"):
        return _from_array(from_dlpack(obj, device=dev, copy=copy), dtype, None, False if copy is False else None)
    # NumPy arrays and scalars, buffer-protocol objects, objects with __array__.
    try:
        a = np.asarray(obj if hasattr(obj, "__array__") or hasattr(obj, "__array_interface__")
                       else memoryview(obj))
    except TypeError:
        raise TypeError(f"asarray(): cannot convert a {type(obj).__name__} to an array") from None
    src = dtypes.from_numpy(a.dtype)
    dt = src if dtype is None else dtype
    if dev == devices.cpu and dt is src and not copy:
        return wrap_numpy(a, dt)
    if copy is False:
        raise ValueError(f"asarray(copy=False): a {a.dtype} host array becomes {dt.name} on {dev} only by a copy")
    return memory.from_host(a, dt, dev)


@parameters(device=DEFAULT_DEVICE)
def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Array:
    """An array that views the data of a DLPack producer (NumPy, PyTorch, CuPy, JAX…).

    Parameters
    ----------
    x : object
        An object with ``__dlpack__`` and ``__dlpack_device__``.
    {device}
    copy : bool or None, optional
        As in ``asarray``. Default: None.

    Returns
    -------
    Array
        The producer's data, without a copy where device and layout allow.

    Raises
    ------
    BufferError
        A DLPack device that rocm_array has no back for.

    Notes
    -----
    Devices: CPU producers give ``cpu`` arrays, CUDA or ROCm producers ``gpu`` arrays on the same
    GPU; the producer's stream is ordered before rocm_array's.

    Examples
    --------
    >>> import rocm_array as xp
    >>> import numpy as np
    >>> xp.from_dlpack(np.arange(3.0))
    Array([0., 1., 2.], dtype=float64, device=cpu)
    """
    flag(copy, "from_dlpack", "copy", none=True)
    if isinstance(x, Array):
        return _from_array(x, None, device, copy)
    if not hasattr(x, "__dlpack_device__") or not hasattr(x, "__dlpack__"):  # (AttributeError: NumPy's class)
        raise AttributeError(f"from_dlpack(): {type(x).__name__} is not a DLPack producer (it needs __dlpack__ and "
                             f"__dlpack_device__); use xp.asarray for other objects")
    kind = _DLPACK_KINDS.get(int(x.__dlpack_device__()[0]))
    if kind is None:
        raise BufferError(f"from_dlpack(): DLPack device {x.__dlpack_device__()} is not supported")
    out = FROM_DLPACK[kind](x, copy)
    return out if device is None else _from_array(out, None, device, False if copy is False else None)


IMPLS: list[Impl] = [Impl(f.__name__, f) for f in (
    arange, asarray, empty, empty_like, eye, from_dlpack, full, full_like, linspace, meshgrid,
    ones, ones_like, tril, triu, zeros, zeros_like,
)]
