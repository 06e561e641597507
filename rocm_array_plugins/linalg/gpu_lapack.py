"""The gpu back of linalg's LAPACK-class functions: the vendor solvers of ``rocm_array.runtime.blas``.

The solvers work on column-major matrices in place, so every routine first makes
one column-major copy of its operand on the device (cast to the compute dtype:
float16 and bfloat16 are solved in float32), and its results are column-major
views, which rocm_array's strided arrays take as they are. A stack of matrices
is one call per matrix, each writing its own ``info``; the infos are read back
once, after the whole stack is queued, and a singular (or not positive definite,
or not converging) matrix raises LinAlgError as on the cpu.

pinv, matrix_rank and the norms are built from these, the matrix products and
the elementwise and reduction plugins' functions.
"""

from __future__ import annotations

import ctypes
import math
import typing
from typing import Any, Callable

import numpy as np

from rocm_array import dtypes
from rocm_array.array import Array, wrap_numpy
from rocm_array.broadcast import broadcast_view
from rocm_array.dtypes import DType, complex_of, real_of
from rocm_array.memory import copy_into, empty, from_host, full, to_host
from rocm_array.launch import BLOCK, address, grid_1d, ptr
from rocm_array.runtime.vendor import library
from rocm_array_plugins.elementwise import own as elementwise
from rocm_array_plugins.reduction import own as reduction

from . import cpu
from . import backs
from .common import FAILURES, LinAlgError, diagonal_view, failure, insert_axis
from .gpu import cast, launch, product

__all__ = ["lapack"]

_I64 = ctypes.c_int64


def _columns(x: Array, dtype: DType, shape: tuple[int, ...] | None = None) -> Array:
    """A new column-major copy of ``x`` (broadcast to ``shape``) cast to ``dtype``: logical shape
    (..., rows, cols), each matrix's columns contiguous, the matrices one after another."""
    *batch, rows, cols = shape or x.shape
    out = empty((*batch, cols, rows), dtype, x.device).mT
    copy_into(out, x)
    return out


class _Stack:
    """A stack of column-major matrices and the per-matrix calls on it; ``check`` reads the infos."""

    def __init__(self, name: str, x: Array, count: int = 1) -> None:
        self.name = name
        self.lib = library("blas", x.device.runtime)
        self.batch = math.prod(x.shape[:-2])
        self.info = full((count, self.batch), 0, dtypes.int32, x.device)

    def matrices(self, x: Array) -> list[int]:
        """The address of each matrix of the column-major ``x``."""
        base, step = address(x), x.shape[-1] * x.shape[-2] * x.dtype.itemsize
        return [base + i * step for i in range(self.batch)]

    def infos(self, call: int = 0) -> list[int]:
        base = address(self.info) + call * self.batch * 4
        return [base + 4 * i for i in range(self.batch)]

    def check(self, kind: str) -> None:
        """The LinAlgError of ``kind`` (``common.FAILURES``'s, or a plain description) when a
        matrix's info says so (waits for the stack)."""
        info = to_host(self.info)
        if (info < 0).any():
            raise RuntimeError(f"linalg.{self.name}(): the solver rejected argument {-int(info.min())}")
        if (info > 0).any():
            raise failure(self.name, kind) if kind in FAILURES else LinAlgError(f"linalg.{self.name}(): {kind}")


def _launch_1d(x: Array, name: str, args: list[Any], n: int) -> None:
    launch(x, name, grid_1d(n, x.device), (BLOCK, 1, 1), args)


def _zero_triangle(x: Array, keep_lower: bool) -> None:
    """Zero the strict upper (``keep_lower``) or lower triangle of each matrix of the column-major ``x``."""
    *batch, rows, cols = x.shape
    count = math.prod(batch)
    _launch_1d(x, f"triangle<{x.dtype.c_type}>",
               [ptr(x), _I64(count), _I64(rows), _I64(cols), _I64(rows * cols), _I64(x.strides[-2]),
                _I64(x.strides[-1]), ctypes.c_int(int(keep_lower))], count * rows * cols)


# -- factorizations and solves -----------------------------------------------------------------
def cholesky(x: Array, dtype: DType, upper: bool) -> tuple[Array, ...]:
    a = _columns(x, dtype)
    s = _Stack("cholesky", a)
    n = a.shape[-1]
    for p, info in zip(s.matrices(a), s.infos()):
        s.lib.potrf(dtype, not upper, n, p, n, info)
    s.check("not positive definite")
    _zero_triangle(a, keep_lower=not upper)
    return (a,)


