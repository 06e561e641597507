"""The linalg plugin against NumPy: products, views, factorizations, solves, norms, and bad input."""

from __future__ import annotations

import re
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rocm_array as xp
from helpers import host, small_values as sample, storage

INTS = ["int8", "uint8", "int16", "uint32", "int64"]
FLOATS = ["float16", "bfloat16", "float32", "float64", "complex64", "complex128"]
LAPACK_FLOATS = ["float16", "bfloat16", "float32", "float64", "complex64", "complex128"]
REAL_OF = {"complex64": "float32", "complex128": "float64"}
COMPLEX_OF = {"float16": "complex64", "bfloat16": "complex64", "float32": "complex64", "float64": "complex128"}


def well_conditioned(dtype: str, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """Random matrices plus a dominant diagonal: invertible, and positive definite once made Hermitian."""
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.uniform(-1, 1, shape)
    n = shape[-1]
    return (a + 2 * n * np.eye(n)).astype(storage(dtype))


def hermitian(dtype: str, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    a = wide(well_conditioned(dtype, shape, seed))
    return ((a + np.conj(np.swapaxes(a, -1, -2))) / 2).astype(storage(dtype))


def wide(a: np.ndarray) -> np.ndarray:
    """``a`` in the widest dtype of its kind, for reference results."""
    kind = "f" if a.dtype == ml_dtypes.bfloat16 else a.dtype.kind
    return a.astype({"f": np.float64, "c": np.complex128}.get(kind, a.dtype))


def on(a: np.ndarray, device: str, *, strided: bool = False) -> xp.Array:
    """``a`` on ``device``; ``strided``: as a transposed (non-contiguous) view of a copy."""
    if strided and a.ndim >= 2:
        return xp.asarray(np.ascontiguousarray(np.swapaxes(a, -1, -2)), device=device).mT
    return xp.asarray(a, device=device)


def rtol(dtype: str) -> float:
    return {"float16": 5e-3, "bfloat16": 3e-2, "float32": 2e-5, "complex64": 2e-5}.get(dtype, 1e-11)


def assert_close(out: xp.Array, expected: np.ndarray, dtype: str, *, scale: float | None = None) -> None:
    """Same dtype and shape, and values within the dtype's tolerance (relative to ``scale``)."""
    assert out.dtype == getattr(xp, dtype)
    got = host(out)
    assert got.shape == expected.shape
    big = np.complex128 if dtype.startswith("complex") else np.float64
    exp = np.asarray(expected).astype(big) if not dtype.startswith(("int", "uint")) else expected
    if dtype.startswith(("int", "uint")):
        np.testing.assert_array_equal(got, exp)
        return
    if scale is None:
        scale = float(np.max(np.abs(exp))) if exp.size else 1.0
    np.testing.assert_allclose(got.astype(big), exp, rtol=rtol(dtype), atol=rtol(dtype) * max(scale, 1.0))


# -- matmul and the other products ------------------------------------------------------------

MATMUL_SHAPES = [
    ((4,), (4,)), ((3,), (3, 5)), ((2, 3, 4), (4,)), ((2, 3), (3, 5)), ((2, 1, 3, 4), (5, 4, 2)),
    ((0, 3, 4), (4, 2)), ((3, 0), (0, 2)), ((1, 4), (2, 4, 3)),
]


@pytest.mark.parametrize("dtype", INTS + FLOATS)
@pytest.mark.parametrize("shapes", MATMUL_SHAPES)
def test_matmul(device: str, dtype: str, shapes: tuple[tuple[int, ...], tuple[int, ...]]) -> None:
    a, b = sample(dtype, shapes[0], 1), sample(dtype, shapes[1], 2)
    expected = np.matmul(wide(a), wide(b)).astype(storage(dtype))
    assert_close(xp.matmul(on(a, device), on(b, device, strided=True)), expected, dtype)
    assert_close(on(a, device) @ on(b, device), expected, dtype)


@pytest.mark.parametrize("d1, d2, result", [("int8", "uint8", "int16"), ("float32", "complex128", "complex128"),
                                            ("int16", "float32", "float32"), ("bfloat16", "float16", "float32")])
def test_matmul_promotes_with_the_projects_table(device: str, d1: str, d2: str, result: str) -> None:
    a, b = sample(d1, (2, 3)), sample(d2, (3, 2))
    out = xp.matmul(on(a, device), on(b, device))
    assert_close(out, np.matmul(wide(a), wide(b)).astype(storage(result)), result)


def test_matmul_bad_input(device: str) -> None:
    a = on(sample("float64", (2, 3)), device)
    with pytest.raises(TypeError):
        xp.matmul(a, 2.0)
    with pytest.raises(TypeError):
        a @ 2  # noqa: B018 - the operator is what is tested
    with pytest.raises(TypeError):
        2 @ a  # noqa: B018
    with pytest.raises(ValueError):
        xp.matmul(a, on(sample("float64", ()), device))
    with pytest.raises(ValueError):
        xp.matmul(a, a)
    with pytest.raises(ValueError):
        xp.matmul(on(sample("float64", (2, 2, 3)), device), on(sample("float64", (3, 3, 2)), device))
    with pytest.raises(TypeError):
        xp.matmul(on(np.ones((2, 2), bool), device), on(np.ones((2, 2), bool), device))
    with pytest.raises(TypeError):
        xp.matmul(on(sample("uint64", (2, 2)), device), on(sample("int64", (2, 2)), device))


@settings(max_examples=25, deadline=None)
@given(batch=st.lists(st.integers(0, 3), max_size=2), m=st.integers(1, 4), k=st.integers(0, 4),
       n=st.integers(1, 4), flip=st.booleans())
def test_matmul_shapes_property(batch: list[int], m: int, k: int, n: int, flip: bool) -> None:
    a, b = sample("float64", (*batch, m, k), 3), sample("float64", (k, n), 4)
    if flip:
        a, b = sample("float64", (m, k), 3), sample("float64", (*batch, k, n), 4)
    out = xp.matmul(xp.asarray(a), xp.asarray(b))
    np.testing.assert_array_equal(host(out), a @ b)


@pytest.mark.parametrize("axes, s1, s2", [
    (2, (2, 3, 4), (3, 4, 5)), (0, (2, 3), (4,)), (1, (2, 3), (3, 4)),
    (([0, 2], [1, 0]), (3, 4, 5), (5, 3, 2)), (([-1], [-2]), (2, 3), (3, 2)), (([], []), (2,), (3,)),
    (1, (0, 3), (3, 2)),
])
@pytest.mark.parametrize("dtype", ["int16", "float32", "complex128"])
def test_tensordot(device: str, dtype: str, axes: object, s1: tuple[int, ...], s2: tuple[int, ...]) -> None:
    a, b = sample(dtype, s1, 1), sample(dtype, s2, 2)
    expected = np.tensordot(a, b, axes=axes)
    assert_close(xp.tensordot(on(a, device, strided=True), on(b, device), axes=axes), expected, dtype)
    assert_close(xp.linalg.tensordot(on(a, device), on(b, device), axes=axes), expected, dtype)


def test_tensordot_bad_input(device: str) -> None:
    a, b = on(sample("float64", (2, 3)), device), on(sample("float64", (3, 2)), device)
    with pytest.raises(ValueError):
        xp.tensordot(a, b, axes=-1)
    with pytest.raises(ValueError):
        xp.tensordot(a, b, axes=3)
    with pytest.raises(ValueError):
        xp.tensordot(a, b)  # the last two axes of a do not match the first two of b
    with pytest.raises(ValueError):
        xp.tensordot(a, b, axes=([0], [0, 1]))
    with pytest.raises(IndexError):
        xp.tensordot(a, b, axes=([2], [0]))
    with pytest.raises(TypeError):
        xp.tensordot(a, b, axes="x")


@pytest.mark.parametrize("dtype", ["int8", "uint32", "float16", "float32", "complex64", "complex128"])
@pytest.mark.parametrize("s1, s2, axis", [((5,), (5,), -1), ((2, 3, 4), (3, 4), -1), ((2, 3, 4), (3, 1), -2),
                                          ((0, 4), (4,), -1), ((3, 2), (3, 2), 0)])
def test_vecdot(device: str, dtype: str, s1: tuple[int, ...], s2: tuple[int, ...], axis: int) -> None:
    a, b = sample(dtype, s1, 1), sample(dtype, s2, 2)
    nd = min(a.ndim, b.ndim)
    ax = axis - nd if axis >= 0 else axis
    expected = np.sum(np.conj(wide(a)) * wide(b), axis=ax).astype(storage(dtype))
    assert_close(xp.vecdot(on(a, device), on(b, device, strided=True), axis=axis), expected, dtype)
    assert_close(xp.linalg.vecdot(on(a, device), on(b, device), axis=axis), expected, dtype)


def test_vecdot_bad_input(device: str) -> None:
    a = on(sample("float64", (2, 3)), device)
    with pytest.raises(ValueError):
        xp.vecdot(a, on(sample("float64", (2,)), device))
    with pytest.raises(IndexError):
        xp.vecdot(a, a, axis=-3)
    with pytest.raises(ValueError):
        xp.vecdot(a, on(sample("float64", (3, 3)), device), axis=-1)  # batches 2 and 3 do not broadcast


@pytest.mark.parametrize("dtype", ["int8", "float32", "complex128"])
def test_outer(device: str, dtype: str) -> None:
    a, b = sample(dtype, (4,), 1), sample(dtype, (3,), 2)
    assert_close(xp.linalg.outer(on(a, device), on(b, device)), np.outer(a, b), dtype)
    assert xp.linalg.outer(on(a[:0], device), on(b, device)).shape == (0, 3)
    with pytest.raises(ValueError):
        xp.linalg.outer(on(sample(dtype, (2, 2)), device), on(b, device))


def test_outer_keeps_signed_zeros(device: str) -> None:
    out = xp.linalg.outer(on(np.array([0.0, -1.0], np.float32), device), on(np.array([-0.0], np.float32), device))
    np.testing.assert_array_equal(np.signbit(host(out)), [[True], [False]])


@pytest.mark.parametrize("dtype", ["int16", "float64", "complex64"])
@pytest.mark.parametrize("s1, s2, axis", [((3,), (3,), -1), ((2, 3), (3,), -1), ((3, 4), (2, 3, 1), -2),
                                          ((0, 3), (3,), -1)])
def test_cross(device: str, dtype: str, s1: tuple[int, ...], s2: tuple[int, ...], axis: int) -> None:
    a, b = sample(dtype, s1, 1), sample(dtype, s2, 2)
    shape = np.broadcast_shapes(a.shape, b.shape)
    expected = np.cross(np.broadcast_to(a, shape), np.broadcast_to(b, shape), axis=axis)
    assert_close(xp.linalg.cross(on(a, device), on(b, device), axis=axis), expected, dtype)


def test_cross_bad_input(device: str) -> None:
    with pytest.raises(ValueError):
        xp.linalg.cross(on(sample("float64", (2, 4)), device), on(sample("float64", (2, 4)), device))
    with pytest.raises(ValueError):  # the compute axis does not broadcast
        xp.linalg.cross(on(sample("float64", (3, 1)), device), on(sample("float64", (3, 3)), device), axis=-1)


@pytest.mark.parametrize("offset", [0, 1, -1, 2, -3, 100, -100])
@pytest.mark.parametrize("shape", [(3, 4), (2, 4, 3), (0, 3, 3), (1, 1)])
def test_diagonal_and_trace(device: str, shape: tuple[int, ...], offset: int) -> None:
    a = sample("float32", shape)
    expected = np.diagonal(a, offset=offset, axis1=-2, axis2=-1)
    assert_close(xp.linalg.diagonal(on(a, device, strided=True), offset=offset), expected, "float32")
    assert_close(xp.linalg.trace(on(a, device), offset=offset),
                 np.trace(a, offset=offset, axis1=-2, axis2=-1).astype(np.float32), "float32")


@pytest.mark.parametrize("dtype, default", [("int8", "int64"), ("uint8", "uint64"), ("uint32", "uint64"),
                                            ("int64", "int64"), ("float16", "float16"),
                                            ("complex64", "complex64")])
def test_trace_dtypes(device: str, dtype: str, default: str) -> None:
    a = sample(dtype, (2, 3, 3))
    expected = np.trace(wide(a), axis1=-2, axis2=-1).astype(storage(default))
    assert_close(xp.linalg.trace(on(a, device)), expected, default)
    assert_close(xp.linalg.trace(on(a, device), dtype=xp.complex128),
                 np.trace(wide(a), axis1=-2, axis2=-1), "complex128")
    with pytest.raises(TypeError):
        xp.linalg.trace(on(np.ones((2, 2), bool), device))


@pytest.mark.parametrize("dtype", ["bool", "int8", "bfloat16", "complex128"])
def test_matrix_transpose(device: str, dtype: str) -> None:
    a = sample("int8", (2, 3, 4)).astype(storage(dtype))
    for f in (xp.matrix_transpose, xp.linalg.matrix_transpose):
        out = f(on(a, device))
        assert out.dtype == getattr(xp, dtype)
        np.testing.assert_array_equal(host(out), np.swapaxes(a, -1, -2))
    with pytest.raises(ValueError):
        xp.matrix_transpose(on(a[0, 0], device))
    with pytest.raises(ValueError):
        xp.linalg.diagonal(on(a[0, 0], device))


@pytest.mark.parametrize("n", [-3, -1, 0, 1, 2, 5])
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
def test_matrix_power(device: str, dtype: str, n: int) -> None:
    a = well_conditioned(dtype, (2, 3, 3)) / 6
    expected = np.linalg.matrix_power(wide(a), n)
    x = on(a, device, strided=True)
    out = xp.linalg.matrix_power(x, n)
    assert_close(out, expected, dtype)
    assert out is not x
    with pytest.raises(TypeError):
        xp.linalg.matrix_power(x, 1.5)
    with pytest.raises(TypeError):
        xp.linalg.matrix_power(on(sample("int64", (3, 3)), device), 2)
    with pytest.raises(xp.linalg.LinAlgError, match=r"^matrix_power\(\): n=-1 needs the inverse"):
        xp.linalg.matrix_power(on(np.zeros((3, 3), dtype=storage(dtype)), device), -1)


# -- factorizations, solves, determinants -----------------------------------------------------

BATCHES = [(3, 3), (2, 4, 4), (0, 3, 3), (2, 0, 0), (1, 1)]


@pytest.mark.parametrize("dtype", LAPACK_FLOATS)
@pytest.mark.parametrize("shape", BATCHES)
def test_inv_det_slogdet(device: str, dtype: str, shape: tuple[int, ...]) -> None:
    a = well_conditioned(dtype, shape)
    ref_a = wide(a)
    x = on(a, device, strided=True)
    assert_close(xp.linalg.inv(x), np.linalg.inv(ref_a), dtype)
    assert_close(xp.linalg.det(x), np.linalg.det(ref_a), dtype)
    sign, logabsdet = xp.linalg.slogdet(x)
    ref = np.linalg.slogdet(ref_a)
    assert_close(sign, ref.sign, dtype)
    assert_close(logabsdet, ref.logabsdet, REAL_OF.get(dtype, dtype), scale=1.0)
    assert xp.linalg.slogdet(x)._fields == ("sign", "logabsdet")


def test_slogdet_of_a_singular_matrix(device: str) -> None:
    sign, logabsdet = xp.linalg.slogdet(on(np.zeros((2, 2)), device))
    assert float(sign) == 0.0 and float(logabsdet) == -np.inf


@pytest.mark.parametrize("dtype", LAPACK_FLOATS)
@pytest.mark.parametrize("s1, s2", [((3, 3), (3,)), ((2, 3, 3), (3,)), ((3, 3), (3, 2)), ((2, 1, 3, 3), (4, 3, 1)),
                                    ((0, 3, 3), (3, 2)), ((3, 3), (2, 3, 0))])
def test_solve(device: str, dtype: str, s1: tuple[int, ...], s2: tuple[int, ...]) -> None:
    a, b = well_conditioned(dtype, s1), sample(dtype, s2)
    wa, wb = wide(a), wide(b)
    if b.ndim == 1:
        expected = np.linalg.solve(wa, wb[:, None])[..., 0]  # the standard's rule: one vector for every matrix
    else:
        expected = np.linalg.solve(wa, wb)
    out = xp.linalg.solve(on(a, device, strided=True), on(b, device))
    assert_close(out, expected, dtype)


def test_solve_promotes_and_checks(device: str) -> None:
    a, b = well_conditioned("float32", (3, 3)), sample("float64", (3,))
    out = xp.linalg.solve(on(a, device), on(b, device))
    assert_close(out, np.linalg.solve(a.astype(np.float64), b), "float64", scale=1e3)
    with pytest.raises(ValueError):
        xp.linalg.solve(on(a, device), on(sample("float64", (4,)), device))
    with pytest.raises(ValueError):
        xp.linalg.solve(on(a, device), on(sample("float64", (2, 3, 3)), device)[:, :2])
    with pytest.raises(TypeError):
        xp.linalg.solve(on(sample("int64", (3, 3)), device), on(b, device))


@pytest.mark.parametrize("f", ["inv", "solve", "cholesky"])
def test_singular_input_raises_linalgerror(device: str, f: str) -> None:
    a = on(np.ones((3, 3)), device)
    with pytest.raises(xp.linalg.LinAlgError) as info:
        getattr(xp.linalg, f)(*([a, a] if f == "solve" else [a]))
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("dtype", LAPACK_FLOATS)
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (0, 2, 2)])
def test_cholesky(device: str, dtype: str, shape: tuple[int, ...], upper: bool) -> None:
    a = hermitian(dtype, shape)
    out = xp.linalg.cholesky(on(a, device, strided=True), upper=upper)
    assert_close(out, np.linalg.cholesky(wide(a), upper=upper), dtype)


