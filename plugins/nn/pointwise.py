"""The activations and the one-kernel affine / powf: one row per function.

A row names its kernel functor (``kernels/nn/pointwise.hip``) and the NumPy
function of the cpu back, ``numpy(x, a, b)`` on float32 or float64 data, where
``a`` and ``b`` are the function's scalar parameters (elu's alpha, affine's mul
and add, powf's exponent). Real floating dtypes only; the result has the input's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

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
        return POINTWISE[x.device.kind](self, memory.contiguous(x, dt), float(a), float(b))


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
    """max(x, 0); NaN stays NaN."""
    return RELU(x)


def gelu(x: Array, /, *, approximate: str = "none") -> Array:
    """x * Phi(x) (``approximate="none"``) or its tanh approximation (``"tanh"``)."""
    if approximate not in ("none", "tanh"):
        raise ValueError(f"nn.gelu(): approximate must be 'none' or 'tanh', got {approximate!r}")
    return (GELU if approximate == "none" else GELU_TANH)(x, fn="gelu")


def silu(x: Array, /) -> Array:
    """x * sigmoid(x)."""
    return SILU(x)


def sigmoid(x: Array, /) -> Array:
    """1 / (1 + exp(-x))."""
    return SIGMOID(x)


def elu(x: Array, /, *, alpha: float = 1.0) -> Array:
    """x where x > 0, else alpha * (exp(x) - 1)."""
    return ELU(x, _scalar("elu", "alpha", alpha))


def affine(x: Array, mul: float, add: float, /) -> Array:
    """x * mul + add in one kernel (computed in float32 for the 16-bit floats, rounded once)."""
    return AFFINE(x, _scalar("affine", "mul", mul), _scalar("affine", "add", add))


def powf(x: Array, e: float, /) -> Array:
    """x ** e for a scalar exponent, in one kernel."""
    return POWF(x, _scalar("powf", "e", e))


IMPLS: list[Impl] = [Impl(f"nn.{f.__name__}", f) for f in (relu, gelu, silu, sigmoid, elu, affine, powf)]
__all__: list[Any] = ["ROWS", "POINTWISE", "IMPLS"]