def _lu(name: str, a: Array, count: int = 1) -> tuple[_Stack, Array]:
    """LU-factor the column-major stack ``a`` in place: the stack (infos unchecked) and the pivots."""
    s = _Stack(name, a, count)
    n = a.shape[-1]
    ipiv = empty((s.batch, n), s.lib.ipiv_dtype, a.device)
    step = n * ipiv.dtype.itemsize
    for i, (p, info) in enumerate(zip(s.matrices(a), s.infos())):
        s.lib.getrf(a.dtype, n, p, n, address(ipiv) + i * step, info)
    return s, ipiv


def _lu_solve(name: str, a: Array, b: Array, dtype: DType) -> tuple[_Stack, Array]:
    """X of A X = B by LU, column-major, and the stack whose infos say whether A was singular."""
    lu, x = _columns(a, dtype), _columns(b, dtype)
    s, ipiv = _lu(name, lu, count=2)
    n, k = x.shape[-2:]
    step = n * ipiv.dtype.itemsize
    for i, (p, q, info) in enumerate(zip(s.matrices(lu), s.matrices(x), s.infos(1))):
        s.lib.getrs(dtype, n, k, p, n, address(ipiv) + i * step, q, n, info)
    return s, x


def solve(a: Array, b: Array, dtype: DType, name: str = "solve") -> tuple[Array, ...]:
    s, x = _lu_solve(name, a, b, dtype)
    s.check("singular")
    return (x,)


def _eye(n: int, dtype: DType, x: Array) -> Array:
    eye = full((n, n), 0, dtype, x.device)
    copy_into(diagonal_view(eye, 0), full((), 1, dtype, x.device))
    return eye


def inv(x: Array, dtype: DType) -> tuple[Array, ...]:
    return solve(x, broadcast_view(_eye(x.shape[-1], dtype, x), x.shape), dtype, "inv")


def _determinant(name: str, x: Array, dtype: DType) -> tuple[Array, Array]:
    lu = _columns(x, dtype)
    _, ipiv = _lu(name, lu)  # a singular matrix's info is no error: its determinant is 0
    return lu, ipiv


def det(x: Array, dtype: DType) -> tuple[Array, ...]:
    lu, ipiv = _determinant("det", x, dtype)
    out = empty(x.shape[:-2], dtype, x.device)
    count, n = out.size, x.shape[-1]
    _launch_1d(x, f"lu_det<{dtype.c_type}, {ipiv.dtype.c_type}>",
               [ptr(out), ptr(lu), ptr(ipiv), _I64(n), _I64(count)], count)
    return (out,)


def slogdet(x: Array, dtype: DType) -> tuple[Array, ...]:
    lu, ipiv = _determinant("slogdet", x, dtype)
    real = real_of(dtype)
    sign, logabs = empty(x.shape[:-2], dtype, x.device), empty(x.shape[:-2], real, x.device)
    count, n = sign.size, x.shape[-1]
    _launch_1d(x, f"lu_slogdet<{dtype.c_type}, {real.c_type}, {ipiv.dtype.c_type}>",
               [ptr(sign), ptr(logabs), ptr(lu), ptr(ipiv), _I64(n), _I64(count)], count)
    return sign, logabs


#: Reduced QRs and thin SVDs of a real matrix (not a stack) at least TALL times as tall as wide,
#: of at least TALL_MIN elements and at most TALL_COLS columns, go through CholeskyQR2 (Fukaya,
#: Nakatsukasa, Yanagisawa and Yamamoto, 2014): twice Q <- Q R^-1 with R^T R = Q^T Q, products and
#: an n x n Cholesky factorization, where the Householder QR (geqrf, orgqr) and gesvd walk the tall
#: matrix column by column. On an H200, float32, QR and thin SVD (ms, CholeskyQR2 / as before):
#: 200000x26 0.91 / 4.52 and 1.51 / 5.20; 200000x256 4.36 / 14.3 and 10.3 / 20.8; 20000x256 (4.9 Mi
#: elements) 2.15 / 5.21 and 8.02 / 11.3; but 65536x32 (2 Mi) 0.90 / 0.90 and 1.64 / 1.48, and
#: 16384x64 (1 Mi) 1.19 / 1.37 and 2.47 / 2.54: below 4 Mi elements the Householder QR's two calls
#: cost as much as CholeskyQR2's dozen.
TALL, TALL_MIN, TALL_COLS = 4, 1 << 22, 1024
#: CholeskyQR2's Q is kept when max |Q^T Q - I| is at most this many times sqrt(n) eps (float32:
#: 4.9e-6 for 26 columns, 1.5e-5 for 256); beyond (a matrix too ill-conditioned for its Gram matrix:
#: condition number past about eps^-1/2), the Householder QR or gesvd runs instead. Measured in
#: float32: 3.1e-7 (200000x26) and 5.5e-7 (200000x256), the Householder QR's 2.3e-7 and 5.0e-7; a
#: condition number of 1e5 made the Cholesky fail.
ORTHOGONALITY = 8