def _herm(a: np.ndarray) -> np.ndarray:
    return np.conj(np.swapaxes(a, -1, -2))


def _assert_identity(g: np.ndarray, dtype: str) -> None:
    """``g`` (a stack of Gram matrices) is the identity within ``dtype``'s tolerance."""
    k = g.shape[-1]
    np.testing.assert_allclose(g, np.broadcast_to(np.eye(k), g.shape), atol=10 * rtol(dtype))


@pytest.mark.parametrize("mode", ["reduced", "complete"])
@pytest.mark.parametrize("dtype", LAPACK_FLOATS)
@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 3, 3), (0, 2, 3)])
def test_qr(device: str, dtype: str, shape: tuple[int, ...], mode: str) -> None:
    a = sample(dtype, shape, 5)
    q, r = xp.linalg.qr(on(a, device, strided=True), mode=mode)
    ref = np.linalg.qr(wide(a), mode=mode)
    assert q.shape == ref.Q.shape and r.shape == ref.R.shape
    assert q.dtype == r.dtype == getattr(xp, dtype)
    qh, rh = host(q).astype(np.complex128), host(r).astype(np.complex128)
    np.testing.assert_array_equal(rh, np.triu(rh))
    assert_close(q @ r, wide(a), dtype)
    _assert_identity(_herm(qh) @ qh, dtype)
    with pytest.raises(ValueError):
        xp.linalg.qr(on(a, device), mode="r")


