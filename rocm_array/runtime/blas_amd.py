"""``Blas`` on the ``amd`` platform: hipBLAS and hipSOLVER (over rocBLAS and rocSOLVER) through hip-python.

Kept symmetric with ``blas_nvidia.py``. hipSOLVER's API is typed (``hipsolverDgetrf``…),
so each routine picks its function by the dtype's LAPACK letter. hip-python
returns ``(status, *values)`` like the driver bindings, so the driver's status
check is reused. hipSOLVER has no general eigensolver (geev): ``has_geev`` is False.

Where hip-python's versions differ (6.4, 7.2 and 10 are checked by
``tests/test_bindings.py``), the choice is made by what the installed binding offers,
never by its version number:

- GEMM takes ``hipDataType`` and ``hipblasComputeType_t``: through
  ``hipblasGemmStridedBatchedEx_v2`` where it exists (hipBLAS 2, ROCm 6, whose plain
  ``Ex`` takes the older ``hipblasDatatype_t``), else the plain ``Ex`` (hipBLAS 3).
- hipSOLVER's fill modes and operations are hipBLAS's enums in every version (hip-python 10's
  ``hipsolverFillMode_t`` aliases them with the same ``HIPBLAS_*`` members).
- A ``*_bufferSize`` call returns the size (hip-python 10) or writes it through an ``lwork``
  argument (earlier versions).
- ``hipblasSetWorkspace`` (hipBLAS 3) is called where the binding has it; before that,
  rocBLAS manages its own workspace.
"""

from __future__ import annotations

import functools
import inspect
from typing import TYPE_CHECKING, Any, Callable

import numpy as np
from hip import hip, hipblas, hipsolver

from .. import dtypes
from .blas import ONE_ZERO, WORKSPACE, Blas
from .bindings import checker, in_context

if TYPE_CHECKING:
    from ..dtypes import DType
    from .gpu import GpuRuntime

__all__ = ["AmdBlas", "open_library"]

_check_blas = checker(hipblas.hipblasStatus_t.HIPBLAS_STATUS_SUCCESS, hipblas.hipblasStatus_t.HIPBLAS_STATUS_ALLOC_FAILED)
_check = checker(hipsolver.hipsolverStatus_t.HIPSOLVER_STATUS_SUCCESS,
                 hipsolver.hipsolverStatus_t.HIPSOLVER_STATUS_ALLOC_FAILED)

_SUFFIX = {"float16": "16F", "bfloat16": "16BF", "float32": "32F", "float64": "64F",
           "complex64": "32F", "complex128": "64F"}
_DATA = {n: getattr(hip.hipDataType, f"HIP_{'C' if n.startswith('complex') else 'R'}_{s}")
         for n, s in _SUFFIX.items()}
_COMPUTE = {n: getattr(hipblas.hipblasComputeType_t, f"HIPBLAS_COMPUTE_{'64F' if s == '64F' else '32F'}")
            for n, s in _SUFFIX.items()}
_GEMM = getattr(hipblas, "hipblasGemmStridedBatchedEx_v2", None) or hipblas.hipblasGemmStridedBatchedEx
_OP = {"N": hipblas.hipblasOperation_t.HIPBLAS_OP_N, "T": hipblas.hipblasOperation_t.HIPBLAS_OP_T,
       "C": hipblas.hipblasOperation_t.HIPBLAS_OP_C}
_LOWER, _UPPER = hipblas.hipblasFillMode_t.HIPBLAS_FILL_MODE_LOWER, hipblas.hipblasFillMode_t.HIPBLAS_FILL_MODE_UPPER
_EIG = hipsolver.hipsolverEigMode_t
_LETTER = {"float32": "S", "float64": "D", "complex64": "C", "complex128": "Z"}


@functools.lru_cache(maxsize=None)
def _buffer_size(name: str) -> Callable[..., int]:
    """``hipsolver<X><routine>_bufferSize`` as a function returning the size, whichever way the binding
    gives it (returned, or written through an ``lwork`` pointer argument)."""
    fn = getattr(hipsolver, name)
    if "lwork" not in inspect.signature(fn).parameters:
        return lambda handle, *args: int(_check(fn(handle, *args), name))

    def written(handle: Any, *args: Any) -> int:
        lwork = np.zeros(1, np.int32)
        _check(fn(handle, *args, lwork), name)
        return int(lwork[0])

    return written


