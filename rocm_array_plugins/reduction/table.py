"""The reductions, one row each: name, dtype category, result rule, identity, kernel slots, NumPy function.

Kernel slots name functors of ``rocm_array_kernels/reduction/reduction.hip`` as C++ does (they
live in its namespace ``ra_red``): ``map`` turns an element
into the accumulator, ``combine`` joins two accumulators, ``finalize`` turns
the accumulator into the result. Mean, var and std carry a count (var and std
a Welford triple); argmax and argmin a (value, index) pair that keeps the
first index on ties.
"""

from __future__ import annotations

import numpy as np

from rocm_array.hookspecs import Impl

from . import cpu
from .front_reduction import Reduction

_NAN = complex(float("nan"), float("nan"))  # mean of nothing: NaN (NaN + NaN j for complex)

REDUCTIONS: tuple[Reduction, ...] = (
    # statistical
    # sum and prod of bool count in the default integer (``front_reduction.accumulation_dtype``).
    Reduction("sum", "any", "accumulate", 0, "ra_red::identity_op", "ra_red::add_op", "ra_red::identity_op", np.sum,
              accumulate=True, options=("dtype",),
              doc="The sum of the elements along the given axes."),
    Reduction("prod", "any", "accumulate", 1, "ra_red::identity_op", "ra_red::mul_op", "ra_red::identity_op", np.prod,
              accumulate=True, options=("dtype",),
              doc="The product of the elements along the given axes."),
    Reduction("max", "real-valued", "same", None, "ra_red::identity_op", "ra_red::max_op", "ra_red::identity_op",
              np.max, doc="The largest element along the given axes."),
    Reduction("min", "real-valued", "same", None, "ra_red::identity_op", "ra_red::min_op", "ra_red::identity_op",
              np.min, doc="The smallest element along the given axes."),
    Reduction("mean", "numeric", "float", _NAN, "ra_red::count_op", "ra_red::count_add_op", "ra_red::mean_op", cpu.mean,
              accumulate=True, options=("dtype",),
              doc="The arithmetic mean of the elements along the given axes."),
    Reduction("var", "real-valued", "float", _NAN, "ra_red::welford_op", "ra_red::welford_combine_op", "ra_red::var_op",
              np.var, accumulate=True, options=("correction",),
              doc="The variance of the elements along the given axes."),
    Reduction("std", "real-valued", "float", _NAN, "ra_red::welford_op", "ra_red::welford_combine_op", "ra_red::std_op",
              np.std, accumulate=True, options=("correction",),
              doc="The standard deviation of the elements along the given axes."),
    # utility
    Reduction("all", "any", "bool", True, "ra_red::nonzero_op", "ra_red::and_op", "ra_red::identity_op", np.all,
              doc="Whether every element along the given axes is nonzero (true)."),
    Reduction("any", "any", "bool", False, "ra_red::nonzero_op", "ra_red::or_op", "ra_red::identity_op", np.any,
              doc="Whether any element along the given axes is nonzero (true)."),
    # searching
    Reduction("count_nonzero", "any", "index", 0, "ra_red::nonzero_index_op", "ra_red::add_op", "ra_red::identity_op",
              np.count_nonzero,
              doc="The number of nonzero elements along the given axes."),
    Reduction("argmax", "real-valued", "index", None, "ra_red::value_index_op", "ra_red::argmax_op", "ra_red::index_op",
              np.argmax, axis="one",
              doc="The index of the first largest element along an axis (of the flattened array when axis is None)."),
    Reduction("argmin", "real-valued", "index", None, "ra_red::value_index_op", "ra_red::argmin_op", "ra_red::index_op",
              np.argmin, axis="one",
              doc="The index of the first smallest element along an axis (of the flattened array when axis is None)."),
)

#: The rows by name, for the plugin's own modules (sibling plugins use ``reduction.own``).
BY_NAME: dict[str, Reduction] = {r.name: r for r in REDUCTIONS}

IMPLS = [Impl(r.name, r) for r in REDUCTIONS]
