"""The helper functions: fftfreq, rfftfreq, fftshift, ifftshift.

They need no back of their own: the frequencies are the elementwise plugin's
integer sequence (arange) times 1 / (n d), as NumPy computes them, and the shifts
are strided copies (``memory.copy_into``), so they run on every device.
"""

from __future__ import annotations

from typing import Callable, Sequence, cast

from rocm_array import devices, dtypes
from rocm_array.array import Array
from rocm_array.axes import integer, normalize_axes
from rocm_array.docstrings import DEFAULT_DEVICE, parameters
from rocm_array.dtypes import CATEGORIES, DType
from rocm_array.hookspecs import Impl
from rocm_array.memory import copy_into, empty
from rocm_array_plugins.elementwise import own as elementwise

from .front_transforms import MAX_LENGTH


def _frequencies(name: str, n: int, d: float, dtype: DType | None, device: object) -> Array:
    n = integer(n, f"fft.{name}", "n")
    if not 1 <= n <= MAX_LENGTH:
        raise ValueError(f"fft.{name}(): n must be from 1 to {MAX_LENGTH}, got {n}")
    if isinstance(d, bool) or not isinstance(d, (int, float)):
        raise TypeError(f"fft.{name}(): d must be a real number, not {type(d).__name__}")
    if d == 0:
        raise ValueError(f"fft.{name}(): the sample spacing d must not be 0")
    dt = dtypes.DEFAULT_FLOAT if dtype is None else dtypes.check_dtype(dtype, f"fft.{name}")
    if dt not in CATEGORIES["real floating"]:
        raise TypeError(f"fft.{name}(): dtype must be a real floating dtype, not {dt.name}")
    dev = devices.resolve(device, f"fft.{name}")
    arange = elementwise("arange")
    # NumPy's: the integers 0, 1, ... (then -(n // 2), ..., -1 for fftfreq) times 1 / (n d) in float64.
    index = arange(n // 2 + 1 if name == "rfftfreq" else (n - 1) // 2 + 1, dtype=dtypes.int64, device=dev)
    if name == "fftfreq" and n > 1:
        index = elementwise("concat")([index, arange(-(n // 2), 0, dtype=dtypes.int64, device=dev)])
    return cast("Array", elementwise("astype")(elementwise("multiply")(index, 1.0 / (n * float(d))), dt))


@parameters(dtype="float64 (a real floating dtype)", device=DEFAULT_DEVICE)
def fftfreq(n: int, /, *, d: float = 1.0, dtype: DType | None = None, device: object = None) -> Array:
    """The sample frequencies of an ``n``-point transform with sample spacing ``d``.

    Parameters
    ----------
    n : int
        The transform length.
    d : float, optional
        The sample spacing; not 0. Default: 1.0.
    {dtype}
    {device}

    Returns
    -------
    Array
        [0, 1, ..., n/2 - 1, -n/2, ..., -1] / (d * n).

    Raises
    ------
    TypeError
        A non-integer n, or a dtype that is not real floating.
    ValueError
        n below 1, or d == 0.

    Notes
    -----
    Devices: computed on the host and uploaded (n values).

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.fft.fftfreq(4, device="cpu")
    Array([ 0.  ,  0.25, -0.5 , -0.25], dtype=float64, device=cpu)
    """
    return _frequencies("fftfreq", n, d, dtype, device)


@parameters(dtype="float64 (a real floating dtype)", device=DEFAULT_DEVICE)
def rfftfreq(n: int, /, *, d: float = 1.0, dtype: DType | None = None, device: object = None) -> Array:
    """The ``n // 2 + 1`` non-negative sample frequencies of an ``n``-point real transform.

    Parameters
    ----------
    n : int
        The transform length.
    d : float, optional
        The sample spacing; not 0. Default: 1.0.
    {dtype}
    {device}

    Returns
    -------
    Array
        [0, 1, ..., n // 2] / (d * n).

    Raises
    ------
    TypeError
        A non-integer n, or a dtype that is not real floating.
    ValueError
        n below 1, or d == 0.

    Notes
    -----
    Devices: computed on the host and uploaded.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.fft.rfftfreq(4, device="cpu")
    Array([0.  , 0.25, 0.5 ], dtype=float64, device=cpu)
    """
    return _frequencies("rfftfreq", n, d, dtype, device)


def _along(x: Array, axis: int, start: int, stop: int) -> Array:
    """The view ``x[..., start:stop, ...]`` on ``axis``."""
    shape = (*x.shape[:axis], stop - start, *x.shape[axis + 1:])
    return x._view(shape, x.strides, x.offset + start * x.strides[axis])


def _roll(name: str, x: Array, axes: int | Sequence[int] | None, shift: Callable[[int], int]) -> Array:
    """A new array: ``x`` rolled by ``shift(size)`` along each of ``axes`` (None: all)."""
    if not isinstance(x, Array):
        raise TypeError(f"fft.{name}() expects an array, got {type(x).__name__}")
    out = empty(x.shape, x.dtype, x.device)
    copy_into(out, x)
    for a in normalize_axes(axes, x.ndim, f"fft.{name}"):
        n = x.shape[a]
        k = shift(n) % n if n else 0
        if k:
            src, out = out, empty(x.shape, x.dtype, x.device)
            copy_into(_along(out, a, k, n), _along(src, a, 0, n - k))
            copy_into(_along(out, a, 0, k), _along(src, a, n - k, n))
    return out


def fftshift(x: Array, /, *, axes: int | Sequence[int] | None = None) -> Array:
    """``x`` with the zero frequency moved to the middle of ``axes``.

    Parameters
    ----------
    x : Array
        The input.
    axes : int, sequence of ints or None, optional
        Default: all.

    Returns
    -------
    Array
        A new array of x's shape.

    Raises
    ------
    TypeError
        A non-array x.
    AxisError
        An axis out of range.

    Notes
    -----
    Devices: two strided copies per axis on x's device.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.fft.fftshift(xp.fft.fftfreq(5, device="cpu"))
    Array([-0.4, -0.2,  0. ,  0.2,  0.4], dtype=float64, device=cpu)
    """
    return _roll("fftshift", x, axes, lambda n: n // 2)


def ifftshift(x: Array, /, *, axes: int | Sequence[int] | None = None) -> Array:
    """The inverse of ``fftshift``.

    Parameters
    ----------
    x : Array
        The input.
    axes : int, sequence of ints or None, optional
        Default: all.

    Returns
    -------
    Array
        A new array of x's shape.

    Raises
    ------
    TypeError
        A non-array x.
    AxisError
        An axis out of range.

    Notes
    -----
    Devices: two strided copies per axis on x's device.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.fft.ifftshift(xp.fft.fftshift(xp.fft.fftfreq(5, device="cpu")))
    Array([ 0. ,  0.2,  0.4, -0.4, -0.2], dtype=float64, device=cpu)
    """
    return _roll("ifftshift", x, axes, lambda n: -(n // 2))


IMPLS: list[Impl] = [Impl(f"fft.{f.__name__}", f) for f in (fftfreq, rfftfreq, fftshift, ifftshift)]