@pytest.mark.parametrize("full", [True, False])
@pytest.mark.parametrize("dtype", LAPACK_FLOATS)
@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 3, 3), (0, 2, 3), (2, 0)])
def test_svd_and_svdvals(device: str, dtype: str, shape: tuple[int, ...], full: bool) -> None:
    a = sample(dtype, shape, 6)
    x = on(a, device, strided=True)
    u, s, vh = xp.linalg.svd(x, full_matrices=full)
    ref = np.linalg.svd(wide(a), full_matrices=full)
    assert (u.shape, s.shape, vh.shape) == (ref.U.shape, ref.S.shape, ref.Vh.shape)
    assert u.dtype == vh.dtype == getattr(xp, dtype)
    real = REAL_OF.get(dtype, dtype)
    assert_close(s, ref.S, real)
    assert_close(xp.linalg.svdvals(x), ref.S, real)
    k = s.shape[-1]
    uh, sh, vhh = (host(t).astype(np.complex128) for t in (u, s, vh))
    np.testing.assert_allclose((uh[..., :k] * sh[..., None, :]) @ vhh[..., :k, :], wide(a),
                               atol=10 * rtol(dtype) * max(1.0, float(np.max(np.abs(a), initial=0))))
    # Orthonormal columns of U and rows of Vh, all of them: full_matrices' extra ones multiply zeros above.
    _assert_identity(_herm(uh) @ uh, dtype)
    _assert_identity(vhh @ _herm(vhh), dtype)
    assert xp.linalg.svd(x)._fields == ("U", "S", "Vh")


