"""The fft plugin against NumPy: transforms, lengths, axes, norms, dtypes, helpers, and bad input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rocm_array as xp
from helpers import host, storage

NORMS = ["backward", "ortho", "forward"]
COMPLEX_OF = {"float16": "complex64", "bfloat16": "complex64", "float32": "complex64", "float64": "complex128",
              "complex64": "complex64", "complex128": "complex128"}
REAL_OF = {"complex64": "float32", "complex128": "float64"}



def sample(dtype: str, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.uniform(-1, 1, shape)
    return a.astype(storage(dtype))


def on(a: np.ndarray, device: str, *, strided: bool = False) -> xp.Array:
    """``a`` on ``device``; ``strided``: as a reversed (negative-stride, non-contiguous) view."""
    if strided:
        return xp.asarray(np.ascontiguousarray(a[..., ::-1]), device=device)[..., ::-1]
    return xp.asarray(a, device=device)


def assert_close(out: xp.Array, expected: np.ndarray, dtype: str) -> None:
    assert out.dtype == getattr(xp, dtype)
    got = host(out)
    assert got.shape == expected.shape
    tol = 1e-5 if dtype in ("float32", "complex64") else 1e-12
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol * max(1.0, float(np.max(np.abs(expected), initial=0))))


REAL_INPUT = ("rfft", "ihfft", "rfftn")
FLOAT_DTYPES = ["float32", "float64", "complex64", "complex128"]


def cases(names: list[str]) -> list[tuple[str, str]]:
    """(transform, dtype) pairs: every float dtype, but only real ones for the real-input transforms."""
    return [(n, d) for n in names for d in FLOAT_DTYPES if not (n in REAL_INPUT and d.startswith("complex"))]


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n, axis", [(None, -1), (None, 0), (5, 1), (12, -1), (1, 0)])
@pytest.mark.parametrize("name, dtype", cases(["fft", "ifft", "hfft", "irfft", "rfft", "ihfft"]))
def test_one_axis_transforms(device: str, name: str, dtype: str, n: int | None, axis: int, norm: str) -> None:
    a = sample(dtype, (4, 6), 1)
    ref_in = a.astype(np.float64) if name in REAL_INPUT else a.astype(np.complex128)
    expected = getattr(np.fft, name)(ref_in, n=n, axis=axis, norm=norm)
    out = getattr(xp.fft, name)(on(a, device, strided=True), n=n, axis=axis, norm=norm)
    c = COMPLEX_OF[dtype]
    assert_close(out, expected, REAL_OF[c] if name in ("irfft", "hfft") else c)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("s, axes", [(None, None), (None, (0,)), ((3, 4), (1, 2)), ((-1, 6), (2, 0)),
                                     ((5,), (-1,)), (None, (2, 0, 1))])
@pytest.mark.parametrize("name, dtype", cases(["fftn", "ifftn", "rfftn", "irfftn"]))
def test_many_axes_transforms(device: str, name: str, dtype: str, s: tuple[int, ...] | None,
                              axes: tuple[int, ...] | None, norm: str) -> None:
    a = sample(dtype, (3, 4, 5), 2)
    ax = axes if axes is not None else (0, 1, 2)
    np_s = None if s is None else [a.shape[i] if n == -1 and not (name == "irfftn" and k == len(s) - 1)
                                   else 2 * (a.shape[i] - 1) if n == -1 else n
                                   for k, (n, i) in enumerate(zip(s, ax))]
    ref_in = a.astype(np.float64) if name in REAL_INPUT else a.astype(np.complex128)
    expected = getattr(np.fft, name)(ref_in, s=np_s, axes=axes, norm=norm)
    out = getattr(xp.fft, name)(on(a, device, strided=True), s=s, axes=axes, norm=norm)
    c = COMPLEX_OF[dtype]
    assert_close(out, expected, REAL_OF[c] if name == "irfftn" else c)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_reads_as_complex64(device: str, dtype: str) -> None:
    a = sample(dtype, (8,), 3)
    assert_close(xp.fft.rfft(on(a, device)), np.fft.rfft(a.astype(np.float32)).astype(np.complex64), "complex64")
    assert_close(xp.fft.fft(on(a, device)), np.fft.fft(a.astype(np.float32)).astype(np.complex64), "complex64")


def test_zero_size_batches(device: str) -> None:
    a = np.zeros((0, 4), np.complex64)
    assert xp.fft.fft(on(a, device)).shape == (0, 4)
    assert xp.fft.rfft(on(np.zeros((0, 6), np.float64), device), n=8).shape == (0, 5)
    assert xp.fft.irfftn(on(np.zeros((2, 0, 3), np.complex128), device), s=(4,), axes=(2,)).shape == (2, 0, 4)


@settings(max_examples=20, deadline=None)
@given(shape=st.lists(st.integers(1, 6), min_size=1, max_size=3), norm=st.sampled_from(NORMS),
       data=st.data())
def test_round_trips(shape: list[int], norm: str, data: st.DataObject) -> None:
    a = sample("complex128", tuple(shape), 4)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = xp.asarray(a)
    back = xp.fft.ifft(xp.fft.fft(x, axis=axis, norm=norm), axis=axis, norm=norm)
    np.testing.assert_allclose(host(back), a, atol=1e-12)
    r = a.real.copy()
    n = shape[axis]
    back = xp.fft.irfft(xp.fft.rfft(xp.asarray(r), axis=axis, norm=norm), n=n, axis=axis, norm=norm)
    np.testing.assert_allclose(host(back), r, atol=1e-12)


def test_real_input_transforms_reject_complex(device: str) -> None:
    z = on(sample("complex64", (4,)), device)
    for name in REAL_INPUT:
        with pytest.raises(TypeError):
            getattr(xp.fft, name)(z)


@pytest.mark.parametrize("name", ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft"])
def test_bad_input(device: str, name: str) -> None:
    f = getattr(xp.fft, name)
    x = on(sample("float64", (4, 4)), device)
    with pytest.raises(TypeError):
        f(on(np.arange(4), device))
    with pytest.raises(TypeError):
        f(np.ones(4))
    with pytest.raises(ValueError):
        f(x, norm="none")
    if name.endswith("n"):
        with pytest.raises(ValueError):
            f(x, s=(4, 4))  # s without axes
        with pytest.raises(ValueError):
            f(x, s=(4,), axes=(0, 1))
        with pytest.raises(ValueError):
            f(x, axes=(0, 0))
        with pytest.raises(ValueError):
            f(x, s=(0, 4), axes=(0, 1))
        with pytest.raises(IndexError):
            f(x, axes=(2,))
    else:
        with pytest.raises(ValueError):
            f(x, n=0)
        with pytest.raises(ValueError, match=rf"^fft\.{name}\(\): the transform length must be from 1"):
            f(x, n=10**20)  # (NumPy's own errors had leaked on cpu)
        with pytest.raises(TypeError):
            f(x, n=2.5)
        with pytest.raises(IndexError):
            f(x, axis=2)
        with pytest.raises(ValueError):
            f(on(np.float64(1.0), device))


@pytest.mark.parametrize("dtype", [None, "float32", "float64", "float16"])
@pytest.mark.parametrize("n, d", [(1, 1.0), (8, 0.5), (9, 3)])
def test_frequencies(device: str, n: int, d: float, dtype: str | None) -> None:
    kw = {} if dtype is None else {"dtype": getattr(xp, dtype)}
    want = dtype or "float64"
    for name in ("fftfreq", "rfftfreq"):
        out = getattr(xp.fft, name)(n, d=d, device=device, **kw)
        assert out.dtype == getattr(xp, want) and str(out.device) == device
        # NumPy's bits: its integer sequence times 1 / (n d), computed on the device.
        np.testing.assert_array_equal(host(out), getattr(np.fft, name)(n, d).astype(want))


def test_frequencies_bad_input() -> None:
    with pytest.raises(ValueError):
        xp.fft.fftfreq(0)
    with pytest.raises(TypeError):
        xp.fft.fftfreq(4.0)
    with pytest.raises(TypeError):
        xp.fft.rfftfreq(4, dtype=xp.complex64)
    with pytest.raises(TypeError):
        xp.fft.rfftfreq(4, dtype=xp.int32)
    with pytest.raises(ValueError):
        xp.fft.fftfreq(4, d=0)
    with pytest.raises(ValueError, match=r"^fft\.rfftfreq\(\): n must be from 1"):
        xp.fft.rfftfreq(10**20)


@pytest.mark.parametrize("shape, axes", [((5,), None), ((6,), 0), ((5,), -1)]
                         + [(s, a) for s in ((4, 5, 3), (0, 3, 2), (1, 1, 1)) for a in (None, 1, (0, 2), (2, 1, 0))])
@pytest.mark.parametrize("dtype", ["bool", "int16", "bfloat16", "complex128"])
def test_shifts(device: str, shape: tuple[int, ...], axes: object, dtype: str) -> None:
    # Distinct values where the dtype allows (a bool alternates): a constant array shifts to itself.
    n = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    a = ((n % 2 == 1) if dtype == "bool" else (n + 1j * (n % 3)) if dtype == "complex128" else n).astype(storage(dtype))
    x = on(a, device, strided=True)
    for name in ("fftshift", "ifftshift"):
        out = getattr(xp.fft, name)(x, axes=axes)
        assert out.dtype == getattr(xp, dtype)
        np.testing.assert_array_equal(host(out), getattr(np.fft, name)(a, axes=axes))
    np.testing.assert_array_equal(host(xp.fft.ifftshift(xp.fft.fftshift(x, axes=axes), axes=axes)), a)
    with pytest.raises(IndexError):
        xp.fft.fftshift(x, axes=len(shape))
