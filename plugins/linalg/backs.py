"""The linalg backs tables: device kind -> back. The GPU work adds ``gpu`` entries here."""

from __future__ import annotations

from typing import Any

from rocm_array.array import Array
from rocm_array.backs import Backs
from rocm_array.dtypes import DType

from . import cpu

#: Factorizations, solves, eigen- and singular values, norms: ``back(name, arrays, dtype, outs, **options)``.
LAPACK = Backs("linalg's LAPACK-class functions", cpu=cpu.lapack)
#: ``back(a, b, dtype)`` on broadcast batches of matrices.
MATMUL = Backs("matrix products", cpu=cpu.matmul)
VECDOT = Backs("vector dot products", cpu=cpu.vecdot)
CROSS = Backs("cross products", cpu=cpu.cross)
#: ``back(x, dtype)``: sums over the last axis (trace sums a diagonal view).
SUM_LAST = Backs("trace sums", cpu=cpu.sum_last)


def lapack(name: str, xs: list[Array], dtype: DType, outs: tuple[DType, ...], **options: Any) -> tuple[Array, ...]:
    """Run LAPACK-class function ``name`` on the device of ``xs``: results of dtypes ``outs``."""
    return LAPACK[xs[0].device.kind](name, xs, dtype, outs, **options)