@pytest.mark.parametrize("dtype", LAPACK_FLOATS)
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (0, 2, 2)])
def test_eigh_and_eigvalsh(device: str, dtype: str, shape: tuple[int, ...]) -> None:
    a = hermitian(dtype, shape, 7)
    x = on(a, device, strided=True)
    w, v = xp.linalg.eigh(x)
    expected = np.linalg.eigvalsh(wide(a))
    real = REAL_OF.get(dtype, dtype)
    assert_close(w, expected, real)
    assert_close(xp.linalg.eigvalsh(x), expected, real)
    assert v.dtype == getattr(xp, dtype)
    vh = host(v).astype(np.complex128)
    np.testing.assert_allclose(wide(a) @ vh, vh * host(w).astype(np.float64)[..., None, :],
                               atol=20 * rtol(dtype) * max(1.0, float(np.max(np.abs(expected), initial=0))))
    _assert_identity(_herm(vh) @ vh, dtype)  # (zero vectors would pass the line above)
    assert xp.linalg.eigh(x)._fields == ("eigenvalues", "eigenvectors")


@pytest.mark.parametrize("dtype", LAPACK_FLOATS)
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (0, 2, 2)])
def test_eig_and_eigvals(device: str, dtype: str, shape: tuple[int, ...]) -> None:
    a = well_conditioned(dtype, shape, 8)
    x = on(a, device, strided=True)
    w, v = xp.linalg.eig(x)
    c = COMPLEX_OF.get(dtype, dtype)
    assert w.dtype == v.dtype == getattr(xp, c)
    wh, vh = host(w).astype(np.complex128), host(v).astype(np.complex128)
    scale = max(1.0, float(np.max(np.abs(wh), initial=0)))
    np.testing.assert_allclose(wide(a) @ vh, vh * wh[..., None, :], atol=20 * rtol(dtype) * scale)
    # Unit eigenvectors (zero ones would pass the line above), and the eigenvalues NumPy finds.
    np.testing.assert_allclose(np.linalg.norm(vh, axis=-2), 1.0, atol=20 * rtol(dtype))
    expected = _in_order(np.linalg.eigvals(wide(a)).astype(np.complex128))
    np.testing.assert_allclose(_in_order(wh), expected, atol=20 * rtol(dtype) * scale)
    np.testing.assert_allclose(_in_order(host(xp.linalg.eigvals(x)).astype(np.complex128)), expected,
                               atol=20 * rtol(dtype) * scale)
    assert xp.linalg.eig(x)._fields == ("eigenvalues", "eigenvectors")


