"""The reductions, one row each: name, dtype category, result rule, identity, kernel slots, NumPy function.

Kernel slots name functors of ``kernels/reduction``: ``map`` turns an element
into the accumulator, ``combine`` joins two accumulators, ``finalize`` turns
the accumulator into the result. Mean, var and std carry a count (var and std
a Welford triple); argmax and argmin a (value, index) pair that keeps the
first index on ties.
"""

from __future__ import annotations

import numpy as np

from rocm_array.hookspecs import Impl

from .front import Reduction

_NAN = complex(float("nan"), float("nan"))  # mean of nothing: NaN (NaN + NaN j for complex)

REDUCTIONS: tuple[Reduction, ...] = (
    # statistical
    # sum and prod of bool count in the default integer (``front.accumulation_dtype``).
    Reduction("sum", "any", "accumulate", 0, "identity_op", "add_op", "identity_op", np.sum,
              accumulate=True, options=("dtype",)),
    Reduction("prod", "any", "accumulate", 1, "identity_op", "mul_op", "identity_op", np.prod,
              accumulate=True, options=("dtype",)),
    Reduction("max", "real-valued", "same", None, "identity_op", "max_op", "identity_op", np.max),
    Reduction("min", "real-valued", "same", None, "identity_op", "min_op", "identity_op", np.min),
    Reduction("mean", "numeric", "float", _NAN, "count_op", "count_add_op", "mean_op", np.mean,
              accumulate=True, options=("dtype",)),
    Reduction("var", "real-valued", "float", _NAN, "welford_op", "welford_combine_op", "var_op", np.var,
              accumulate=True, options=("correction",)),
    Reduction("std", "real-valued", "float", _NAN, "welford_op", "welford_combine_op", "std_op", np.std,
              accumulate=True, options=("correction",)),
    # utility
    Reduction("all", "any", "bool", True, "nonzero_op", "and_op", "identity_op", np.all),
    Reduction("any", "any", "bool", False, "nonzero_op", "or_op", "identity_op", np.any),
    # searching
    Reduction("count_nonzero", "any", "index", 0, "nonzero_index_op", "add_op", "identity_op",
              np.count_nonzero),
    Reduction("argmax", "real-valued", "index", None, "value_index_op", "argmax_op", "index_op", np.argmax,
              axis="one"),
    Reduction("argmin", "real-valued", "index", None, "value_index_op", "argmin_op", "index_op", np.argmin,
              axis="one"),
)

IMPLS = [Impl(r.name, r) for r in REDUCTIONS]
