"""The elementwise functions, one row each: name, arity, dtype category, NumPy function, kernel functor."""

from __future__ import annotations

import numpy as np

from .ufunc import Ufunc

UFUNCS: tuple[Ufunc, ...] = (
    Ufunc("add", 2, "numeric", np.add, "add_op"),
    Ufunc("multiply", 2, "numeric", np.multiply, "mul_op"),
    Ufunc("equal", 2, "any", np.equal, "eq_op", result="bool"),
    Ufunc("negative", 1, "numeric", np.negative, "neg_op"),
)