def _in_order(z: np.ndarray) -> np.ndarray:
    """Eigenvalues sorted along the last axis by real, then imaginary part, each rounded to 3
    decimals for the order only (the order of eig's results is unspecified)."""
    order = np.lexsort((np.round(z.imag, 3), np.round(z.real, 3)), axis=-1)
    return np.take_along_axis(z, order, axis=-1)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
@pytest.mark.parametrize("rtol_arg", [None, 0.1, "array"])
def test_pinv_and_matrix_rank(device: str, dtype: str, rtol_arg: object) -> None:
    a = sample(dtype, (2, 4, 3), 9)
    a[1, :, 2] = a[1, :, 0]  # rank 2
    real = REAL_OF.get(dtype, dtype)
    r = rtol_arg
    if rtol_arg == "array":
        r = on(np.array([0.1, 1e-3], dtype=real), device)
        ref_rtol = np.array([0.1, 1e-3])
    else:
        ref_rtol = rtol_arg
    ref_a = wide(a)
    assert_close(xp.linalg.pinv(on(a, device), rtol=r), np.linalg.pinv(ref_a, rtol=ref_rtol), dtype)
    rank = xp.linalg.matrix_rank(on(a, device, strided=True), rtol=r)
    assert rank.dtype == xp.int64
    np.testing.assert_array_equal(host(rank), np.linalg.matrix_rank(ref_a, rtol=ref_rtol))