def _tall(x: Array, dtype: DType) -> bool:
    *batch, m, n = x.shape
    return not batch and dtype.kind == "f" and 0 < n <= TALL_COLS and m >= TALL * n and m * n >= TALL_MIN


def _cholesky_pass(q: Array, eye: Array, dtype: DType) -> tuple[Array, Array]:
    """Q R^-1 and R, with R^T R = Q^T Q (R upper triangular)."""
    n = q.shape[-1]
    g = product(q.mT, q, dtype)  # symmetric: its row-major storage is its column-major one
    s = _Stack("qr", g)
    s.lib.potrf(dtype, False, n, address(g), n, s.infos()[0])
    r = g.mT  # column-major, R in the upper triangle
    _zero_triangle(r, keep_lower=False)
    return product(q, _lu_solve("qr", r, eye, dtype)[1], dtype), r


def _cholesky_qr(x: Array, dtype: DType) -> tuple[Array, Array] | None:
    """Q and R of the tall real matrix ``x`` by CholeskyQR2, or None when Q is not orthogonal to
    working accuracy. A failed Cholesky factorization needs no check of its own: its R leaves Q
    far from orthogonal (or not finite). Whatever the Rs are, Q R = x up to rounding, as
    Q = x R1^-1 R2^-1 and R = R2 R1."""
    eye = _eye(x.shape[-1], dtype, x)
    q, r1 = _cholesky_pass(cast(x, dtype), eye, dtype)
    q, r2 = _cholesky_pass(q, eye, dtype)
    err = reduction("max")(elementwise("abs")(elementwise("subtract")(product(q.mT, q, dtype), eye)))
    if not float(to_host(err)) <= ORTHOGONALITY * math.sqrt(x.shape[-1]) * float(np.finfo(dtype.numpy).eps):
        return None
    return q, product(r2, r1, dtype)


def qr(x: Array, dtype: DType, mode: str) -> tuple[Array, ...]:
    if mode == "reduced" and _tall(x, dtype):
        found = _cholesky_qr(x, dtype)
        if found is not None:
            return found
    *batch, m, n = x.shape
    k = min(m, n)
    a = _columns(x, dtype)
    s = _Stack("qr", a)
    tau = empty((s.batch, max(k, 1)), dtype, x.device)
    step = tau.shape[1] * dtype.itemsize
    for i, (p, info) in enumerate(zip(s.matrices(a), s.infos())):
        s.lib.geqrf(dtype, m, n, p, m, address(tau) + i * step, info)
    # R: the upper triangle of the factored rows (k of them, or all m in complete mode).
    r_rows = m if mode == "complete" else k
    r = _columns(a._view((*batch, r_rows, n), a.strides, a.offset), dtype)
    _zero_triangle(r, keep_lower=False)
    q_cols = m if mode == "complete" else k
    if q_cols == n:
        q = a  # Q overwrites the reflectors in place
    elif q_cols < n:
        q = a._view((*batch, m, q_cols), a.strides, a.offset)  # the leading columns: a prefix of each matrix
        q = _columns(q, dtype)
    else:  # complete, m > n: Q's first n columns hold the reflectors
        q = empty((*batch, m, m), dtype, x.device).mT
        copy_into(q._view((*batch, m, n), q.strides, q.offset), a)
    for i, (p, info) in enumerate(zip(s.matrices(q), s.infos())):
        s.lib.orgqr(dtype, m, q_cols, k, p, m, address(tau) + i * step, info)
    # Not s.check(): a QR cannot fail (its infos only flag invalid arguments), and reading them
    # back would wait for the stream, 15 times in a randomized PCA's range finder.
    return q, r


def _eigh(x: Array, dtype: DType, vectors: bool) -> tuple[Array, Array]:
    a = _columns(x, dtype)
    s = _Stack("eigh" if vectors else "eigvalsh", a)
    n = x.shape[-1]
    w = empty((*x.shape[:-1],), real_of(dtype), x.device)
    for i, (p, info) in enumerate(zip(s.matrices(a), s.infos())):
        s.lib.syevd(dtype, vectors, n, p, n, address(w) + i * n * w.dtype.itemsize, info)
    s.check("the eigenvalue iteration did not converge")
    return w, a


