"""The vendor BLAS and LAPACK-class solvers of a GPU, behind one neutral protocol.

``blas_nvidia`` (cuBLAS and cuSOLVER through nvmath-python's bindings) and
``blas_amd`` (hipBLAS and hipSOLVER through hip-python) implement ``Blas``; they
are the only modules that import those bindings. ``vendor.library("blas", rt)``
gives the one ``Blas`` of a runtime: its handles are created on first use, bound
to the runtime's stream, and kept for the life of the process; workspaces come
from the runtime's allocator.

Conventions of every call: matrices are column-major (LAPACK's), pointers are
device addresses as ints, ``dtype`` is the rocm_array DType of the matrices
(the solvers take float32, float64, complex64 and complex128; gemm also
float16 and bfloat16), ``info`` points to one int32 the library sets (0: done,
> 0: the matrix is singular / not positive definite / did not converge).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import numpy as np

if TYPE_CHECKING:
    from ..dtypes import DType

__all__ = ["Blas", "ONE_ZERO", "WORKSPACE"]

#: The BLAS handle's workspace (what NVIDIA recommends on Hopper), from the project's allocator.
WORKSPACE = 32 * 2**20
_SCALARS = {name: (np.array(1, t), np.array(0, t)) for name, t in
            {"float16": np.float32, "bfloat16": np.float32, "float32": np.float32, "float64": np.float64,
             "complex64": np.complex64, "complex128": np.complex128}.items()}
#: The host addresses of alpha = 1 and beta = 0 of a product, in the scale type of each dtype (host
#: pointer mode), taken once: NumPy's ``.ctypes`` costs about a microsecond a read, two of a
#: batched product's 20 us of host time on an H200 (PyTorch's: 15).
ONE_ZERO = {name: (one.ctypes.data, zero.ctypes.data) for name, (one, zero) in _SCALARS.items()}


class Blas(Protocol):
    """cuBLAS/hipBLAS and cuSOLVER/hipSOLVER of one device, bound to its runtime's stream."""

    #: The integer dtype of the pivots ``getrf`` writes (1-based row numbers).
    ipiv_dtype: DType
    @property
    def has_geev(self) -> bool:
        """Whether ``geev`` (general eigenproblems) is available (asked only before one)."""

    def gemm(self, dtype: DType, trans_a: str, trans_b: str, m: int, n: int, k: int,
             a: int, lda: int, stride_a: int, b: int, ldb: int, stride_b: int,
             c: int, ldc: int, stride_c: int, batch: int) -> None:
        """``C = op(A) @ op(B)`` for ``batch`` matrices at the given element strides; op: "N", "T", "C"."""

    def getrf(self, dtype: DType, n: int, a: int, lda: int, ipiv: int, info: int) -> None: ...
    def getrs(self, dtype: DType, n: int, nrhs: int, a: int, lda: int, ipiv: int, b: int, ldb: int,
              info: int) -> None: ...
    def potrf(self, dtype: DType, lower: bool, n: int, a: int, lda: int, info: int) -> None: ...
    def geqrf(self, dtype: DType, m: int, n: int, a: int, lda: int, tau: int, info: int) -> None: ...
    def orgqr(self, dtype: DType, m: int, n: int, k: int, a: int, lda: int, tau: int, info: int) -> None:
        """The first ``n`` columns of Q from ``geqrf``'s ``k`` reflectors (ungqr for complex dtypes)."""

    def syevd(self, dtype: DType, vectors: bool, n: int, a: int, lda: int, w: int, info: int) -> None:
        """Eigenvalues (ascending, into the real ``w``) of the Hermitian matrix in A's lower triangle."""

    def gesvd(self, dtype: DType, job: str, m: int, n: int, a: int, lda: int, s: int,
              u: int, ldu: int, vt: int, ldvt: int, info: int) -> None:
        """Singular values (and with job "A"/"S" the vectors U and V^H) of an m x n matrix, ``m >= n``:
        the vectors by Jacobi rotations (gesvdj) on nvidia, else by QR iteration (gesvd)."""

    def geev(self, dtype: DType, n: int, a: int, lda: int, w: int, vr: int, ldvr: int, info: int) -> None:
        """Eigenvalues (complex ``w``) and, when ``vr`` is not 0, right eigenvectors of a complex matrix."""
