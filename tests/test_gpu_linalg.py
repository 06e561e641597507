"""GPU-only checks of the linalg plugin: IEEE float32 products, library handles made once, operands
at strides the BLAS takes through its flags or after one copy, integer products, solver errors,
tall matrices' QR and SVD by CholeskyQR2 and its fallback.

The device-parametrized tests of test_linalg.py cover the functions against NumPy on every device;
these look at what only the GPU path has. Skipped without a GPU.
"""

from __future__ import annotations

import numpy as np
import pytest

import rocm_array as xp
from helpers import host
from rocm_array.devices import Device, gpus

pytestmark = pytest.mark.skipif(not gpus(), reason="no GPU")


def _gpu() -> Device:
    return gpus()[0]


def _on(a: np.ndarray) -> xp.Array:
    return xp.asarray(a, device=str(_gpu()))


def test_float32_matmul_is_ieee_not_tf32() -> None:
    """TF32 keeps 10 mantissa bits (relative error ~1e-3); IEEE float32 sums stay near 1e-6."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 512, 512)).astype(np.float32)
    out = host(_on(a) @ _on(b))
    ref = a.astype(np.float64) @ b.astype(np.float64)
    err = np.max(np.abs(out - ref)) / np.max(np.abs(ref))
    assert err < 2e-6, f"float32 matmul error {err:.2e} looks like TF32"


def test_library_handles_are_made_once_on_the_runtime_stream() -> None:
    from rocm_array.runtime import vendor

    rt = _gpu().runtime
    a = _on(np.ones((8, 8)) + np.eye(8))
    a @ a
    lib = vendor.library("blas", rt)
    xp.linalg.solve(a, a)
    assert vendor.library("blas", rt) is lib
    assert [k for k in vendor._OPEN if k[0] == "blas"] == [("blas", id(rt), rt.driver.stream)]


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "float16"])
def test_matmul_operands_at_any_strides(dtype: str) -> None:
    rng = np.random.default_rng(1)
    base = rng.integers(-3, 4, (3, 12, 10)).astype(np.float64)
    wide = np.complex128 if dtype.startswith("complex") else np.float64  # the reference's dtype
    if wide is np.complex128:  # imaginary parts too: a swapped or conjugated operand shows
        base = base + 1j * rng.integers(-3, 4, base.shape)
    x = _on(base.astype(dtype))
    cases = [
        (x[:, 1:6, 2:9], x[:, 2:9, 0:4]),  # sub-blocks: leading dimensions larger than the width
        (x.mT[:, :5, :7], x[:, :7, :3]),  # column-major left operand: the transpose flag
        (x[:, ::2, ::3], x[:, ::3, ::2][:, :4, :]),  # neither layout: one copy
        (x[0, :4, :6], x[:, :6, :5]),  # a 2-D left operand broadcast over the batch (stride 0)
        (x[:, 0, :6], x[0, :6, :2]),  # stacked vectors
    ]
    for a, b in cases:
        ref = np.matmul(host(a).astype(wide), host(b).astype(wide))
        out = a @ b
        assert out.dtype == x.dtype and out.shape == ref.shape
        np.testing.assert_allclose(host(out).astype(wide), ref, rtol=1e-2 if dtype == "float16" else 1e-6)


def test_batched_matmul_broadcasts_batch_dims() -> None:
    rng = np.random.default_rng(2)
    a = rng.standard_normal((4, 1, 5, 3))
    b = rng.standard_normal((1, 6, 3, 2))
    np.testing.assert_allclose(host(_on(a) @ _on(b)), a @ b, rtol=1e-12)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "uint64", "int64"])
def test_integer_matmul_wraps_like_numpy(dtype: str) -> None:
    rng = np.random.default_rng(3)
    info = np.iinfo(dtype)
    a = rng.integers(info.min, info.max, (2, 33, 40), dtype=dtype, endpoint=True)
    b = rng.integers(info.min, info.max, (40, 17), dtype=dtype, endpoint=True)
    np.testing.assert_array_equal(host(_on(a) @ _on(b)), np.matmul(a, b))
    c = rng.integers(info.min, info.max, (17, 66), dtype=dtype, endpoint=True)
    np.testing.assert_array_equal(host(_on(a).mT[:, ::2] @ _on(c)[:, ::2].mT),
                                  np.matmul(a.swapaxes(-1, -2)[:, ::2], c[:, ::2].T))


def test_vecdot_conjugates_the_first_operand_on_strided_input() -> None:
    rng = np.random.default_rng(4)
    a = rng.standard_normal((5, 7)) + 1j * rng.standard_normal((5, 7))
    b = rng.standard_normal((7, 5)) + 1j * rng.standard_normal((7, 5))
    out = xp.vecdot(_on(a), _on(b).mT)
    np.testing.assert_allclose(host(out), np.sum(np.conj(a) * b.T, axis=-1), rtol=1e-12)


@pytest.mark.parametrize("f", ["solve", "inv", "cholesky"])
def test_singular_input_raises_linalgerror(f: str) -> None:
    a = np.ones((2, 3, 3))
    a[0] = np.eye(3) * 2  # the first matrix is fine, the second is not
    x = _on(a)
    with pytest.raises(xp.linalg.LinAlgError):
        if f == "solve":
            xp.linalg.solve(x, _on(np.ones((2, 3, 1))))
        else:
            getattr(xp.linalg, f)(x)


def test_factorizations_of_wide_and_tall_matrices() -> None:
    """gesvd takes m >= n only: a wide matrix is factored as its transpose; qr's complete mode."""
    rng = np.random.default_rng(5)
    for shape in [(3, 7), (7, 3)]:
        a = rng.standard_normal((2, *shape)) + 1j * rng.standard_normal((2, *shape))
        for full in (True, False):
            u, s, vh = (host(r) for r in xp.linalg.svd(_on(a), full_matrices=full))
            k = min(shape)
            np.testing.assert_allclose((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], a, atol=1e-10)
            np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), atol=1e-10)
            _assert_orthonormal(u)  # every column and row: the extra ones of full_matrices too
            _assert_orthonormal(np.swapaxes(vh, -1, -2))
        for mode in ("reduced", "complete"):
            q, r = (host(t) for t in xp.linalg.qr(_on(a), mode=mode))
            np.testing.assert_allclose(q @ r, a, atol=1e-10)
            np.testing.assert_allclose(np.triu(r), r)
            _assert_orthonormal(q)  # (q = a, r = I would pass the two lines above)


