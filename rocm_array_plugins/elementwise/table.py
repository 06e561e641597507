"""The elementwise functions of the standard, one row each, and the activations.

Columns: name, arity, dtype category (a key of ``dtypes.CATEGORIES``), cpu back
(a NumPy ufunc, or a ``cpu.py`` wrapper where NumPy departs from the standard),
kernel functor (``rocm_array_kernels/elementwise``), then the result rule when it is not
"same" (see ``front_ufunc.RESULT_RULES``) and the choices the standard leaves open.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rocm_array import dtypes
from rocm_array.dtypes import DType

from . import cpu
from .front_ufunc import ParamUfunc, Ufunc

_F = "floating-point"
_RF = "real floating"
_R = "real-valued"
_N = "numeric"
_IB = "integer or boolean"



def _integer_exponent(value: Any, position: int, dtype: DType) -> None:
    """An integer array to a negative Python int power: ValueError, as NumPy and PyTorch raise.
    (A negative element of an integer exponent *array* gives ``cpu.power``'s documented value.)"""
    if position == 1 and dtype.kind in "iu" and isinstance(value, int) and value < 0:
        raise ValueError(f"pow(): a {dtype.name} array to the negative power {value} has no integer "
                         f"result; use a floating array, e.g. x.astype(xp.float64) ** {value}")


UFUNCS: tuple[Ufunc, ...] = (
    # -- unary ------------------------------------------------------------------------
    Ufunc("abs", 1, _N, np.abs, "abs_op", result="real",
          doc="The absolute value of each element (the magnitude, for complex input)."),
    Ufunc("acos", 1, _F, np.arccos, "acos_op",
          doc="The inverse cosine of each element, in radians."),
    Ufunc("acosh", 1, _F, np.arccosh, "acosh_op",
          doc="The inverse hyperbolic cosine of each element."),
    Ufunc("asin", 1, _F, np.arcsin, "asin_op",
          doc="The inverse sine of each element, in radians."),
    Ufunc("asinh", 1, _F, np.arcsinh, "asinh_op",
          doc="The inverse hyperbolic sine of each element."),
    Ufunc("atan", 1, _F, np.arctan, "atan_op",
          doc="The inverse tangent of each element, in radians."),
    Ufunc("atanh", 1, _F, np.arctanh, "atanh_op",
          doc="The inverse hyperbolic tangent of each element."),
    Ufunc("bitwise_invert", 1, _IB, np.invert, "invert_op",
          doc="The bitwise NOT of each element (logical NOT for bool)."),
    Ufunc("ceil", 1, _R, np.ceil, "ceil_op",
          doc="The smallest integer value not less than each element."),
    Ufunc("conj", 1, _N, np.conj, "conj_op",
          doc="The complex conjugate of each element (real input is returned as it is)."),
    Ufunc("cos", 1, _F, np.cos, "cos_op",
          doc="The cosine of each element, given in radians."),
    Ufunc("cosh", 1, _F, np.cosh, "cosh_op",
          doc="The hyperbolic cosine of each element."),
    Ufunc("exp", 1, _F, np.exp, "exp_op",
          doc="e raised to the power of each element."),
    Ufunc("expm1", 1, _F, cpu.expm1, "expm1_op",
          doc="exp(x) - 1 for each element, accurate for small x."),
    Ufunc("floor", 1, _R, np.floor, "floor_op",
          doc="The largest integer value not greater than each element."),
    Ufunc("imag", 1, "complex floating", np.imag, "imag_op", result="real",
          doc="The imaginary part of each element of a complex array."),
    Ufunc("isfinite", 1, _N, np.isfinite, "isfinite_op", result="bool",
          doc="Whether each element is finite (neither infinite nor NaN)."),
    Ufunc("isinf", 1, _N, np.isinf, "isinf_op", result="bool",
          doc="Whether each element is positive or negative infinity."),
    Ufunc("isnan", 1, _N, np.isnan, "isnan_op", result="bool",
          doc="Whether each element is NaN."),
    Ufunc("log", 1, _F, np.log, "log_op",
          doc="The natural logarithm of each element."),
    Ufunc("log1p", 1, _F, cpu.log1p, "log1p_op",
          doc="log(1 + x) for each element, accurate for small x."),
    Ufunc("log2", 1, _F, np.log2, "log2_op",
          doc="The base-2 logarithm of each element."),
    Ufunc("log10", 1, _F, np.log10, "log10_op",
          doc="The base-10 logarithm of each element."),
    Ufunc("logical_not", 1, "bool", np.logical_not, "logical_not_op", result="bool",
          doc="The logical NOT of each element of a bool array."),
    Ufunc("negative", 1, _N, np.negative, "neg_op",
          doc="The negation of each element (-x)."),
    Ufunc("positive", 1, _N, np.positive, "pos_op",
          doc="Each element unchanged (+x), as a new array."),
    Ufunc("real", 1, _N, np.real, "real_op", result="real",
          doc="The real part of each element (real input is returned as it is)."),
    Ufunc("reciprocal", 1, _F, np.reciprocal, "reciprocal_op",
          doc="1 / x for each element."),
    Ufunc("round", 1, _N, np.round, "round_op",
          doc="Each element rounded to the nearest integer value, halves to even."),
    Ufunc("sign", 1, _N, cpu.sign, "sign_op",
          doc="The sign of each element: -1, 0 or 1 (x / abs(x) for complex input)."),
    Ufunc("signbit", 1, _RF, np.signbit, "signbit_op", result="bool",
          doc="Whether the sign bit of each element is set (also for -0.0 and NaNs)."),
    Ufunc("sin", 1, _F, np.sin, "sin_op",
          doc="The sine of each element, given in radians."),
    Ufunc("sinh", 1, _F, np.sinh, "sinh_op",
          doc="The hyperbolic sine of each element."),
    Ufunc("sqrt", 1, _F, np.sqrt, "sqrt_op",
          doc="The principal square root of each element."),
    Ufunc("square", 1, _N, np.square, "square_op",
          doc="Each element squared (x * x)."),
    Ufunc("tan", 1, _F, np.tan, "tan_op",
          doc="The tangent of each element, given in radians."),
    Ufunc("tanh", 1, _F, cpu.tanh, "tanh_op",
          doc="The hyperbolic tangent of each element."),
    Ufunc("trunc", 1, _R, np.trunc, "trunc_op",
          doc="Each element rounded toward zero to an integer value."),
    # -- binary: arithmetic -----------------------------------------------------------
    Ufunc("add", 2, _N, np.add, "add_op",
          doc="The sum x1 + x2 of each pair of elements."),
    Ufunc("subtract", 2, _N, np.subtract, "sub_op",
          doc="The difference x1 - x2 of each pair of elements."),
    Ufunc("multiply", 2, _N, np.multiply, "mul_op",
          doc="The product x1 * x2 of each pair of elements."),
    # Integer operands divide in the default floating dtype (NumPy, CuPy and PyTorch do).
    Ufunc("divide", 2, _F, np.divide, "div_op", integers=dtypes.DEFAULT_FLOAT,
          doc="The true quotient x1 / x2 of each pair of elements."),
    Ufunc("floor_divide", 2, _R, cpu.floor_divide, "floor_div_op",
          doc="The quotient x1 / x2 rounded down to an integer value, for each pair of elements."),
    Ufunc("remainder", 2, _R, np.remainder, "remainder_op",
          doc="The remainder of floor division, with the sign of x2, for each pair of elements."),
    Ufunc("pow", 2, _N, cpu.power, "pow_op", scalar_check=_integer_exponent,
          doc="x1 raised to the power x2, for each pair of elements."),
    Ufunc("maximum", 2, _R, np.maximum, "maximum_op",
          doc="The larger of each pair of elements (NaN if either is NaN)."),
    Ufunc("minimum", 2, _R, np.minimum, "minimum_op",
          doc="The smaller of each pair of elements (NaN if either is NaN)."),
    Ufunc("atan2", 2, _RF, np.arctan2, "atan2_op",
          doc="The angle, in radians, of the point (x2, x1): the quadrant-aware inverse tangent of x1 / x2."),
    Ufunc("copysign", 2, _RF, np.copysign, "copysign_op",
          doc="The magnitude of x1 with the sign of x2, for each pair of elements."),
    Ufunc("hypot", 2, _RF, np.hypot, "hypot_op",
          doc="sqrt(x1**2 + x2**2) for each pair of elements, without undue overflow."),
    Ufunc("logaddexp", 2, _RF, np.logaddexp, "logaddexp_op",
          doc="log(exp(x1) + exp(x2)) for each pair of elements, without undue overflow."),
    Ufunc("nextafter", 2, _RF, cpu.nextafter, "nextafter_op", widen_half=False,
          doc="The next representable value after x1 toward x2, in x1's dtype."),
    # -- binary: bitwise. A shift count >= the bit width, or negative, gives 0 (-1 for a negative x1 >> n).
    Ufunc("bitwise_and", 2, _IB, np.bitwise_and, "and_op",
          doc="The bitwise AND of each pair of elements (logical AND for bool)."),
    Ufunc("bitwise_or", 2, _IB, np.bitwise_or, "or_op",
          doc="The bitwise OR of each pair of elements (logical OR for bool)."),
    Ufunc("bitwise_xor", 2, _IB, np.bitwise_xor, "xor_op",
          doc="The bitwise XOR of each pair of elements (logical XOR for bool)."),
    Ufunc("bitwise_left_shift", 2, "integral", np.left_shift, "lshift_op",
          doc="x1 shifted left by x2 bits, for each pair of elements."),
    Ufunc("bitwise_right_shift", 2, "integral", np.right_shift, "rshift_op",
          doc="x1 shifted right by x2 bits (arithmetic for signed x1), for each pair of elements."),
    # -- binary: comparisons and logic ----------------------------------------------------
    Ufunc("equal", 2, "any", np.equal, "eq_op", result="bool",
          doc="Whether x1 == x2, for each pair of elements."),
    Ufunc("not_equal", 2, "any", np.not_equal, "ne_op", result="bool",
          doc="Whether x1 != x2, for each pair of elements."),
    Ufunc("greater", 2, _R, np.greater, "gt_op", result="bool",
          doc="Whether x1 > x2, for each pair of elements."),
    Ufunc("greater_equal", 2, _R, np.greater_equal, "ge_op", result="bool",
          doc="Whether x1 >= x2, for each pair of elements."),
    Ufunc("less", 2, _R, np.less, "lt_op", result="bool",
          doc="Whether x1 < x2, for each pair of elements."),
    Ufunc("less_equal", 2, _R, np.less_equal, "le_op", result="bool",
          doc="Whether x1 <= x2, for each pair of elements."),
    Ufunc("logical_and", 2, "bool", np.logical_and, "logical_and_op", result="bool",
          doc="The logical AND of each pair of elements of bool arrays."),
    Ufunc("logical_or", 2, "bool", np.logical_or, "logical_or_op", result="bool",
          doc="The logical OR of each pair of elements of bool arrays."),
    Ufunc("logical_xor", 2, "bool", np.logical_xor, "logical_xor_op", result="bool",
          doc="The logical XOR of each pair of elements of bool arrays."),
)

#: Rows that are no function of this plugin's namespace: the nn plugin's activations (with its
#: one-operation affine and powf), which it publishes (``xp.nn.silu``...) with fronts of its own
#: over these rows (served by ``own``). As rows they share the kernels, the lanes and fusion:
#: ``xp.nn.silu(x * 2)`` is one kernel.
ACTIVATIONS: tuple[Ufunc, ...] = (
    Ufunc("relu", 1, _RF, cpu.relu, "relu_op",
          doc="max(x, 0) for each element; NaN stays NaN."),
    Ufunc("gelu", 1, _RF, cpu.gelu, "gelu_op",
          doc="The Gaussian error linear unit x * Phi(x) of each element (Phi by erf)."),
    Ufunc("gelu_tanh", 1, _RF, cpu.gelu_tanh, "gelu_tanh_op",
          doc="The Gaussian error linear unit of each element, by its tanh approximation."),
    Ufunc("sigmoid", 1, _RF, cpu.sigmoid, "sigmoid_op",
          doc="1 / (1 + exp(-x)) for each element."),
    Ufunc("silu", 1, _RF, cpu.silu, "silu_op",
          doc="x * sigmoid(x) for each element."),
    ParamUfunc("elu", 1, _RF, cpu.elu, "elu_op", params=("alpha",),
               doc="x where x > 0, else alpha * (exp(x) - 1), for each element."),
    ParamUfunc("affine", 1, _RF, cpu.affine, "affine_op", params=("mul", "add"),
               doc="x * mul + add for each element, rounded once."),
    ParamUfunc("powf", 1, _RF, cpu.powf, "powf_op", params=("e",),
               doc="x ** e for each element."),
)
#: Every row: what the gpu back compiles.
ROWS: tuple[Ufunc, ...] = UFUNCS + ACTIVATIONS
#: The rows by name, for the plugin's own modules (sibling plugins use ``elementwise.own``).
BY_NAME: dict[str, Ufunc] = {u.name: u for u in ROWS}