def test_rtol_bad_input(device: str) -> None:
    x = on(sample("float64", (2, 3, 3)), device)
    with pytest.raises(TypeError):
        xp.linalg.pinv(x, rtol=on(np.array([1, 2]), device))
    with pytest.raises(ValueError):
        xp.linalg.matrix_rank(x, rtol=on(np.array([0.1, 0.2, 0.3]), device))
    with pytest.raises(TypeError):
        xp.linalg.matrix_rank(x, rtol="tiny")


def test_bool_arguments_must_be_bools(device: str) -> None:
    x = on(sample("float64", (3, 3)), device)
    for call, what in ((lambda: xp.linalg.svd(x, full_matrices="no"), "full_matrices"),
                       (lambda: xp.linalg.cholesky(x, upper=1), "upper"),
                       (lambda: xp.linalg.matrix_norm(x, keepdims="x"), "keepdims"),
                       (lambda: xp.linalg.vector_norm(x, keepdims=0), "keepdims")):
        with pytest.raises(TypeError, match=f"{what} must be a bool"):
            call()


@pytest.mark.parametrize("f", ["cholesky", "det", "eig", "eigh", "eigvals", "eigvalsh", "inv", "slogdet"])
def test_square_floating_input_is_required(device: str, f: str) -> None:
    fn = getattr(xp.linalg, f)
    with pytest.raises(ValueError):
        fn(on(sample("float64", (2, 3)), device))
    with pytest.raises(ValueError):
        fn(on(sample("float64", (3,)), device))
    with pytest.raises(TypeError):
        fn(on(sample("int32", (3, 3)), device))
    with pytest.raises(TypeError):
        fn(np.eye(3))