def eigh(x: Array, dtype: DType) -> tuple[Array, ...]:
    return _eigh(x, dtype, True)


def eigvalsh(x: Array, dtype: DType) -> tuple[Array, ...]:
    return (_eigh(x, dtype, False)[0],)


def _svd(x: Array, dtype: DType, job: str) -> tuple[Array, Array | None, Array | None]:
    """S, U, Vh (job "A": full, "S": reduced, "N": S alone). The solver needs m >= n: a wide
    matrix is factored as its transpose, A^T = U' S V'^H giving A = (V'^H)^T S U'^T."""
    *batch, m, n = x.shape
    wide = m < n
    tall = x.mT if wide else x
    if job != "A" and _tall(tall, dtype):
        found = _cholesky_qr(tall, dtype)
        if found is not None:  # tall = Q R and R = U' S V^T: tall = (Q U') S V^T
            q, r = found
            sv, ur, vtr = _svd(r, dtype, job)
            if ur is None or vtr is None:
                return sv, None, None
            qu = product(q, ur, dtype)
            return (sv, vtr.mT, qu.mT) if wide else (sv, qu, vtr)
    a = _columns(tall, dtype)
    mm, nn = a.shape[-2:]
    s_ = _Stack("svd" if job != "N" else "svdvals", a)
    sv = empty((*batch, nn), real_of(dtype), x.device)
    u = vt = None
    if job != "N":
        u = empty((*batch, mm if job == "A" else nn, mm), dtype, x.device).mT
        vt = empty((*batch, nn, nn), dtype, x.device).mT
    us = s_.matrices(u) if u is not None else [0] * s_.batch
    vts = s_.matrices(vt) if vt is not None else [0] * s_.batch
    for i, (p, pu, pv, info) in enumerate(zip(s_.matrices(a), us, vts, s_.infos())):
        s_.lib.gesvd(dtype, job, mm, nn, p, mm, address(sv) + i * nn * sv.dtype.itemsize,
                     pu, mm, pv, nn, info)
    s_.check("the singular value iteration did not converge")
    if u is None or vt is None:
        return sv, None, None
    return (sv, vt.mT, u.mT) if wide else (sv, u, vt)


def svd(x: Array, dtype: DType, full_matrices: bool) -> tuple[Array, ...]:
    sv, u, vh = _svd(x, dtype, "A" if full_matrices else "S")
    return u, sv, vh  # type: ignore[return-value]


def svdvals(x: Array, dtype: DType) -> tuple[Array, ...]:
    return (_svd(x, dtype, "N")[0],)


def _eig(x: Array, dtype: DType, vectors: bool) -> tuple[Array, Array]:
    c = complex_of(dtype)
    a = _columns(x, c)
    s = _Stack("eig" if vectors else "eigvals", a)
    if not s.lib.has_geev:
        raise NotImplementedError(f"linalg.{s.name}() on {x.device.runtime.platform} GPUs: "
                                  "the platform's solver library has no general eigensolver (geev)")
    n = x.shape[-1]
    w = empty(x.shape[:-1], c, x.device)
    v = empty(x.shape, c, x.device).mT
    vs = s.matrices(v) if vectors else [0] * s.batch
    for i, (p, pv, info) in enumerate(zip(s.matrices(a), vs, s.infos())):
        s.lib.geev(c, n, p, n, address(w) + i * n * c.itemsize, pv, n, info)
    s.check("the eigenvalue iteration did not converge")
    return w, v


def eig(x: Array, dtype: DType) -> tuple[Array, ...]:
    return _eig(x, dtype, True)


def eigvals(x: Array, dtype: DType) -> tuple[Array, ...]:
    return (_eig(x, dtype, False)[0],)


# -- built from the above and the elementwise and reduction functions ----------------------------
def _tolerance(s: Array, rtol: float | Array | None, shape: tuple[int, ...]) -> Array:
    """``rtol`` (default max(M, N) * eps) times the largest singular value, per matrix, as (..., 1)."""
    if rtol is None:
        rtol = max(shape[-2:]) * float(np.finfo(s.dtype.numpy).eps)
    elif isinstance(rtol, Array):
        rtol = insert_axis(rtol, rtol.ndim)
    return typing.cast("Array", elementwise("multiply")(reduction("max")(s, axis=-1, keepdims=True), rtol))


def _same(v: Array) -> Array:
    return v


