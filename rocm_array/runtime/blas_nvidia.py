"""``Blas`` on the ``nvidia`` platform: cuBLAS through ``ctypes`` (``cdll``: why), cuSOLVER through
nvmath-python's low-level bindings, imported at the first solver call.

Kept symmetric with ``blas_amd.py``. cuSOLVER's 64-bit generic API (``Xgetrf``,
``Xpotrf``, ``Xgeqrf``, ``Xsyevd``, ``Xgesvd``, ``Xgeev``) takes the data type as
an argument; ``orgqr``/``ungqr`` and the Jacobi SVD ``gesvdj`` are typed. float32 products are IEEE
float32 (``CUBLAS_COMPUTE_32F``); ``ROCM_ARRAY_ALLOW_TF32=1`` lets them use TF32
tensor cores. float16 and bfloat16 products accumulate in float32. ``SIGNATURES`` and the enum
tables are ``cublas_api.h``'s (``DATA_TYPES``: ``library_types.h``'s), held to the installed
header and to nvmath's enums by tests/test_bindings.py.
"""

from __future__ import annotations

import ctypes
import functools
import os
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import dtypes
from . import cdll, libfiles
from .blas import ONE_ZERO, WORKSPACE, Blas
from .bindings import in_context
from .nvmath_bindings import load as bindings

if TYPE_CHECKING:
    from ..dtypes import DType
    from .gpu import GpuRuntime

__all__ = ["NvidiaBlas", "open_library", "SIGNATURES", "STATUS", "DATA_TYPES", "OPERATIONS", "COMPUTE",
           "open_cublas"]

_int, _i64, _size, _ptr = ctypes.c_int, ctypes.c_longlong, ctypes.c_size_t, ctypes.c_void_p
_GEAM = (_ptr, _int, _int, _int, _int, _ptr, _ptr, _int, _ptr, _ptr, _int, _ptr, _int)
#: Each call's parameters (handles, streams and pointers are addresses; enums are ints).
SIGNATURES: dict[str, tuple[Any, ...]] = {
    "cublasCreate_v2": (ctypes.POINTER(_ptr),),
    "cublasSetStream_v2": (_ptr, _ptr),
    "cublasSetWorkspace_v2": (_ptr, _ptr, _size),
    "cublasGemmEx": (_ptr, _int, _int, _int, _int, _int, _ptr, _ptr, _int, _int, _ptr, _int, _int, _ptr, _ptr,
                     _int, _int, _int, _int),
    "cublasGemmStridedBatchedEx": (_ptr, _int, _int, _int, _int, _int, _ptr, _ptr, _int, _int, _i64, _ptr, _int,
                                   _int, _i64, _ptr, _ptr, _int, _int, _i64, _int, _int, _int),
    "cublasSgeam": _GEAM, "cublasDgeam": _GEAM, "cublasCgeam": _GEAM, "cublasZgeam": _GEAM,
}
#: cublasStatus_t's values.
STATUS = {0: "CUBLAS_STATUS_SUCCESS", 1: "CUBLAS_STATUS_NOT_INITIALIZED", 3: "CUBLAS_STATUS_ALLOC_FAILED",
          7: "CUBLAS_STATUS_INVALID_VALUE", 8: "CUBLAS_STATUS_ARCH_MISMATCH", 11: "CUBLAS_STATUS_MAPPING_ERROR",
          13: "CUBLAS_STATUS_EXECUTION_FAILED", 14: "CUBLAS_STATUS_INTERNAL_ERROR",
          15: "CUBLAS_STATUS_NOT_SUPPORTED", 16: "CUBLAS_STATUS_LICENSE_ERROR"}
_ALLOC_FAILED = 3
#: cudaDataType's values of each dtype (library_types.h: CUDA_R_16F, CUDA_R_16BF, CUDA_R_32F...).
DATA_TYPES = {"float16": 2, "bfloat16": 14, "float32": 0, "float64": 1, "complex64": 4, "complex128": 5}
#: cublasOperation_t, cublasComputeType_t, cublasGemmAlgo_t and cublasFillMode_t values used.
OPERATIONS = {"N": 0, "T": 1, "C": 2}
COMPUTE = {"CUBLAS_COMPUTE_32F": 68, "CUBLAS_COMPUTE_32F_FAST_TF32": 77, "CUBLAS_COMPUTE_64F": 70}
GEMM_DEFAULT = -1
_LOWER, _UPPER = 0, 1  # CUBLAS_FILL_MODE_LOWER, _UPPER
_NOVECTOR, _VECTOR = 0, 1  # cusolverEigMode_t (cusolver_common.h)
_GEMM_COMPUTE = {"float16": "CUBLAS_COMPUTE_32F", "bfloat16": "CUBLAS_COMPUTE_32F", "float32": "CUBLAS_COMPUTE_32F",
                 "float64": "CUBLAS_COMPUTE_64F", "complex64": "CUBLAS_COMPUTE_32F",
                 "complex128": "CUBLAS_COMPUTE_64F"}
