"""The activations and the one-kernel affine / powf: one row per function.

A row names its kernel functor (``rocm_array_kernels/nn/pointwise.hip``) and the NumPy
function of the cpu back, ``numpy(x, a, b)`` on float32 or float64 data, where
``a`` and ``b`` are the function's scalar parameters (elu's alpha, affine's mul
and add, powf's exponent). Real floating dtypes only; the result has the input's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, cast

import numpy as np

from rocm_array import memory
from rocm_array.array import Array
from rocm_array.hookspecs import Impl

from .backs import POINTWISE
from .common import floating

_erf = np.vectorize(math.erf, otypes=[np.float64])


@dataclass(frozen=True)
class Pointwise:
    name: str
    functor: str
    numpy: Callable[[np.ndarray, float, float], np.ndarray]

    def __call__(self, x: Array, a: float = 0.0, b: float = 0.0, fn: str | None = None) -> Array:
        dt = floating(fn or self.name, x=x)
        return cast("Array", POINTWISE[x.device.kind](self, memory.contiguous(x, dt), float(a), float(b)))


def _scalar(fn: str, what: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"nn.{fn}(): {what} must be a real number, not {type(value).__name__}")
    return float(value)


RELU = Pointwise("relu", "relu_op", lambda x, a, b: np.where(x < 0, 0, x).astype(x.dtype))
GELU = Pointwise("gelu", "gelu_op", lambda x, a, b: 0.5 * x * (1 + _erf(x / math.sqrt(2)).astype(x.dtype)))
GELU_TANH = Pointwise("gelu_tanh", "gelu_tanh_op", lambda x, a, b: 0.5 * x * (
    1 + np.tanh(np.sqrt(2 / np.pi).astype(x.dtype) * (x + 0.044715 * x ** 3))))
SIGMOID = Pointwise("sigmoid", "sigmoid_op", lambda x, a, b: 1 / (1 + np.exp(-x)))
SILU = Pointwise("silu", "silu_op", lambda x, a, b: x / (1 + np.exp(-x)))
ELU = Pointwise("elu", "elu_op", lambda x, a, b: np.where(x > 0, x, a * np.expm1(x)).astype(x.dtype))
AFFINE = Pointwise("affine", "affine_op", lambda x, a, b: x * x.dtype.type(a) + x.dtype.type(b))
POWF = Pointwise("powf", "powf_op", lambda x, a, b: np.power(x, x.dtype.type(a)))
ROWS = (RELU, GELU, GELU_TANH, SIGMOID, SILU, ELU, AFFINE, POWF)


def relu(x: Array, /) -> Array:
    """max(x, 0), elementwise; NaN stays NaN.

    Parameters
    ----------
    x : Array
        A real floating array (float16, bfloat16, float32, float64).

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
    Devices: NumPy on ``cpu`` (in float32 or float64); on a GPU one kernel of
    ``rocm_array_kernels/nn/pointwise.hip`` over contiguous data (16-bit floats computed in float32, rounded
    once).

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.nn.relu(xp.asarray([-1.0, 0.5], device="cpu"))
    Array([0. , 0.5], dtype=float64, device=cpu)
    """
    return RELU(x)


def gelu(x: Array, /, *, approximate: str = "none") -> Array:
    """The Gaussian error linear unit, x * Phi(x), elementwise.

    Parameters
    ----------
    x : Array
        A real floating array (float16, bfloat16, float32, float64).
    approximate : {'none', 'tanh'}, optional
        The exact form (erf) or the tanh approximation. Default: 'none'.

    Returns
    -------
    Array
        Of x's shape and dtype.

    Raises
    ------
    TypeError
        An input that is not a real floating array.
    ValueError
        An unknown approximate.

    Notes
    -----
    Devices: NumPy on ``cpu`` (in float32 or float64); on a GPU one kernel of
    ``rocm_array_kernels/nn/pointwise.hip`` over contiguous data (16-bit floats computed in float32, rounded
    once).

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.nn.gelu(xp.asarray([-1.0, 0.0, 1.0], device="cpu"))
    Array([-0.15865525,  0.        ,  0.84134475], dtype=float64, device=cpu)
    """
    if approximate not in ("none", "tanh"):
        raise ValueError(f"nn.gelu(): approximate must be 'none' or 'tanh', got {approximate!r}")
    return (GELU if approximate == "none" else GELU_TANH)(x, fn="gelu")


def silu(x: Array, /) -> Array:
    """x * sigmoid(x), elementwise.

    Parameters
    ----------
    x : Array
        A real floating array (float16, bfloat16, float32, float64).

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
    Devices: NumPy on ``cpu`` (in float32 or float64); on a GPU one kernel of
    ``rocm_array_kernels/nn/pointwise.hip`` over contiguous data (16-bit floats computed in float32, rounded
    once).

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.nn.silu(xp.asarray([-1.0, 0.0, 1.0], device="cpu"))
    Array([-0.26894142,  0.        ,  0.73105858], dtype=float64, device=cpu)
    """
    return SILU(x)


def sigmoid(x: Array, /) -> Array:
    """1 / (1 + exp(-x)), elementwise.

    Parameters
    ----------
    x : Array
        A real floating array (float16, bfloat16, float32, float64).

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
    Devices: NumPy on ``cpu`` (in float32 or float64); on a GPU one kernel of
    ``rocm_array_kernels/nn/pointwise.hip`` over contiguous data (16-bit floats computed in float32, rounded
    once).

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.nn.sigmoid(xp.asarray([-1.0, 0.0, 1.0], device="cpu"))
    Array([0.26894142, 0.5       , 0.73105858], dtype=float64, device=cpu)
    """
    return SIGMOID(x)


def elu(x: Array, /, *, alpha: float = 1.0) -> Array:
    """x where x > 0, else alpha * (exp(x) - 1), elementwise.

    Parameters
    ----------
    x : Array
        A real floating array (float16, bfloat16, float32, float64).
    alpha : float, optional
        Default: 1.0.

    Returns
    -------
    Array
        Of x's shape and dtype.

    Raises
    ------
    TypeError
        A non-floating x, or an alpha that is not a real number.

    Notes
    -----
    Devices: NumPy on ``cpu`` (in float32 or float64); on a GPU one kernel of
    ``rocm_array_kernels/nn/pointwise.hip`` over contiguous data (16-bit floats computed in float32, rounded
    once).

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.nn.elu(xp.asarray([-1.0, 2.0], device="cpu"))
    Array([-0.63212056,  2.        ], dtype=float64, device=cpu)
    """
    return ELU(x, _scalar("elu", "alpha", alpha))


def affine(x: Array, mul: float, add: float, /) -> Array:
    """x * mul + add in one kernel.

    Parameters
    ----------
    x : Array
        A real floating array (float16, bfloat16, float32, float64).
    mul, add : float
        The scale and the shift.

    Returns
    -------
    Array
        Of x's shape and dtype (16-bit floats computed in float32, rounded once).

    Raises
    ------
    TypeError
        A non-floating x, or mul or add that is not a real number.

    Notes
    -----
    Devices: NumPy on ``cpu`` (in float32 or float64); on a GPU one kernel of
    ``rocm_array_kernels/nn/pointwise.hip`` over contiguous data (16-bit floats computed in float32, rounded
    once).

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.nn.affine(xp.asarray([1.0, 2.0], device="cpu"), 2.0, 0.5)
    Array([2.5, 4.5], dtype=float64, device=cpu)
    """
    return AFFINE(x, _scalar("affine", "mul", mul), _scalar("affine", "add", add))


def powf(x: Array, e: float, /) -> Array:
    """x ** e for a scalar exponent, in one kernel.

    Parameters
    ----------
    x : Array
        A real floating array (float16, bfloat16, float32, float64).
    e : float
        The exponent.

    Returns
    -------
    Array
        Of x's shape and dtype.

    Raises
    ------
    TypeError
        A non-floating x, or an e that is not a real number.

    Notes
    -----
    Devices: NumPy on ``cpu`` (in float32 or float64); on a GPU one kernel of
    ``rocm_array_kernels/nn/pointwise.hip`` over contiguous data (16-bit floats computed in float32, rounded
    once).

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.nn.powf(xp.asarray([4.0, 9.0], device="cpu"), 0.5)
    Array([2., 3.], dtype=float64, device=cpu)
    """
    return POWF(x, _scalar("powf", "e", e))


IMPLS: list[Impl] = [Impl(f"nn.{f.__name__}", f) for f in (relu, gelu, silu, sigmoid, elu, affine, powf)]
__all__: list[Any] = ["ROWS", "POINTWISE", "IMPLS"]
