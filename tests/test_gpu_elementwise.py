"""The elementwise plugin's GPU launch path on a real device (skipped where there is none):
layouts (contiguous with unaligned starts and vector tails, strided, broadcast, negative
strides, more dimensions than a kernel takes), Python scalars passed by value, in-place
results written to the left operand, 64-bit indexing, device checks, and the indexing,
where and creation backs. The device-parametrized tests check every function's values."""

from __future__ import annotations

import numpy as np
import pytest

import rocm_array as xp
from helpers import host
from rocm_array import devices
from rocm_array.fusion import eager as fusion_off
from rocm_array_plugins.elementwise import gpu

GPUS = devices.gpus()
pytestmark = pytest.mark.skipif(not GPUS, reason="no GPU: " + "; ".join(devices.gpu_problems()))


@pytest.fixture(scope="module")
def dev() -> str:
    return str(GPUS[0])


def _rand(shape: tuple[int, ...], dtype: str = "float32", seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-3, 3, shape).astype(dtype)


@pytest.mark.parametrize("n", [1, 3, 4, 5, 17, 1000, 4099])
@pytest.mark.parametrize("start", [0, 1, 3])
def test_contiguous_unaligned_starts_and_tails(dev: str, n: int, start: int) -> None:
    a, b = _rand((n + start,), seed=1), _rand((n + start,), seed=2)
    x, y = xp.asarray(a, device=dev), xp.asarray(b, device=dev)
    np.testing.assert_array_equal(host(x[start:] * y[start:]), a[start:] * b[start:])
    np.testing.assert_array_equal(host(x[start:] < y[:n]), a[start:] < b[:n])
    np.testing.assert_array_equal(host(xp.negative(x[start:])), -a[start:])


@pytest.mark.parametrize("dtype", ["int8", "uint16", "float16", "float64", "complex128", "bool"])
def test_every_itemsize_through_the_vector_path(dev: str, dtype: str) -> None:
    v = np.floor(_rand((1031,), seed=3) * 20)
    # Both truth values, and imaginary parts: an all-True input or a real-only compare would pass.
    a = ((v % 2 == 1) if dtype == "bool" else v + 1j * (v % 3) if dtype == "complex128" else v).astype(dtype)
    x = xp.asarray(a, device=dev)
    want = a == a[::-1]
    np.testing.assert_array_equal(host(xp.equal(x, xp.flip(x))), want)
    np.testing.assert_array_equal(host(xp.equal(x, x)), np.ones_like(want))


def test_strided_broadcast_and_negative_strides(dev: str) -> None:
    a, b = _rand((6, 5, 4), seed=4), _rand((5, 1), seed=5)
    x, y = xp.asarray(a, device=dev), xp.asarray(b, device=dev)
    np.testing.assert_allclose(host(x[::-2, :, 1::2] - y), a[::-2, :, 1::2] - b)
    np.testing.assert_allclose(host(xp.permute_dims(x, (2, 0, 1)) + 1.5), np.transpose(a, (2, 0, 1)) + 1.5)
    np.testing.assert_allclose(host(xp.exp(x.mT)), np.exp(np.swapaxes(a, -1, -2)), rtol=1e-6)


@pytest.mark.parametrize(("dtype", "cols"), [("float32", 128), ("float64", 6), ("int8", 48), ("complex128", 3),
                                             ("float16", 24), ("float32", 5)])
