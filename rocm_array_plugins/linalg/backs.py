"""The linalg plugin's backs tables: device kind -> back.

``cpu.register``, ``gpu.register`` and ``gpu_lapack.register`` fill them when the plugin is
registered, never when a module is imported.
"""

from __future__ import annotations

from typing import Any, cast

from rocm_array.array import Array
from rocm_array.backs import Backs
from rocm_array.dtypes import DType

#: Factorizations, solves, eigen- and singular values, norms: ``back(name, arrays, dtype, outs, **options)``.
LAPACK = Backs("linalg's LAPACK-class functions")
#: ``back(a, b, dtype)`` on broadcast batches of matrices.
MATMUL = Backs("matrix products")
VECDOT = Backs("vector dot products")
CROSS = Backs("cross products")
#: ``back(x, dtype)``: sums over the last axis (trace sums a diagonal view).
SUM_LAST = Backs("trace sums")


TABLES = (LAPACK, MATMUL, VECDOT, CROSS, SUM_LAST)


def lapack(name: str, xs: list[Array], dtype: DType, outs: tuple[DType, ...], **options: Any) -> tuple[Array, ...]:
    """Run LAPACK-class function ``name`` on the device of ``xs``: results of dtypes ``outs``."""
    return cast("tuple[Array, ...]", LAPACK[xs[0].device.kind](name, xs, dtype, outs, **options))
