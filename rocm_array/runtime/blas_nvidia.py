"""``Blas`` on the ``nvidia`` platform: cuBLAS and cuSOLVER through nvmath-python's low-level bindings.

Kept symmetric with ``blas_amd.py``. cuSOLVER's 64-bit generic API (``Xgetrf``,
``Xpotrf``, ``Xgeqrf``, ``Xsyevd``, ``Xgesvd``, ``Xgeev``) takes the data type as
an argument; ``orgqr``/``ungqr`` and the Jacobi SVD ``gesvdj`` are typed. float32 products are IEEE
float32 (``CUBLAS_COMPUTE_32F``); ``ROCM_ARRAY_ALLOW_TF32=1`` lets them use TF32
tensor cores. float16 and bfloat16 products accumulate in float32.
"""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING, Any

import numpy as np
from .nvmath_bindings import load as bindings

from .. import dtypes
from .blas import ONE_ZERO, WORKSPACE, Blas
from .bindings import in_context

# nvmath-python's bindings, without importing nvmath itself (``nvmath_bindings``: 0.6 s less).
cublas, cusolver, cusolverDn, _utils = bindings("bindings.cublas", "bindings.cusolver", "bindings.cusolverDn", "_utils")
CudaDataType = _utils.CudaDataType

if TYPE_CHECKING:
    from ..dtypes import DType
    from .gpu import GpuRuntime

__all__ = ["NvidiaBlas", "open_library"]

_C = CudaDataType
_DATA = {"float16": _C.CUDA_R_16F, "bfloat16": _C.CUDA_R_16BF, "float32": _C.CUDA_R_32F,
         "float64": _C.CUDA_R_64F, "complex64": _C.CUDA_C_32F, "complex128": _C.CUDA_C_64F}
_CT = cublas.ComputeType
_GEMM_COMPUTE = {"float16": _CT.COMPUTE_32F, "bfloat16": _CT.COMPUTE_32F, "float32": _CT.COMPUTE_32F,
                 "float64": _CT.COMPUTE_64F, "complex64": _CT.COMPUTE_32F, "complex128": _CT.COMPUTE_64F}
_OP = {"N": cublas.Operation.N, "T": cublas.Operation.T, "C": cublas.Operation.C}
_LETTER = {"float32": "s", "float64": "d", "complex64": "c", "complex128": "z"}  # the typed routines' prefix
_LOWER, _UPPER = cublas.FillMode.LOWER, cublas.FillMode.UPPER
_VECTOR, _NOVECTOR = cusolver.EigMode.VECTOR, cusolver.EigMode.NOVECTOR


