"""The cpu backs of the linalg plugin: NumPy (its BLAS and LAPACK) does the work.

The fronts have chosen every dtype. NumPy computes float16 and bfloat16 in
float32 (it has no LAPACK, and few loops, for them); every result is cast to
the dtype the front asked for, so NumPy's own promotion never leaks out.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from rocm_array import dtypes
from rocm_array.array import Array, wrap_numpy
from rocm_array.dtypes import DType

from . import backs
from .common import FAILURES, LinAlgError, failure


#: The LAPACK-class functions, by name: each takes NumPy arrays and the options the front passes.
LAPACK: dict[str, Callable[..., Any]] = {
    "cholesky": np.linalg.cholesky,
    "det": np.linalg.det,
    "eig": np.linalg.eig,
    "eigh": np.linalg.eigh,
    "eigvals": np.linalg.eigvals,
    "eigvalsh": np.linalg.eigvalsh,
    "inv": np.linalg.inv,
    "matrix_norm": np.linalg.matrix_norm,
    "matrix_rank": np.linalg.matrix_rank,
    "pinv": np.linalg.pinv,
    "qr": np.linalg.qr,
    "slogdet": np.linalg.slogdet,
    "solve": np.linalg.solve,
    "svd": np.linalg.svd,
    "svdvals": np.linalg.svdvals,
    "vector_norm": np.linalg.vector_norm,
}


def _host(x: Array, dtype: DType) -> np.ndarray:
    """``x``'s elements in the dtype NumPy computes ``dtype`` in."""
    return x._np.astype(dtypes.compute_dtype(dtype).numpy, copy=False)


def _wrap(r: Any, dtype: DType) -> Array:
    return wrap_numpy(np.asarray(r).astype(dtype.numpy, copy=False), dtype)


def lapack(name: str, xs: list[Array], dtype: DType, outs: tuple[DType, ...], **options: Any) -> tuple[Array, ...]:
    """``name`` on arrays ``xs`` computed in ``dtype``, its results cast to ``outs``.

    Array-valued options (``rtol``) are passed as NumPy arrays; NumPy's
    LinAlgError becomes ours.
    """
    args = [_host(x, dtype) for x in xs]
    opts = {k: v._np if isinstance(v, Array) else v for k, v in options.items()}
    with np.errstate(all="ignore"):
        try:
            r = LAPACK[name](*args, **opts)
        except np.linalg.LinAlgError as e:
            said = str(e).lower()
            kind = next((k for k in FAILURES if k in said), None)
            raise (failure(name, kind) if kind else LinAlgError(f"linalg.{name}(): {e}")) from None
    results = tuple(r) if isinstance(r, tuple) else (r,)
    return tuple(_wrap(v, d) for v, d in zip(results, outs))


def matmul(a: Array, b: Array, dtype: DType) -> Array:
    """Stacked matrix products of ``a`` (..., M, K) and ``b`` (..., K, N), batches already broadcast."""
    with np.errstate(all="ignore"):
        return _wrap(np.matmul(_host(a, dtype), _host(b, dtype)), dtype)


def vecdot(a: Array, b: Array, dtype: DType) -> Array:
    """Dot products over the last axis, the first operand conjugated; shapes already broadcast."""
    with np.errstate(all="ignore"):
        return _wrap(np.vecdot(_host(a, dtype), _host(b, dtype)), dtype)


def cross(a: Array, b: Array, dtype: DType) -> Array:
    """Cross products of the 3-vectors on the last axis; shapes already broadcast."""
    with np.errstate(all="ignore"):
        return _wrap(np.cross(_host(a, dtype), _host(b, dtype)), dtype)


def sum_last(x: Array, dtype: DType) -> Array:
    """Sums over the last axis, accumulated in ``dtype`` (trace sums a diagonal view)."""
    with np.errstate(all="ignore"):
        return _wrap(np.sum(_host(x, dtype), axis=-1, dtype=dtypes.compute_dtype(dtype).numpy), dtype)


def register() -> None:
    """Fill the ``cpu`` column of the plugin's tables."""
    backs.LAPACK["cpu"], backs.MATMUL["cpu"], backs.VECDOT["cpu"] = lapack, matmul, vecdot
    backs.CROSS["cpu"], backs.SUM_LAST["cpu"] = cross, sum_last