class AmdBlas:
    """One hipBLAS and one hipSOLVER handle of a device, bound to its runtime's stream."""

    ipiv_dtype = dtypes.int32  # hipSOLVER's pivots
    has_geev = False

    def __init__(self, rt: GpuRuntime) -> None:
        self._rt = rt
        self.activate()
        stream = rt.driver.stream
        self._blas = _check_blas(hipblas.hipblasCreate(), "hipblasCreate")
        _check_blas(hipblas.hipblasSetStream(self._blas, stream), "hipblasSetStream")
        if hasattr(hipblas, "hipblasSetWorkspace"):
            self._workspace = rt.allocate(WORKSPACE)
            _check_blas(hipblas.hipblasSetWorkspace(self._blas, self._workspace.ptr, WORKSPACE),
                        "hipblasSetWorkspace")

    @functools.cached_property
    def _solver(self) -> Any:
        """hipSOLVER's handle, made at the first solver call (a matmul alone does not load it)."""
        handle = _check(hipsolver.hipsolverCreate(), "hipsolverCreate")
        _check(hipsolver.hipsolverSetStream(handle, self._rt.driver.stream), "hipsolverSetStream")
        return handle

    def activate(self) -> None:
        self._rt.driver.activate()

    @in_context
    def gemm(self, dtype: DType, trans_a: str, trans_b: str, m: int, n: int, k: int,
             a: int, lda: int, stride_a: int, b: int, ldb: int, stride_b: int,
             c: int, ldc: int, stride_c: int, batch: int) -> None:
        t = _DATA[dtype.name]
        one, zero = ONE_ZERO[dtype.name]
        _check_blas(_GEMM(
            self._blas, _OP[trans_a], _OP[trans_b], m, n, k, one, a, t, lda, stride_a,
            b, t, ldb, stride_b, zero, c, t, ldc, stride_c, batch, _COMPUTE[dtype.name],
            hipblas.hipblasGemmAlgo_t.HIPBLAS_GEMM_DEFAULT), _GEMM.__name__)

    def _typed(self, routine: str, dtype: DType, size_args: tuple[Any, ...], args: tuple[Any, ...],
               info: int, extra: tuple[Any, ...] = ()) -> None:
        """``hipsolver<X><routine>`` with a workspace of the size its ``_bufferSize`` asks for."""
        fn = f"hipsolver{_LETTER[dtype.name]}{routine}"
        lwork = _buffer_size(f"{fn}_bufferSize")(self._solver, *size_args)
        work = self._rt.allocate(max(lwork, 1) * dtype.itemsize)
        _check(getattr(hipsolver, fn)(self._solver, *args, work.ptr, lwork, *extra, info), fn)

    @in_context
    def getrf(self, dtype: DType, n: int, a: int, lda: int, ipiv: int, info: int) -> None:
        self._typed("getrf", dtype, (n, n, a, lda), (n, n, a, lda), info, extra=(ipiv,))

    @in_context
    def getrs(self, dtype: DType, n: int, nrhs: int, a: int, lda: int, ipiv: int, b: int, ldb: int,
              info: int) -> None:
        args = (_OP["N"], n, nrhs, a, lda, ipiv, b, ldb)
        self._typed("getrs", dtype, args, args, info)

    @in_context
    def potrf(self, dtype: DType, lower: bool, n: int, a: int, lda: int, info: int) -> None:
        uplo = _LOWER if lower else _UPPER
        self._typed("potrf", dtype, (uplo, n, a, lda), (uplo, n, a, lda), info)

    @in_context
    def geqrf(self, dtype: DType, m: int, n: int, a: int, lda: int, tau: int, info: int) -> None:
        self._typed("geqrf", dtype, (m, n, a, lda), (m, n, a, lda, tau), info)

    @in_context
    def orgqr(self, dtype: DType, m: int, n: int, k: int, a: int, lda: int, tau: int, info: int) -> None:
        routine = "ungqr" if dtype.name.startswith("complex") else "orgqr"
        args = (m, n, k, a, lda, tau)
        self._typed(routine, dtype, args, args, info)

    @in_context
    def syevd(self, dtype: DType, vectors: bool, n: int, a: int, lda: int, w: int, info: int) -> None:
        routine = "heevd" if dtype.name.startswith("complex") else "syevd"
        job = _EIG.HIPSOLVER_EIG_MODE_VECTOR if vectors else _EIG.HIPSOLVER_EIG_MODE_NOVECTOR
        args = (job, _LOWER, n, a, lda, w)
        self._typed(routine, dtype, args, args, info)

    @in_context
    def gesvd(self, dtype: DType, job: str, m: int, n: int, a: int, lda: int, s: int,
              u: int, ldu: int, vt: int, ldvt: int, info: int) -> None:
        # rwork: the superdiagonal of the bidiagonal form when the iteration does not converge.
        rwork = self._rt.allocate(max(min(m, n) - 1, 1) * dtypes.real_of(dtype).itemsize)
        jobs = (ord(job), ord(job))
        self._typed("gesvd", dtype, (*jobs, m, n), (*jobs, m, n, a, lda, s, u, ldu, vt, ldvt), info,
                    extra=(rwork.ptr,))

    def geev(self, dtype: DType, n: int, a: int, lda: int, w: int, vr: int, ldvr: int, info: int) -> None:
        raise NotImplementedError("eig and eigvals on amd GPUs: hipSOLVER has no general eigensolver (geev)")


def open_library(rt: GpuRuntime) -> Blas:  # (mypy checks AmdBlas against the protocol)
    return AmdBlas(rt)