class NvidiaBlas:
    """One cuBLAS and one cuSOLVER handle of a device, bound to its runtime's stream."""

    ipiv_dtype = dtypes.int64  # the generic API's pivots
    has_geev = hasattr(cusolverDn, "xgeev")  # cuSOLVER 12.6 and later

    def __init__(self, rt: GpuRuntime) -> None:
        self._rt = rt
        self.activate()
        self._blas = cublas.create()
        cublas.set_stream(self._blas, rt.driver.stream)
        self._workspace = rt.allocate(WORKSPACE)
        cublas.set_workspace(self._blas, self._workspace.ptr, WORKSPACE)
        tf32 = os.environ.get("ROCM_ARRAY_ALLOW_TF32", "") == "1"
        self._compute = {**_GEMM_COMPUTE, "float32": _CT.COMPUTE_32F_FAST_TF32 if tf32 else _CT.COMPUTE_32F}

    # cuSOLVER's handle and parameter objects, made at the first solver call: a first matmul does
    # not wait for cuSOLVER to load (11-14 ms of a warm first matmul's 200 on an H100).
    @functools.cached_property
    def _solver(self) -> int:
        handle = cusolverDn.create()
        cusolverDn.set_stream(handle, self._rt.driver.stream)
        return int(handle)

    @functools.cached_property
    def _params(self) -> int:
        return int(cusolverDn.create_params())

    @functools.cached_property
    def _gesvdj(self) -> int:
        return int(cusolverDn.create_gesvdj_info())  # default tolerance (machine epsilon) and sweeps

    def activate(self) -> None:
        self._rt.driver.activate()

    @in_context
    def gemm(self, dtype: DType, trans_a: str, trans_b: str, m: int, n: int, k: int,
             a: int, lda: int, stride_a: int, b: int, ldb: int, stride_b: int,
             c: int, ldc: int, stride_c: int, batch: int) -> None:
        t = _DATA[dtype.name]
        one, zero = ONE_ZERO[dtype.name]
        if batch == 1:
            # One product through cublasGemmEx: a process's first 1024x1024 float32 product took 76 ms
            # on an H100 through it, against 105 ms through the strided-batched call.
            cublas.gemm_ex(self._blas, _OP[trans_a], _OP[trans_b], m, n, k, one, a, t, lda, b, t, ldb,
                           zero, c, t, ldc, self._compute[dtype.name], cublas.GemmAlgo.DEFAULT)
            return
        cublas.gemm_strided_batched_ex(self._blas, _OP[trans_a], _OP[trans_b], m, n, k, one,
                                       a, t, lda, stride_a, b, t, ldb, stride_b, zero,
                                       c, t, ldc, stride_c, batch, self._compute[dtype.name],
                                       cublas.GemmAlgo.DEFAULT)

    def _x(self, name: str, size_args: tuple[Any, ...], args: tuple[Any, ...], info: int) -> None:
        """A generic-API call ``cusolverDnX<name>`` with its device (and host) workspace."""
        dev_bytes, host_bytes = getattr(cusolverDn, f"x{name}_buffer_size")(self._solver, self._params, *size_args)
        work = self._rt.allocate(max(int(dev_bytes), 1))
        host = np.empty(max(int(host_bytes), 1), np.uint8)
        getattr(cusolverDn, f"x{name}")(self._solver, self._params, *args, work.ptr, int(dev_bytes),
                                       host.ctypes.data, int(host_bytes), info)
        if host_bytes:  # the host workspace must outlive the call's work on the stream
            self._rt.driver.synchronize()

    @in_context
    def getrf(self, dtype: DType, n: int, a: int, lda: int, ipiv: int, info: int) -> None:
        t = _DATA[dtype.name]
        self._x("getrf", (n, n, t, a, lda, t), (n, n, t, a, lda, ipiv, t), info)

    @in_context
    def getrs(self, dtype: DType, n: int, nrhs: int, a: int, lda: int, ipiv: int, b: int, ldb: int,
              info: int) -> None:
        t = _DATA[dtype.name]
        cusolverDn.xgetrs(self._solver, self._params, cublas.Operation.N, n, nrhs, t, a, lda, ipiv, t, b, ldb, info)

    @in_context
    def potrf(self, dtype: DType, lower: bool, n: int, a: int, lda: int, info: int) -> None:
        t = _DATA[dtype.name]
        uplo = _LOWER if lower else _UPPER
        self._x("potrf", (uplo, n, t, a, lda, t), (uplo, n, t, a, lda, t), info)

    @in_context
    def geqrf(self, dtype: DType, m: int, n: int, a: int, lda: int, tau: int, info: int) -> None:
        t = _DATA[dtype.name]
        self._x("geqrf", (m, n, t, a, lda, t, tau, t), (m, n, t, a, lda, t, tau, t), info)

    @in_context
    def orgqr(self, dtype: DType, m: int, n: int, k: int, a: int, lda: int, tau: int, info: int) -> None:
        name = _LETTER[dtype.name] + ("ungqr" if dtype.kind == "c" else "orgqr")
        lwork = getattr(cusolverDn, f"{name}_buffer_size")(self._solver, m, n, k, a, lda, tau)
        work = self._rt.allocate(max(int(lwork), 1) * dtype.itemsize)
        getattr(cusolverDn, name)(self._solver, m, n, k, a, lda, tau, work.ptr, lwork, info)

    @in_context
    def syevd(self, dtype: DType, vectors: bool, n: int, a: int, lda: int, w: int, info: int) -> None:
        t, tw = _DATA[dtype.name], _DATA[dtypes.real_of(dtype).name]
        job = _VECTOR if vectors else _NOVECTOR
        args = (job, _LOWER, n, t, a, lda, tw, w, t)
        self._x("syevd", args, args, info)

    @in_context
    def gesvd(self, dtype: DType, job: str, m: int, n: int, a: int, lda: int, s: int,
              u: int, ldu: int, vt: int, ldvt: int, info: int) -> None:
        if job == "N":  # gesvdj would write U and V of a non-square matrix even so (an illegal address)
            t, ts = _DATA[dtype.name], _DATA[dtypes.real_of(dtype).name]
            args = (ord(job), ord(job), m, n, t, a, lda, ts, s, t, u, ldu, t, vt, ldvt, t)
            self._x("gesvd", args, args, info)
            return
        # cuSOLVER's one-sided Jacobi SVD, PyTorch's default driver: on an H100 (float32) it took
        # 22 ms for a 200000x256 matrix and 7 ms for a 256x256, against Xgesvd's 41 and 18 ms.
        # It writes V; cuBLAS's geam turns that into the V^H the protocol asks for.
        name, v = f"{_LETTER[dtype.name]}gesvdj", self._rt.allocate(max(n * n, 1) * dtype.itemsize)
        jacobi = (_VECTOR, int(job == "S"), m, n, a, lda, s, u, ldu, v.ptr, max(n, 1))
        lwork = getattr(cusolverDn, f"{name}_buffer_size")(self._solver, *jacobi, self._gesvdj)
        work = self._rt.allocate(max(int(lwork), 1) * dtype.itemsize)
        getattr(cusolverDn, name)(self._solver, *jacobi, work.ptr, lwork, info, self._gesvdj)
        one, zero = ONE_ZERO[dtype.name]
        getattr(cublas, f"{_LETTER[dtype.name]}geam")(self._blas, _OP["C"], _OP["N"], n, n, one,
                                                     v.ptr, n, zero, v.ptr, n, vt, ldvt)

    @in_context
    def geev(self, dtype: DType, n: int, a: int, lda: int, w: int, vr: int, ldvr: int, info: int) -> None:
        t = _DATA[dtype.name]
        args = (_NOVECTOR, _VECTOR if vr else _NOVECTOR, n, t, a, lda, t, w, t, 0, 1, t, vr, ldvr, t)
        self._x("geev", args, args, info)


def open_library(rt: GpuRuntime) -> Blas:  # (mypy checks NvidiaBlas against the protocol)
    return NvidiaBlas(rt)
