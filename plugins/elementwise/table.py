"""The elementwise functions of the standard, one row each.

Columns: name, arity, dtype category (a key of ``dtypes.CATEGORIES``), cpu back
(a NumPy ufunc, or a ``cpu.py`` wrapper where NumPy departs from the standard),
kernel functor (``kernels/elementwise``), then the result rule when it is not
"same" (see ``ufunc.RESULT_RULES``) and the choices the standard leaves open.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rocm_array import dtypes
from rocm_array.dtypes import DType

from . import cpu
from .ufunc import Ufunc

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
    Ufunc("abs", 1, _N, np.abs, "abs_op", result="real"),
    Ufunc("acos", 1, _F, np.arccos, "acos_op"),
    Ufunc("acosh", 1, _F, np.arccosh, "acosh_op"),
    Ufunc("asin", 1, _F, np.arcsin, "asin_op"),
    Ufunc("asinh", 1, _F, np.arcsinh, "asinh_op"),
    Ufunc("atan", 1, _F, np.arctan, "atan_op"),
    Ufunc("atanh", 1, _F, np.arctanh, "atanh_op"),
    Ufunc("bitwise_invert", 1, _IB, np.invert, "invert_op"),
    Ufunc("ceil", 1, _R, np.ceil, "ceil_op"),
    Ufunc("conj", 1, _N, np.conj, "conj_op"),
    Ufunc("cos", 1, _F, np.cos, "cos_op"),
    Ufunc("cosh", 1, _F, np.cosh, "cosh_op"),
    Ufunc("exp", 1, _F, np.exp, "exp_op"),
    Ufunc("expm1", 1, _F, cpu.expm1, "expm1_op"),
    Ufunc("floor", 1, _R, np.floor, "floor_op"),
    Ufunc("imag", 1, "complex floating", np.imag, "imag_op", result="real"),
    Ufunc("isfinite", 1, _N, np.isfinite, "isfinite_op", result="bool"),
    Ufunc("isinf", 1, _N, np.isinf, "isinf_op", result="bool"),
    Ufunc("isnan", 1, _N, np.isnan, "isnan_op", result="bool"),
    Ufunc("log", 1, _F, np.log, "log_op"),
    Ufunc("log1p", 1, _F, np.log1p, "log1p_op"),
    Ufunc("log2", 1, _F, np.log2, "log2_op"),
    Ufunc("log10", 1, _F, np.log10, "log10_op"),
    Ufunc("logical_not", 1, "bool", np.logical_not, "logical_not_op", result="bool"),
    Ufunc("negative", 1, _N, np.negative, "neg_op"),
    Ufunc("positive", 1, _N, np.positive, "pos_op"),
    Ufunc("real", 1, _N, np.real, "real_op", result="real"),
    Ufunc("reciprocal", 1, _F, np.reciprocal, "reciprocal_op"),
    Ufunc("round", 1, _N, np.round, "round_op"),
    Ufunc("sign", 1, _N, np.sign, "sign_op"),
    Ufunc("signbit", 1, _RF, np.signbit, "signbit_op", result="bool"),
    Ufunc("sin", 1, _F, np.sin, "sin_op"),
    Ufunc("sinh", 1, _F, np.sinh, "sinh_op"),
    Ufunc("sqrt", 1, _F, np.sqrt, "sqrt_op"),
    Ufunc("square", 1, _N, np.square, "square_op"),
    Ufunc("tan", 1, _F, np.tan, "tan_op"),
    Ufunc("tanh", 1, _F, cpu.tanh, "tanh_op"),
    Ufunc("trunc", 1, _R, np.trunc, "trunc_op"),
    # -- binary: arithmetic -----------------------------------------------------------
    Ufunc("add", 2, _N, np.add, "add_op"),
    Ufunc("subtract", 2, _N, np.subtract, "sub_op"),
    Ufunc("multiply", 2, _N, np.multiply, "mul_op"),
    # Integer operands divide in the default floating dtype (NumPy, CuPy and PyTorch do).
    Ufunc("divide", 2, _F, np.divide, "div_op", integers=dtypes.DEFAULT_FLOAT),
    Ufunc("floor_divide", 2, _R, cpu.floor_divide, "floor_div_op"),
    Ufunc("remainder", 2, _R, np.remainder, "remainder_op"),
    Ufunc("pow", 2, _N, cpu.power, "pow_op", scalar_check=_integer_exponent),
    Ufunc("maximum", 2, _R, np.maximum, "maximum_op"),
    Ufunc("minimum", 2, _R, np.minimum, "minimum_op"),
    Ufunc("atan2", 2, _RF, np.arctan2, "atan2_op"),
    Ufunc("copysign", 2, _RF, np.copysign, "copysign_op"),
    Ufunc("hypot", 2, _RF, np.hypot, "hypot_op"),
    Ufunc("logaddexp", 2, _RF, np.logaddexp, "logaddexp_op"),
    Ufunc("nextafter", 2, _RF, np.nextafter, "nextafter_op", widen_half=False),
    # -- binary: bitwise. A shift count >= the bit width, or negative, gives 0 (-1 for a negative x1 >> n).
    Ufunc("bitwise_and", 2, _IB, np.bitwise_and, "and_op"),
    Ufunc("bitwise_or", 2, _IB, np.bitwise_or, "or_op"),
    Ufunc("bitwise_xor", 2, _IB, np.bitwise_xor, "xor_op"),
    Ufunc("bitwise_left_shift", 2, "integral", np.left_shift, "lshift_op"),
    Ufunc("bitwise_right_shift", 2, "integral", np.right_shift, "rshift_op"),
    # -- binary: comparisons and logic ----------------------------------------------------
    Ufunc("equal", 2, "any", np.equal, "eq_op", result="bool"),
    Ufunc("not_equal", 2, "any", np.not_equal, "ne_op", result="bool"),
    Ufunc("greater", 2, _R, np.greater, "gt_op", result="bool"),
    Ufunc("greater_equal", 2, _R, np.greater_equal, "ge_op", result="bool"),
    Ufunc("less", 2, _R, np.less, "lt_op", result="bool"),
    Ufunc("less_equal", 2, _R, np.less_equal, "le_op", result="bool"),
    Ufunc("logical_and", 2, "bool", np.logical_and, "logical_and_op", result="bool"),
    Ufunc("logical_or", 2, "bool", np.logical_or, "logical_or_op", result="bool"),
    Ufunc("logical_xor", 2, "bool", np.logical_xor, "logical_xor_op", result="bool"),
)

#: The rows by name, for the plugin's own modules (sibling plugins use ``elementwise.own``).
BY_NAME: dict[str, Ufunc] = {u.name: u for u in UFUNCS}
