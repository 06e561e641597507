"""The reduction plugin's backs tables: device kind -> back.

The fronts look their backs up here. ``cpu.register``, ``gpu.register`` and
``gpu_sort.register`` fill the columns when the plugin is registered, never when a
module is imported.
"""

from __future__ import annotations

from rocm_array.backs import Backs

#: ``(row, x, axes, keepdims, compute, out_dtype, options) -> out``: one row of ``table.py``.
REDUCE = Backs("reductions")
#: ``(scan, x, axis, compute, out_dtype) -> out``: an inclusive cumulative function along ``axis``.
SCAN = Backs("cumulative functions")
#: ``(x) -> tuple of int64 1-D arrays``: the coordinates of the nonzero elements.
NONZERO = Backs("nonzero")
#: ``(x1, x2, dtype, side, sorter) -> out``.
SEARCHSORTED = Backs("searchsorted")
#: ``(x, axis) -> out``: one forward difference along ``axis``.
DIFF = Backs("diff")
#: ``(x, axis, descending, stable) -> out``.
SORT = Backs("sort")
ARGSORT = Backs("argsort")
#: ``(x) -> (values, first indices, inverse, counts)``.
UNIQUE = Backs("unique functions")
#: ``(x1, x2, dtype, invert) -> out``.
ISIN = Backs("isin")

TABLES = (REDUCE, SCAN, NONZERO, SEARCHSORTED, DIFF, SORT, ARGSORT, UNIQUE, ISIN)