_LETTER = {"float32": "s", "float64": "d", "complex64": "c", "complex128": "z"}  # the typed routines' prefix


#: cuBLAS's calls (``open_cublas()``; a stand-in for the library file in tests).
open_cublas = cdll.opener(libfiles.CUBLAS, SIGNATURES, STATUS, _ALLOC_FAILED)


@functools.cache
def _cusolver_dn() -> ModuleType:
    """nvmath's cuSOLVER binding, imported at the first solver call, without nvmath itself
    (``nvmath_bindings``: 0.6 s less); a first matmul never imports it."""
    (module,) = bindings("bindings.cusolverDn")
    return module


class NvidiaBlas:
    """One cuBLAS and one cuSOLVER handle of a device, bound to its runtime's stream."""

    ipiv_dtype = dtypes.int64  # the generic API's pivots

    def __init__(self, rt: GpuRuntime, library: Any = None) -> None:
        self._rt = rt
        self._lib = open_cublas(library)
        self.activate()
        handle = ctypes.c_void_p()
        self._lib.call("cublasCreate_v2", ctypes.byref(handle))
        self._blas = handle.value or 0
        self._lib.call("cublasSetStream_v2", self._blas, rt.driver.stream)
        self._workspace = rt.allocate(WORKSPACE)
        self._lib.call("cublasSetWorkspace_v2", self._blas, self._workspace.ptr, WORKSPACE)
        tf32 = os.environ.get("ROCM_ARRAY_ALLOW_TF32", "") == "1"
        compute = {**_GEMM_COMPUTE, "float32": "CUBLAS_COMPUTE_32F_FAST_TF32" if tf32 else "CUBLAS_COMPUTE_32F"}
        self._compute = {name: COMPUTE[c] for name, c in compute.items()}

    @functools.cached_property
    def has_geev(self) -> bool:
        return hasattr(_cusolver_dn(), "xgeev")  # cuSOLVER 12.6 and later

    # cuSOLVER's handle and parameter objects, made at the first solver call: a first matmul does
    # not wait for cuSOLVER to load (11-14 ms of a warm first matmul's 200 on an H100).
    @functools.cached_property
    def _solver(self) -> int:
        handle = _cusolver_dn().create()
        _cusolver_dn().set_stream(handle, self._rt.driver.stream)
        return int(handle)

    @functools.cached_property
    def _params(self) -> int:
        return int(_cusolver_dn().create_params())

    @functools.cached_property
    def _gesvdj(self) -> int:
        return int(_cusolver_dn().create_gesvdj_info())  # default tolerance (machine epsilon) and sweeps

    def activate(self) -> None:
        self._rt.driver.activate()

    @in_context
    def gemm(self, dtype: DType, trans_a: str, trans_b: str, m: int, n: int, k: int,
             a: int, lda: int, stride_a: int, b: int, ldb: int, stride_b: int,
             c: int, ldc: int, stride_c: int, batch: int) -> None:
        t = DATA_TYPES[dtype.name]
        one, zero = ONE_ZERO[dtype.name]
        ta, tb = OPERATIONS[trans_a], OPERATIONS[trans_b]
        if batch == 1:
            # One product through cublasGemmEx: a process's first 1024x1024 float32 product took 76 ms
            # on an H100 through it, against 105 ms through the strided-batched call.
            self._lib.call("cublasGemmEx", self._blas, ta, tb, m, n, k, one, a, t, lda, b, t, ldb, zero, c, t, ldc,
                           self._compute[dtype.name], GEMM_DEFAULT)
            return
        self._lib.call("cublasGemmStridedBatchedEx", self._blas, ta, tb, m, n, k, one, a, t, lda, stride_a, b, t, ldb,
                       stride_b, zero, c, t, ldc, stride_c, batch, self._compute[dtype.name], GEMM_DEFAULT)

    def _x(self, name: str, size_args: tuple[Any, ...], args: tuple[Any, ...], info: int) -> None:
        """A generic-API call ``cusolverDnX<name>`` with its device (and host) workspace."""
        solver = _cusolver_dn()
        dev_bytes, host_bytes = getattr(solver, f"x{name}_buffer_size")(self._solver, self._params, *size_args)
        work = self._rt.allocate(max(int(dev_bytes), 1))
        host = np.empty(max(int(host_bytes), 1), np.uint8)
        getattr(solver, f"x{name}")(self._solver, self._params, *args, work.ptr, int(dev_bytes),
                                    host.ctypes.data, int(host_bytes), info)
        if host_bytes:  # the host workspace must outlive the call's work on the stream
            self._rt.driver.synchronize()

    @in_context
    def getrf(self, dtype: DType, n: int, a: int, lda: int, ipiv: int, info: int) -> None:
        t = DATA_TYPES[dtype.name]
        self._x("getrf", (n, n, t, a, lda, t), (n, n, t, a, lda, ipiv, t), info)

    @in_context
    def getrs(self, dtype: DType, n: int, nrhs: int, a: int, lda: int, ipiv: int, b: int, ldb: int,
              info: int) -> None:
        t = DATA_TYPES[dtype.name]
        _cusolver_dn().xgetrs(self._solver, self._params, OPERATIONS["N"], n, nrhs, t, a, lda, ipiv, t, b, ldb, info)

    @in_context
    def potrf(self, dtype: DType, lower: bool, n: int, a: int, lda: int, info: int) -> None:
        t = DATA_TYPES[dtype.name]
        uplo = _LOWER if lower else _UPPER
        self._x("potrf", (uplo, n, t, a, lda, t), (uplo, n, t, a, lda, t), info)

    @in_context
    def geqrf(self, dtype: DType, m: int, n: int, a: int, lda: int, tau: int, info: int) -> None:
        t = DATA_TYPES[dtype.name]
        self._x("geqrf", (m, n, t, a, lda, t, tau, t), (m, n, t, a, lda, t, tau, t), info)

    @in_context
    def orgqr(self, dtype: DType, m: int, n: int, k: int, a: int, lda: int, tau: int, info: int) -> None:
        name = _LETTER[dtype.name] + ("ungqr" if dtype.kind == "c" else "orgqr")
        solver = _cusolver_dn()
        lwork = getattr(solver, f"{name}_buffer_size")(self._solver, m, n, k, a, lda, tau)
        work = self._rt.allocate(max(int(lwork), 1) * dtype.itemsize)
        getattr(solver, name)(self._solver, m, n, k, a, lda, tau, work.ptr, lwork, info)

    @in_context
    def syevd(self, dtype: DType, vectors: bool, n: int, a: int, lda: int, w: int, info: int) -> None:
        t, tw = DATA_TYPES[dtype.name], DATA_TYPES[dtypes.real_of(dtype).name]
        job = _VECTOR if vectors else _NOVECTOR
        args = (job, _LOWER, n, t, a, lda, tw, w, t)
        self._x("syevd", args, args, info)

    @in_context
    def gesvd(self, dtype: DType, job: str, m: int, n: int, a: int, lda: int, s: int,
              u: int, ldu: int, vt: int, ldvt: int, info: int) -> None:
        if job == "N":  # gesvdj would write U and V of a non-square matrix even so (an illegal address)
            t, ts = DATA_TYPES[dtype.name], DATA_TYPES[dtypes.real_of(dtype).name]
            args = (ord(job), ord(job), m, n, t, a, lda, ts, s, t, u, ldu, t, vt, ldvt, t)
            self._x("gesvd", args, args, info)
            return
        # cuSOLVER's one-sided Jacobi SVD, PyTorch's default driver: on an H100 (float32) it took
        # 22 ms for a 200000x256 matrix and 7 ms for a 256x256, against Xgesvd's 41 and 18 ms.
        # It writes V; cuBLAS's geam turns that into the V^H the protocol asks for.
        name, v = f"{_LETTER[dtype.name]}gesvdj", self._rt.allocate(max(n * n, 1) * dtype.itemsize)
        jacobi = (_VECTOR, int(job == "S"), m, n, a, lda, s, u, ldu, v.ptr, max(n, 1))
        solver = _cusolver_dn()
        lwork = getattr(solver, f"{name}_buffer_size")(self._solver, *jacobi, self._gesvdj)
        work = self._rt.allocate(max(int(lwork), 1) * dtype.itemsize)
        getattr(solver, name)(self._solver, *jacobi, work.ptr, lwork, info, self._gesvdj)
        one, zero = ONE_ZERO[dtype.name]
        self._lib.call(f"cublas{_LETTER[dtype.name].upper()}geam", self._blas, OPERATIONS["C"], OPERATIONS["N"], n, n,
                       one, v.ptr, n, zero, v.ptr, n, vt, ldvt)

    @in_context
    def geev(self, dtype: DType, n: int, a: int, lda: int, w: int, vr: int, ldvr: int, info: int) -> None:
        t = DATA_TYPES[dtype.name]
        args = (_NOVECTOR, _VECTOR if vr else _NOVECTOR, n, t, a, lda, t, w, t, 0, 1, t, vr, ldvr, t)
        self._x("geev", args, args, info)


def open_library(rt: GpuRuntime) -> Blas:  # (mypy checks NvidiaBlas against the protocol)
    return NvidiaBlas(rt)