def _assert_orthonormal(q: np.ndarray) -> None:
    """The columns of each matrix of ``q`` are orthonormal."""
    k = q.shape[-1]
    gram = np.conj(np.swapaxes(q, -1, -2)) @ q
    np.testing.assert_allclose(gram, np.broadcast_to(np.eye(k), gram.shape), atol=1e-10)


def _check_qr(a: np.ndarray, q: np.ndarray, r: np.ndarray, tol: float) -> None:
    n = a.shape[1]
    np.testing.assert_array_equal(r, np.triu(r))
    np.testing.assert_allclose(q.T.astype(np.float64) @ q, np.eye(n), atol=tol)
    np.testing.assert_allclose(q.astype(np.float64) @ r, a, atol=tol * np.abs(a).max())


@pytest.mark.parametrize("dtype, tol", [("float32", 2e-5), ("float64", 1e-12)])
def test_tall_qr_and_svd_by_cholesky_qr(dtype: str, tol: float, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tall matrix of TALL_MIN elements takes CholeskyQR2: its QR is one, and its thin SVD, svdvals
    and the wide transpose's SVD are as accurate as gesvd's (the path it replaces) against NumPy in
    float64."""
    from rocm_array_plugins.linalg import gpu_lapack

    m, n = 16384, gpu_lapack.TALL_MIN // 16384
    a = np.random.default_rng(8).standard_normal((m, n)).astype(dtype)
    x = _on(a)
    assert gpu_lapack._tall(x, getattr(xp, dtype)) and gpu_lapack._cholesky_qr(x, getattr(xp, dtype)) is not None
    q, r = (host(t) for t in xp.linalg.qr(x))
    assert q.shape == (m, n) and r.shape == (n, n)
    _check_qr(a, q, r, tol)
    expected = np.linalg.svd(a.astype(np.float64), compute_uv=False)

    def errors(y: xp.Array, b: np.ndarray) -> tuple[float, ...]:
        u, s, vh = (host(t).astype(np.float64) for t in xp.linalg.svd(y, full_matrices=False))
        assert u.shape == (b.shape[0], n) and vh.shape == (n, b.shape[1])
        return (float(np.max(np.abs(s / expected - 1))), float(np.abs((u * s) @ vh - b).max()),
                float(np.abs(u.T @ u - np.eye(n)).max()),
                float(np.max(np.abs(host(xp.linalg.svdvals(y)) / expected - 1))))

    for y, b in ((x, a), (x.mT, a.T)):
        fast = errors(y, b)
        with monkeypatch.context() as patch:
            patch.setattr(gpu_lapack, "TALL_MIN", 1 << 62)  # gesvd
            before = errors(y, b)
        eps = float(np.finfo(dtype).eps)
        for got, ref in zip(fast, before):
            assert got <= 4 * ref + 16 * eps, (fast, before)


def test_ill_conditioned_tall_matrix_falls_back_to_householder() -> None:
    """Condition number 1e6 in float32: CholeskyQR2 declines and qr and svd still factor it."""
    from rocm_array_plugins.linalg import gpu_lapack

    rng = np.random.default_rng(9)
    m, n = 16384, 64
    u0, _ = np.linalg.qr(rng.standard_normal((m, n)))
    v0, _ = np.linalg.qr(rng.standard_normal((n, n)))
    sv = np.logspace(0, -6, n)
    a = ((u0 * sv) @ v0.T).astype(np.float32)
    x = _on(a)
    assert gpu_lapack._cholesky_qr(x, xp.float32) is None
    q, r = (host(t) for t in xp.linalg.qr(x))
    _check_qr(a, q, r, 2e-5)
    u, s, vh = (host(t) for t in xp.linalg.svd(x, full_matrices=False))
    np.testing.assert_allclose((u * s) @ vh, a, atol=2e-5 * np.abs(a).max())
    np.testing.assert_allclose(s[:8], sv[:8], rtol=1e-4)


def test_det_and_slogdet_of_singular_matrices() -> None:
    a = np.array([[[1.0, 2.0], [2.0, 4.0]], [[0.0, 1.0], [1.0, 0.0]]])
    np.testing.assert_allclose(host(xp.linalg.det(_on(a))), [0.0, -1.0])
    sign, logabs = xp.linalg.slogdet(_on(a))
    np.testing.assert_array_equal(host(sign), [0.0, -1.0])
    np.testing.assert_array_equal(host(logabs), [-np.inf, 0.0])