@pytest.mark.parametrize("f", ["qr", "svd", "svdvals", "pinv", "matrix_rank", "matrix_norm"])
def test_matrix_floating_input_is_required(device: str, f: str) -> None:
    fn = getattr(xp.linalg, f)
    with pytest.raises(TypeError):
        fn(on(sample("int8", (2, 3)), device))
    with pytest.raises(ValueError):
        fn(on(sample("float32", (3,)), device))


# -- norms ---------------------------------------------------------------------------------

@pytest.mark.parametrize("ord", [2, 1, 0, -1, -2, np.inf, -np.inf, 3, 0.5, -1.5])
@pytest.mark.parametrize("axis, keepdims", [(None, False), (0, True), (-1, False), ((0, 2), True), ((), False)])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex64"])
def test_vector_norm(device: str, dtype: str, axis: object, keepdims: bool, ord: float) -> None:
    a = sample(dtype, (2, 3, 4), 10)
    with np.errstate(divide="ignore"):  # negative orders of zeros
        expected = np.linalg.vector_norm(wide(a), axis=axis, keepdims=keepdims, ord=ord)
    out = xp.linalg.vector_norm(on(a, device, strided=True), axis=axis, keepdims=keepdims, ord=ord)
    assert_close(out, np.asarray(expected), REAL_OF.get(dtype, dtype))