def pinv(x: Array, dtype: DType, rtol: float | Array | None) -> tuple[Array, ...]:
    sv, u, vh = _svd(x, dtype, "S")
    assert u is not None and vh is not None
    keep = elementwise("greater")(sv, _tolerance(sv, rtol, x.shape))
    inv_s = elementwise("where")(keep, elementwise("divide")(1, sv), full(sv.shape, 0, sv.dtype, sv.device))
    conj: Callable[[Array], Array] = (elementwise("conj") if dtype in dtypes.CATEGORIES["complex floating"]
                                      else _same)
    v_scaled = elementwise("multiply")(conj(vh).mT, insert_axis(inv_s, inv_s.ndim - 1))
    return (product(v_scaled, conj(u).mT, dtype),)


def matrix_rank(x: Array, dtype: DType, rtol: float | Array | None) -> tuple[Array, ...]:
    sv = _svd(x, dtype, "N")[0]
    above = elementwise("greater")(sv, _tolerance(sv, rtol, x.shape))
    return (reduction("sum")(elementwise("astype")(above, dtypes.DEFAULT_INT), axis=-1),)


def vector_norm(x: Array, dtype: DType, axis: tuple[int, ...], keepdims: bool, ord: float) -> tuple[Array, ...]:
    a = elementwise("abs")(x)
    if ord == math.inf:
        return (reduction("max")(a, axis=axis, keepdims=keepdims),)
    if ord == -math.inf:
        return (reduction("min")(a, axis=axis, keepdims=keepdims),)
    if ord == 0:
        nonzero = elementwise("astype")(elementwise("not_equal")(a, 0), a.dtype)
        return (reduction("sum")(nonzero, axis=axis, keepdims=keepdims),)
    if ord == 1:
        return (reduction("sum")(a, axis=axis, keepdims=keepdims),)
    if ord == 2:
        return (elementwise("sqrt")(reduction("sum")(elementwise("multiply")(a, a), axis=axis, keepdims=keepdims)),)
    total = reduction("sum")(elementwise("pow")(a, float(ord)), axis=axis, keepdims=keepdims)
    return (elementwise("pow")(total, 1.0 / ord),)


def matrix_norm(x: Array, dtype: DType, keepdims: bool, ord: Any) -> tuple[Array, ...]:
    if ord == "fro":
        out = vector_norm(x, dtype, (x.ndim - 2, x.ndim - 1), False, 2)[0]
    elif ord in ("nuc", 2, -2):
        sv = _svd(x, dtype, "N")[0]
        out = reduction({"nuc": "sum", 2: "max", -2: "min"}[ord])(sv, axis=-1)
    else:  # 1, -1: the largest/smallest column sum; inf, -inf: row sum
        sums = reduction("sum")(elementwise("abs")(x), axis=-2 if abs(ord) == 1 else -1)
        out = reduction("max" if ord > 0 else "min")(sums, axis=-1)
    if keepdims:
        out = insert_axis(insert_axis(out, out.ndim), out.ndim + 1)
    return (out,)


#: name -> routine(*arrays, compute dtype, **options): its results in the compute dtype.
ROUTINES: dict[str, Callable[..., tuple[Array, ...]]] = {f.__name__: f for f in (
    cholesky, solve, inv, det, slogdet, qr, eigh, eigvalsh, svd, svdvals, eig, eigvals,
    pinv, matrix_rank, vector_norm, matrix_norm)}
_NEEDS_MATRICES = frozenset(ROUTINES) - {"vector_norm", "matrix_norm"}


def lapack(name: str, xs: list[Array], dtype: DType, outs: tuple[DType, ...], **options: Any) -> tuple[Array, ...]:
    """``name`` on the GPU arrays ``xs`` in ``dtype``, its results cast to ``outs``.

    When an operand is empty the results do not depend on the data: they (small, or empty) come
    from the cpu back, given identity matrices of the operands' shapes.
    """
    if name in _NEEDS_MATRICES and any(x.size == 0 for x in xs):
        host = [wrap_numpy(np.broadcast_to(np.eye(x.shape[-2], x.shape[-1]), x.shape).astype(x.dtype.numpy), x.dtype)
                for x in xs]
        opts = {k: wrap_numpy(to_host(v), v.dtype) if isinstance(v, Array) else v for k, v in options.items()}
        return tuple(from_host(r._np, r.dtype, xs[0].device) for r in cpu.lapack(name, host, dtype, outs, **opts))
    compute = dtypes.compute_dtype(dtype)
    results = ROUTINES[name](*(cast(x, compute) if name in ("vector_norm", "matrix_norm") else x for x in xs),
                             compute, **options)
    return tuple(cast(r, d) for r, d in zip(results, outs))


def register() -> None:
    """Fill the ``gpu`` column of the LAPACK table."""
    backs.LAPACK["gpu"] = lapack
