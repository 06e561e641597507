"""softmax, log_softmax, layer_norm and rms_norm: functions of whole rows.

The front brings the data into contiguous rows of the result dtype (softmax moves
its axis last; the norms take the trailing ``normalized_shape`` dimensions as one
row) and the device's back computes row by row, accumulating in float32 for the
16-bit floats. Softmax subtracts the row's maximum first (stable for any input).
"""

from __future__ import annotations

import math
from typing import Sequence

import ml_dtypes

from rocm_array import memory
from rocm_array.array import Array
from rocm_array.axes import integer, normalize_axis
from rocm_array.hookspecs import Impl

from .backs import NORM, SOFTMAX
from rocm_array.views import flat_view, moved_back, moved_last

from .common import floating

#: ``back(x, weight, bias, eps, rms)``: x contiguous (rows, n); weight and bias None or contiguous (n,).


def _softmax(name: str, x: Array, axis: int, log: bool) -> Array:
    dt = floating(name, x=x)
    if x.ndim == 0:
        x = x._view((1,), (1,), x.offset)
        return flat_view(_softmax(name, x, 0, log), ())
    axis = normalize_axis(axis, x.ndim, f"nn.{name}")
    moved, order = moved_last(x, axis, dt)
    n = x.shape[axis]
    if moved.size == 0:
        return moved_back(moved, order)
    y = SOFTMAX[x.device.kind](flat_view(moved, (moved.size // n, n)), log)
    return moved_back(flat_view(y, moved.shape), order)


def softmax(x: Array, /, *, axis: int = -1) -> Array:
    """exp(x) / sum(exp(x)) along ``axis``, computed stably (the row's maximum subtracted first).

    Parameters
    ----------
    x : Array
        A real floating array (float16, bfloat16, float32, float64).
    axis : int, optional
        Default: -1.

    Returns
    -------
    Array
        Of x's shape and dtype.

    Raises
    ------
    TypeError
        An input that is not a real floating array.

    Notes
    -----
    Devices: NumPy on ``cpu``; on a GPU one kernel per row block (a block, or a wave for short rows;
    rows of up to 128 bytes per thread held in registers and read once).

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.nn.softmax(xp.asarray([1.0, 2.0, 3.0], device="cpu"))
    Array([0.09003057, 0.24472847, 0.66524096], dtype=float64, device=cpu)
    """
    return _softmax("softmax", x, axis, False)


def log_softmax(x: Array, /, *, axis: int = -1) -> Array:
    """log(softmax(x)) along ``axis``, without forming softmax (x - max - log(sum(exp(x - max)))).

    Parameters
    ----------
    x : Array
        A real floating array (float16, bfloat16, float32, float64).
    axis : int, optional
        Default: -1.

    Returns
    -------
    Array
        Of x's shape and dtype.

    Raises
    ------
    TypeError
        An input that is not a real floating array.

    Notes
    -----
    Devices: as softmax's.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.nn.log_softmax(xp.asarray([1.0, 2.0, 3.0], device="cpu"))
    Array([-2.40760596, -1.40760596, -0.40760596], dtype=float64, device=cpu)
    """
    return _softmax("log_softmax", x, axis, True)


def _norm(name: str, x: Array, normalized_shape: int | Sequence[int], weight: Array | None,
          bias: Array | None, eps: float | None, rms: bool) -> Array:
    dt = floating(name, ("weight", "bias"), x=x, weight=weight, bias=bias)
    shape = tuple(integer(n, f"nn.{name}", "normalized_shape")
                  for n in (normalized_shape if isinstance(normalized_shape, (tuple, list)) else [normalized_shape]))
    k = len(shape)
    if k == 0:
        raise ValueError(f"nn.{name}(): normalized_shape is empty; give the trailing dimension(s) to normalize, "
                         f"e.g. {x.shape[-1:] or (1,)}")
    if k > x.ndim or x.shape[x.ndim - k:] != shape:
        raise ValueError(f"nn.{name}(): normalized_shape {shape} is not the trailing shape of an input "
                         f"of shape {x.shape}")
    for what, p in (("weight", weight), ("bias", bias)):
        if p is not None and p.shape != shape:
            raise ValueError(f"nn.{name}(): {what} has shape {p.shape}, expected {shape}")
    if eps is None:
        eps = float(ml_dtypes.finfo(dt.numpy).eps)  # type: ignore[no-untyped-call]  # (ml_dtypes has no types); as torch.rms_norm: the dtype's epsilon
    if isinstance(eps, bool) or not isinstance(eps, (int, float)):
        raise TypeError(f"nn.{name}(): eps must be a number, got {type(eps).__name__}")
    if not eps >= 0:
        raise ValueError(f"nn.{name}(): eps must be a non-negative number, got {eps!r}")
    xc = memory.contiguous(x, dt)
    if x.size == 0:
        return xc
    n = math.prod(shape)
    w, b = (None if p is None else flat_view(memory.contiguous(p, dt), (n,)) for p in (weight, bias))
    y = NORM[x.device.kind](flat_view(xc, (x.size // n, n)), w, b, float(eps), rms)
    return flat_view(y, x.shape)


def layer_norm(x: Array, normalized_shape: int | Sequence[int], /, weight: Array | None = None,
               bias: Array | None = None, *, eps: float = 1e-5) -> Array:
    """Layer normalization over the trailing ``normalized_shape`` dimensions.

    Parameters
    ----------
    x : Array
        A real floating array (float16, bfloat16, float32, float64).
    normalized_shape : int or sequence of ints
        The trailing dimensions normalized together.
    weight, bias : Array, optional
        Of ``normalized_shape``: scale and shift. Default: None.
    eps : float, optional
        Added to the variance. Default: 1e-5.

    Returns
    -------
    Array
        (x - mean) / sqrt(var + eps) * weight + bias, of x's shape, in the promoted dtype of
        x, weight and bias.

    Raises
    ------
    TypeError
        An input that is not a real floating array (mixed floating dtypes promote).
    ValueError
        A normalized_shape that is not x's trailing shape, or weight/bias of another shape.

    Notes
    -----
    Devices: NumPy on ``cpu``; one row kernel on a GPU (statistics in float32 or float64).

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.nn.layer_norm(xp.asarray([[1.0, 2.0, 3.0]], device="cpu"), 3)
    Array([[-1.22473569,  0.        ,  1.22473569]], dtype=float64, device=cpu)
    """
    return _norm("layer_norm", x, normalized_shape, weight, bias, eps, False)


def rms_norm(x: Array, normalized_shape: int | Sequence[int], /, weight: Array | None = None,
             bias: Array | None = None, *, eps: float | None = None) -> Array:
    """Root-mean-square normalization over the trailing ``normalized_shape`` dimensions.

    Parameters
    ----------
    x : Array
        A real floating array (float16, bfloat16, float32, float64).
    normalized_shape : int or sequence of ints
        The trailing dimensions normalized together.
    weight, bias : Array, optional
        Of ``normalized_shape``. Default: None.
    eps : float, optional
        Added to the mean square. Default: the dtype's machine epsilon.

    Returns
    -------
    Array
        x / sqrt(mean(x**2) + eps) * weight + bias, of x's shape, in the promoted dtype of x,
        weight and bias.

    Raises
    ------
    TypeError
        An input that is not a real floating array (mixed floating dtypes promote).
    ValueError
        A normalized_shape that is not x's trailing shape.

    Notes
    -----
    Devices: NumPy on ``cpu``; one row kernel on a GPU.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.nn.rms_norm(xp.asarray([[3.0, 4.0]], device="cpu"), 2)
    Array([[0.84852814, 1.13137085]], dtype=float64, device=cpu)
    """
    return _norm("rms_norm", x, normalized_shape, weight, bias, eps, True)


IMPLS: list[Impl] = [Impl(f"nn.{f.__name__}", f) for f in (softmax, log_softmax, layer_norm, rms_norm)]