def test_a_matrix_and_a_row_or_column_take_the_rows_layout(dev: str, dtype: str, cols: int,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A row-major matrix with a row or a column broadcast runs binary_rows (16-byte accesses, no
    index division) where every vector fits (columns a multiple of its width, pointers aligned),
    else binary_strided; both give NumPy's values, also when more rows than the grid holds loop.
    (Each case's plan is made anew, so its layout is chosen: ``_STRIDED`` is emptied first.)"""
    launched: list[str] = []  # the layouts whose kernels were looked up
    names = gpu.ufunc_names
    monkeypatch.setattr(gpu, "ufunc_names", lambda fn, dtype, layout: (launched.append(layout),
                                                                       names(fn, dtype, layout))[1])
    rows = 1000  # more than twice the grid's rows (a GPU's: its CUs x 32 / blocks across): the loop runs
    def values(shape: tuple[int, ...], seed: int) -> np.ndarray:
        v = _rand(shape, seed=seed) * 9
        return (v + 1j * _rand(shape, seed=seed + 10) if dtype == "complex128" else v).astype(dtype)

    m, row, col = (values(shape, k) for k, shape in enumerate([(rows, cols), (cols,), (rows, 1)]))
    x, r, c = (xp.asarray(v, device=dev) for v in (m, row, col))
    width = 16 // max(np.dtype(dtype).itemsize, 1)
    rows_ok = cols % width == 0
    cases = [(lambda: x + r, m + row), (lambda: r * x, row * m), (lambda: c - x, col - m),
             (lambda: xp.multiply(x, c), m * col)]
    if dtype != "complex128":
        cases.append((lambda: xp.less(x, r), m < row))  # a bool result: the vector is the wider type's
    with fusion_off():
        for run, want in cases:
            launched.clear()
            gpu._STRIDED.clear()
            got = run()
            assert launched[-1:] == ["rows" if rows_ok else "strided"], launched
            np.testing.assert_allclose(host(got).astype(np.complex128), want.astype(np.complex128), rtol=1e-3)
        # A matrix one element past a 16-byte boundary: the strided kernel, unless an element is 16 bytes.
        shifted = xp.reshape(xp.asarray(np.concatenate([m.ravel()[:1], m.ravel()]), device=dev)[1:], (rows, cols))
        launched.clear()
        gpu._STRIDED.clear()
        got = shifted + r
        assert launched[-1:] == ["rows" if rows_ok and np.dtype(dtype).itemsize >= 16 else "strided"], launched
        np.testing.assert_allclose(host(got).astype(np.complex128), (m + row).astype(np.complex128), rtol=1e-3)


def test_a_repeated_strided_op_runs_its_plan(dev: str) -> None:
    """An op over operands not all contiguous is planned at its first call for its operands' kind
    (``_StridedPlan``: binary_rows, binary_tiles or the strided kernel): later calls over other arrays
    of the kind, with their own scalar or parameter, give NumPy's values through the one plan; a plan
    that reads vectors serves no operand off a 16-byte boundary."""
    a, b = _rand((64, 96), seed=11), _rand((64, 96), seed=12)
    elu = gpu.ROWS[[r.name for r in gpu.ROWS].index("elu")]
    r_row = _rand((48,), seed=13)
    cases = [(lambda v, k: v[1:-1, 2:] + v[1:-1, :-2] * k, lambda r, k: r[1:-1, 2:] + r[1:-1, :-2] * k, 2),
             (lambda v, k: v.T + k, lambda r, k: r.T + k, 1),  # (binary_tiles)
             (lambda v, k: v[:, ::2] - xp.asarray(r_row * k, device=dev), lambda r, k: r[:, ::2] - r_row * k, 1),
             (lambda v, k: elu(v[::3], k), lambda r, k: np.where(r[::3] > 0, r[::3], k * np.expm1(r[::3])), 1)]
    with fusion_off():
        for f, want, plans in cases:  # (plans: the case's ops over operands not all contiguous)
            gpu._STRIDED.clear()
            for v, k in ((a, 0.5), (b, 2.0), (a, -1.5)):
                np.testing.assert_allclose(host(f(xp.asarray(v, device=dev), k)), want(v, k), rtol=1e-6, atol=1e-6)
            assert len(gpu._STRIDED) == plans
        # binary_rows's plan (a matrix and a row, 16-byte accesses), then a matrix of that kind one
        # element past a 16-byte boundary: the strided kernel's plan replaces it.
        m, row = xp.asarray(a, device=dev), xp.asarray(r_row[:32].repeat(3), device=dev)
        gpu._STRIDED.clear()
        np.testing.assert_allclose(host(m + row), a + r_row[:32].repeat(3), rtol=1e-6)
        (plan,) = gpu._STRIDED.values()
        assert plan.aligned == (0, 1, 2)  # (the result, the matrix and the row: read as vectors)
        shifted = xp.reshape(xp.asarray(np.concatenate([a.ravel()[:1], a.ravel()]), device=dev)[1:], a.shape)
        np.testing.assert_allclose(host(shifted + row), a + r_row[:32].repeat(3), rtol=1e-6)
        (plan,) = gpu._STRIDED.values()
        assert plan.aligned == ()


def test_more_dimensions_than_a_kernel_takes(dev: str) -> None:
    a = _rand((2,) * 11, seed=6)
    order = tuple(range(10, -1, -1))
    x = xp.permute_dims(xp.asarray(a, device=dev), order)  # no two dimensions merge
    np.testing.assert_allclose(host(x * x), np.transpose(a, order) ** 2)
    np.testing.assert_allclose(host(xp.sqrt(xp.abs(x))), np.sqrt(np.abs(np.transpose(a, order))), rtol=1e-6)


@pytest.mark.parametrize(("value", "dtype"), [(2, "int16"), (2.5, "float32"), (0.1, "float16"),
                                              (1 + 2j, "complex64"), (True, "bool"), (3, "uint64")])
def test_python_scalars_by_value_on_either_side(dev: str, value, dtype: str) -> None:
    a = (_rand((7, 3), seed=7) * 4).astype(dtype)
    x = xp.asarray(a, device=dev)
    fn = xp.logical_xor if dtype == "bool" else xp.add
    ref = np.logical_xor if dtype == "bool" else np.add
    for got, want in ((fn(x, value), ref(a, np.asarray(value, dtype))), (fn(value, x.T), ref(np.asarray(value, dtype), a.T))):
        np.testing.assert_allclose(host(got).astype(np.complex128), want.astype(np.complex128), rtol=1e-3)


def test_second_calls_through_the_lanes_match_the_first(dev: str) -> None:
    a = np.arange(-6, 6, dtype=np.int8)
    x = xp.asarray(a, device=dev)
    z = xp.asarray(np.asarray([1 + 2j, -3j], np.complex64), device=dev)
    s = xp.asarray(np.float32(1.5), device=dev)
    for _ in range(2):  # the first call of each kind makes its lane, the second takes it
        np.testing.assert_array_equal(host(x[3:] * x[:-3]), a[3:] * a[:-3])
        np.testing.assert_array_equal(host(100 - x[1:]), 100 - a[1:])
        np.testing.assert_array_equal(host(x // 4), a // 4)
        np.testing.assert_array_equal(host(x < -x), a < -a)
        np.testing.assert_allclose(host(xp.abs(z)), np.abs([1 + 2j, -3j]), rtol=1e-6)
        assert float(s * s) == 2.25
        assert (x[:0] + x[:0]).shape == (0,)
        with pytest.raises(OverflowError):
            x + 128


def test_complex_scalar_promotes_a_real_array(dev: str) -> None:
    a = _rand((5,), seed=8)
    got = xp.multiply(xp.asarray(a, device=dev), 2j)
    assert got.dtype == xp.complex64
    np.testing.assert_allclose(host(got), a * 2j)


def test_operands_across_the_output_layout_are_read_through_tiles_or_a_copy(dev: str,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """An operand across a row-major result (a transpose) is read through binary_tiles' shared-memory
    tiles by a binary function, whatever its size (tails, negative strides, both operands, a scalar,
    in place); a unary function past ACROSS_MIN reads a transposed copy."""
    monkeypatch.setattr(gpu, "ACROSS_MIN", 1 << 12)  # (the real threshold is hundreds of MiB)
    launched: list[str] = []  # the layouts whose kernels were looked up
    names = gpu.ufunc_names
    monkeypatch.setattr(gpu, "ufunc_names", lambda fn, dtype, layout: (launched.append(layout),
                                                                       names(fn, dtype, layout))[1])
    a, b = _rand((300, 400), seed=11), _rand((400, 300), seed=12)
    x, y = xp.asarray(a, device=dev), xp.asarray(b, device=dev)
    cases = [(lambda: x.T + y, a.T + b), (lambda: y - x.T, b - a.T),
             (lambda: x.T[::-1, 1:] * y[::-1, 1:], a.T[::-1, 1:] * b[::-1, 1:]),
             (lambda: xp.maximum(x.T, x.T), a.T), (lambda: x.T + 2.5, a.T + np.float32(2.5)),
             (lambda: 3 - x.T, np.float32(3) - a.T)]
    with fusion_off():
        for run, want in cases:
            launched.clear()
            gpu._STRIDED.clear()
            got = run()
            assert launched[-1:] == ["tiles"], launched
            np.testing.assert_array_equal(host(got), want)
        launched.clear()
        y += x.T  # in place: into the left operand's buffer
        assert launched[-1:] == ["tiles"], launched
        np.testing.assert_array_equal(host(y), b + a.T)
        np.testing.assert_allclose(host(xp.exp(x.T)), np.exp(a.T), rtol=1e-6)  # (a unary one: a copy first)


def test_inplace_writes_into_the_left_operand(dev: str) -> None:
    a, b = _rand((8, 6), seed=9), _rand((6,), seed=10)
    x = xp.asarray(a, device=dev)
    before = x._buf.ptr
    x += xp.asarray(b, device=dev)
    x *= 2
    assert x._buf.ptr == before
    np.testing.assert_allclose(host(x), (a + b) * 2, rtol=1e-6)
    view = x[::2, 1:]
    view -= 1.0
    want = (a + b) * 2
    want[::2, 1:] -= 1.0
    np.testing.assert_allclose(host(x), want, rtol=1e-6)


def test_inplace_with_an_overlapping_operand_reads_the_old_values(dev: str) -> None:
    a = np.arange(10, dtype=np.int32)
    x = xp.asarray(a, device=dev)
    x[1:] += x[:-1]
    a[1:] += a[:-1].copy()
    np.testing.assert_array_equal(host(x), a)


def test_inplace_errors(dev: str) -> None:
    x = xp.ones(4, dtype=xp.int32, device=dev)
    with pytest.raises(TypeError):
        x /= 2  # would become float
    with pytest.raises(ValueError):
        x += xp.ones((2, 4), dtype=xp.int32, device=dev)


def test_arrays_on_different_devices_are_a_value_error(dev: str) -> None:
    g = xp.ones(3, device=dev)
    c = xp.ones(3, device="cpu")
    for call in (lambda: xp.add(g, c), lambda: xp.add(c, g), lambda: xp.where(g > 0, g, c),
                 lambda: xp.asarray([g, c]), lambda: xp.broadcast_arrays(g, c),
                 lambda: xp.repeat(g, xp.asarray([1, 2, 1], device="cpu"))):
        with pytest.raises(ValueError, match="different devices"):  # (the last three had mixed them silently)
            call()
    assert xp.asarray([c, c]).device == c.device and xp.asarray([g, g]).device == g.device
    assert xp.asarray([g, c], device="cpu").device == c.device  # a device named: the copy is asked for


def test_64_bit_indexing(dev: str) -> None:
    n = 2**31 + 37
    if GPUS[0].runtime.properties.total_memory < 8 * n:
        pytest.skip("not enough device memory")
    x = xp.ones(n, dtype=xp.uint8, device=dev)
    y = x + x
    tail = host(y[-40:])
    assert tail.tolist() == [2] * 40
    z = xp.multiply(x[1:], 3)  # unaligned and strided-free, past 2^31
    assert host(z[-3:]).tolist() == [3, 3, 3]
    assert int(xp.where(x[::2] > 0, x[::2], 0)[-1]) == 1
    del x, y, z


def test_kernels_are_resolved_once(dev: str) -> None:
    x = xp.ones(16, device=dev)
    kernels = x.device.runtime._kernels
    x + x
    x[::2] + x[1::2]
    cached = dict(kernels)
    for _ in range(5):
        x + x
        x[::2] + x[1::2]
    assert kernels == cached


# -- where, creation, indexing --------------------------------------------------------------------
def test_where_layouts(dev: str) -> None:
    a, b = _rand((4, 6), seed=11), _rand((6,), seed=12)
    c = a > 0
    cx, ax, bx = (xp.asarray(v, device=dev) for v in (c, a, b))
    np.testing.assert_array_equal(host(xp.where(cx, ax, bx)), np.where(c, a, b))
    np.testing.assert_array_equal(host(xp.where(cx.T, ax.T, 0.5)), np.where(c.T, a.T, np.float32(0.5)))
    np.testing.assert_array_equal(host(xp.where(cx, ax, xp.asarray(b, dtype=xp.float64, device=dev))),
                                  np.where(c, a, b.astype(np.float64)))
    # Planned at a kind's first call (``_WHERE``): later calls over other arrays of the kind, and other
    # scalars, give NumPy's values through the one plan; an operand of more dimensions than a kernel
    # takes, merged, is read through a contiguous copy (no plan kept).
    gpu._WHERE.clear()
    for v, k in ((a, 0.5), (-a, 2.0)):
        x = xp.asarray(v, device=dev)
        np.testing.assert_array_equal(host(xp.where(x > 0, x, k)), np.where(v > 0, v, np.float32(k)))
        np.testing.assert_array_equal(host(xp.where(x.T > 0, x.T, xp.asarray(b[:, None], device=dev))),
                                      np.where(v.T > 0, v.T, b[:, None]))
    assert len(gpu._WHERE) == 2
    deep = _rand((2,) * 10, seed=14)
    order = tuple(range(9, -1, -1))
    d = xp.permute_dims(xp.asarray(deep, device=dev), order)
    np.testing.assert_array_equal(host(xp.where(d > 0.5, d, -1.0)), np.where(deep.transpose(order) > 0.5,
                                                                           deep.transpose(order), np.float32(-1.0)))
    assert len(gpu._WHERE) == 2


def test_creation(dev: str) -> None:
    np.testing.assert_array_equal(host(xp.arange(-5, 40, 3, device=dev)), np.arange(-5, 40, 3))
    np.testing.assert_array_equal(host(xp.arange(250, dtype=xp.uint8, device=dev)), np.arange(250, dtype=np.uint8))
    np.testing.assert_allclose(host(xp.arange(0.5, 3.0, 0.25, dtype=xp.float32, device=dev)),
                               np.arange(0.5, 3.0, 0.25, dtype=np.float32))
    np.testing.assert_allclose(host(xp.linspace(0, 1, 11, device=dev)), np.linspace(0, 1, 11))
    np.testing.assert_allclose(host(xp.linspace(1j, 2 + 3j, 5, device=dev)), np.linspace(1j, 2 + 3j, 5))
    np.testing.assert_array_equal(host(xp.eye(4, 5, k=1, device=dev)), np.eye(4, 5, k=1))
    a = _rand((2, 5, 4), seed=13)
    x = xp.asarray(a, device=dev)
    for k in (-2, 0, 1, 10, -10):
        np.testing.assert_array_equal(host(xp.tril(x, k=k)), np.tril(a, k))
        np.testing.assert_array_equal(host(xp.triu(x.mT, k=k)), np.triu(np.swapaxes(a, 1, 2), k))


def test_gather_scatter_and_masks(dev: str) -> None:
    a = _rand((5, 6, 3), seed=14)
    x = xp.asarray(a, device=dev)
    i = np.array([[0, 4], [-1, 2]])
    ix = xp.asarray(i, device=dev)
    np.testing.assert_array_equal(host(x[ix]), a[i])
    np.testing.assert_array_equal(host(x[:, ix, 1]), a[:, i, 1])
    np.testing.assert_array_equal(host(xp.take(x, xp.asarray([2, 0], device=dev), axis=1)), np.take(a, [2, 0], axis=1))
    m = a[..., 0] > 0
    mx = xp.asarray(m, device=dev)
    np.testing.assert_array_equal(host(x[mx]), a[m])
    big = np.random.default_rng(15).random(100_003) > 0.3  # several blocks of the mask kernels
    np.testing.assert_array_equal(host(xp.asarray(np.arange(100_003), device=dev)[xp.asarray(big, device=dev)]),
                                  np.arange(100_003)[big])
    y = xp.asarray(a, device=dev)
    y[ix] = 7.0
    b = a.copy()
    b[i] = 7.0
    np.testing.assert_array_equal(host(y), b)
    y[mx] = -1.0
    b[m] = -1.0
    np.testing.assert_array_equal(host(y), b)


def test_out_of_range_indices_raise_before_writing(dev: str) -> None:
    x = xp.asarray(np.arange(6.0), device=dev)
    with pytest.raises(IndexError, match="index 6 is out of bounds for an axis of size 6"):
        x[xp.asarray([1, 6], device=dev)]
    with pytest.raises(IndexError):
        x[xp.asarray([-7], device=dev)] = 1.0
    with pytest.raises(IndexError):
        xp.take(x, xp.asarray([0, 9], device=dev))
    np.testing.assert_array_equal(host(x), np.arange(6.0))