def test_vector_norm_bad_input(device: str) -> None:
    x = on(sample("float64", (2, 3)), device)
    with pytest.raises(ValueError):
        xp.linalg.vector_norm(x, ord=float("nan"))
    with pytest.raises(TypeError):
        xp.linalg.vector_norm(x, ord="fro")
    with pytest.raises(TypeError):
        xp.linalg.vector_norm(on(sample("int64", (3,)), device))
    with pytest.raises(IndexError):
        xp.linalg.vector_norm(x, axis=2)
    with pytest.raises(ValueError):
        xp.linalg.vector_norm(x, axis=(0, 0))


def test_norms_of_empty_arrays(device: str) -> None:
    # Alike on every device (a GPU had refused ord=inf where cpu gave 0): a sum or a largest value of
    # nothing is 0, a smallest one is undefined.
    e = xp.zeros((0, 3), dtype=xp.complex64, device=device)
    for ord in (np.inf, 2, 1, 0):
        out = xp.linalg.vector_norm(e, axis=0, ord=ord)
        assert out.dtype == xp.float32 and host(out).tolist() == [0.0] * 3
    assert xp.linalg.vector_norm(e, keepdims=True).shape == (1, 1)
    for ord in ("fro", "nuc", 1, 2, np.inf):
        out = xp.linalg.matrix_norm(xp.zeros((2, 0, 3), device=device), ord=ord, keepdims=True)
        assert out.shape == (2, 1, 1) and host(out).tolist() == [[[0.0]], [[0.0]]]
    for call in (lambda: xp.linalg.vector_norm(e, axis=0, ord=-np.inf), lambda: xp.linalg.vector_norm(e, ord=-2),
                 lambda: xp.linalg.matrix_norm(xp.zeros((0, 0), device=device), ord=-2)):
        with pytest.raises(ValueError, match=r"^linalg\.(vector|matrix)_norm\(\): ord=-\w+ of an empty"):
            call()


@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
def test_matrix_norm(device: str, dtype: str, keepdims: bool, ord: object) -> None:
    a = sample(dtype, (2, 3, 4), 11)
    expected = np.linalg.matrix_norm(wide(a), keepdims=keepdims, ord=ord)
    out = xp.linalg.matrix_norm(on(a, device, strided=True), keepdims=keepdims, ord=ord)
    assert_close(out, expected, REAL_OF.get(dtype, dtype))
    with pytest.raises(ValueError):
        xp.linalg.matrix_norm(on(a, device), ord=3)


def test_float16_and_bfloat16_compute_in_float32(device: str) -> None:
    """Products that overflow float16 partial sums still round once, from float32."""
    a = np.full((1, 64), 100.0, np.float16)
    out = xp.matmul(on(a, device), on(a.T.copy(), device))
    assert out.dtype == xp.float16 and float(out[0, 0]) == np.inf  # 640000 is past float16's range
    b = np.full((1, 64), 3.0, ml_dtypes.bfloat16)
    out = xp.matmul(on(b, device), on(b.T.copy(), device))
    assert out.dtype == xp.bfloat16 and float(out[0, 0]) == 576.0


@pytest.mark.parametrize("name, args, said", [
    ("inv", lambda xp, d: (xp.zeros((2, 2), device=d),), "linalg.inv(): the matrix is singular: it has no inverse; linalg.pinv(x)"),
    ("solve", lambda xp, d: (xp.zeros((2, 2), device=d), xp.ones(2, device=d)), "linalg.solve(): the matrix is singular: the system has no unique solution; linalg.pinv(x1) @ x2"),
    ("cholesky", lambda xp, d: (-xp.eye(2, device=d),), "linalg.cholesky(): the matrix is not positive definite: cholesky needs"),
])
def test_undefined_input_says_what_to_do_instead(device: str, name: str, args: Any, said: str) -> None:
    with pytest.raises(xp.linalg.LinAlgError, match=re.escape(said)):
        getattr(xp.linalg, name)(*args(xp, device))
