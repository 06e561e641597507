"""The reduction plugin's GPU kernels at sizes and layouts the small tests do not reach.

Each case picks the kernel path it exercises: two-pass cut rows and columns,
vector and scalar loads, misaligned views, multi-tile scans, radix sorts of many
tiles and of many rows, unique and nonzero beyond one block. The tests of
test_reduction_statistical / _searching / _sorting / _sets run the same
functions on every device at small sizes; these run on GPUs only.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, Callable, Iterator

import numpy as np
import pytest

import rocm_array as xp
from helpers import host, storage
from rocm_array import devices, fusion
from rocm_array_plugins.reduction import gpu as reduction_gpu, gpu_sort

GPUS = [str(d) for d in xp.__array_namespace_info__().devices() if str(d).startswith("gpu")]
pytestmark = pytest.mark.skipif(not GPUS, reason="no GPU")


@pytest.fixture(params=GPUS or ["none"])
def gpu(request: pytest.FixtureRequest) -> str:
    return request.param


def put(a: np.ndarray, gpu: str, dtype: str | None = None) -> xp.Array:
    return xp.asarray(a, dtype=getattr(xp, dtype) if dtype else None, device=gpu)


#: The simulator's block orders (ROCM_ARRAY_SIM_BLOCKS) a test runs its kernels under in turn: forward,
#: reverse, two shuffles and three interleavings of four blocks at once.
SIM_ORDERS = ["forward", "reverse", "shuffle:1", "shuffle:2", "interleave:1", "interleave:2", "interleave:3"]


@pytest.fixture
def block_orders(gpu: str) -> Iterator[Callable[[], Iterator[str]]]:
    """``for order in block_orders(): ...`` runs the loop's body once an order of SIM_ORDERS, set on
    the simulator (after the test, ROCM_ARRAY_SIM_BLOCKS' order again, which the later tests of a run
    under it keep); a GPU runs its own order, as many times ("gpu")."""
    set_blocks = getattr(devices.parse(gpu).runtime.driver, "set_blocks", None)

    def orders() -> Iterator[str]:
        for order in SIM_ORDERS:
            if set_blocks:
                set_blocks(order)
            yield order if set_blocks else "gpu"

    yield orders
    if set_blocks:
        set_blocks(os.environ.get("ROCM_ARRAY_SIM_BLOCKS", "forward"))


def test_float32_sum_is_accurate(gpu: str) -> None:
    # A sequential float32 sum of 2**26 values in [0, 1) stalls once it passes 2**24 (its error is
    # then above 10%); a tree of partial sums stays within a few float32 roundings.
    a = np.random.default_rng(0).random(2**26, dtype=np.float32)
    exact = a.astype(np.float64).sum()
    got = float(host(xp.sum(put(a, gpu))))
    assert abs(got - exact) / exact < 1e-6


@pytest.mark.parametrize("shape,axis", [((3000, 5000), 0), ((3000, 5000), 1), ((5, 300001), 1),
                                        ((300001, 5), 0), ((7, 11, 13, 17), (0, 2)), ((7, 11, 13, 17), (1, 3)),
                                        ((2**21 + 3,), None), ((64, 64, 64), (0, 1))])
@pytest.mark.parametrize("name", ["sum", "max", "mean", "var", "argmin"])
def test_layouts_and_cut_reductions(gpu: str, shape: tuple[int, ...], axis: object, name: str) -> None:
    a = np.random.default_rng(1).standard_normal(shape)
    if name == "argmin" and isinstance(axis, tuple):
        axis = axis[0]
    got = host(getattr(xp, name)(put(a, gpu), axis=axis))
    expected = getattr(np, name)(a, axis=axis)
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int32", "uint64", "float16", "bfloat16", "float32",
                                   "complex64", "bool"])
def test_dtypes_on_strided_and_misaligned_views(gpu: str, dtype: str) -> None:
    rng = np.random.default_rng(2)
    a = rng.integers(0, 3, (257, 1031)).astype(np.float64)
    if dtype.startswith("complex"):  # imaginary parts: a sum of the real parts alone must fail
        a = a + 1j * rng.integers(0, 3, a.shape)
    a = a.astype(storage(dtype))
    x = put(a, gpu)[1:, 3:][:, ::1]  # rows start off any 16-byte boundary
    ref = a[1:, 3:]
    if dtype == "bool":
        assert np.array_equal(host(xp.any(x, axis=1)), ref.any(axis=1))
        assert np.array_equal(host(xp.all(x, axis=0)), ref.all(axis=0))
        assert np.array_equal(host(xp.count_nonzero(x, axis=0)), np.count_nonzero(ref, axis=0))
        return
    wide = ref.astype(np.complex128 if dtype.startswith("complex") else np.float64)
    # (A 16-bit float sum of all 263,000 elements would overflow float16.)
    for axis in (0, 1) if dtype in ("float16", "bfloat16") else (0, 1, None):
        np.testing.assert_allclose(host(xp.sum(x, axis=axis)).astype(wide.dtype), wide.sum(axis=axis),
                                   rtol=1e-2 if dtype in ("float16", "bfloat16") else 1e-6)
    np.testing.assert_array_equal(host(xp.count_nonzero(x[::2, ::3], axis=1)),
                                  np.count_nonzero(ref[::2, ::3], axis=1))


def test_max_min_propagate_nan_and_argmax_takes_first(gpu: str) -> None:
    a = np.zeros((4, 100000), np.float32)
    a[1, 77777] = np.nan
    a[2, 5] = a[2, 99999] = 3
    a[3, 123] = np.nan
    a[3, 50] = np.nan
    x = put(a, gpu)
    assert np.array_equal(host(xp.max(x, axis=1)), np.max(a, axis=1), equal_nan=True)
    assert np.array_equal(host(xp.argmax(x, axis=1)), np.argmax(a, axis=1))
    assert np.array_equal(host(xp.argmin(x, axis=1)), np.argmin(a, axis=1))


def test_sum_dtype_argument_and_keepdims(gpu: str) -> None:
    a = np.arange(100000, dtype=np.int8).reshape(100, 1000)
    got = xp.sum(put(a, gpu), axis=1, dtype=xp.int16, keepdims=True)
    assert got.dtype == xp.int16 and got.shape == (100, 1)
    assert np.array_equal(host(got), a.sum(axis=1, dtype=np.int16, keepdims=True))


def test_a_repeated_reduction_runs_its_plan_with_its_own_options(gpu: str) -> None:
    """A reduction along rows or along columns, of one launch or two, is planned at its first call for
    its operand's kind (``_Plan``): later calls launch the plan, with their own arrays and parameter
    (var's correction), and give the first call's bits. A call that casts its operand first
    (``dtype=``) keeps no plan."""
    a = np.random.default_rng(3).standard_normal((4096, 300)).astype(np.float32)
    x = put(a, gpu)
    cases = [(lambda v: xp.sum(v, axis=-1, keepdims=True), lambda r: r.sum(axis=-1, keepdims=True)),
             (lambda v: xp.var(v, axis=1, correction=0), lambda r: r.var(axis=1, ddof=0)),
             (lambda v: xp.max(v[:, ::2], axis=1), lambda r: r[:, ::2].max(axis=1)),  # (reduce_inner_strided)
             (lambda v: xp.sum(v, axis=0), lambda r: r.sum(axis=0)),  # (columns cut: two passes)
             (lambda v: xp.min(v[:40, 1:], axis=0), lambda r: r[:40, 1:].min(axis=0))]  # (one pass, no vectors)
    for f, expected in cases:
        reduction_gpu._PLANS.clear()
        first = host(f(x))
        assert len(reduction_gpu._PLANS) == 1
        np.testing.assert_array_equal(host(f(put(a, gpu))), first)  # (another array of the same kind)
        np.testing.assert_allclose(first, expected(a.astype(np.float64)), rtol=1e-5, atol=1e-5)
    reduction_gpu._PLANS.clear()
    for correction in (0, 1):  # (one plan: each call's own correction)
        np.testing.assert_allclose(host(xp.var(x, axis=1, correction=correction)), a.astype(np.float64).var(
            axis=1, ddof=correction), rtol=1e-5)
    assert len(reduction_gpu._PLANS) == 1
    c = np.random.default_rng(6).standard_normal((3, 100003))  # (rows cut: two passes)
    y = put(c, gpu)
    reduction_gpu._PLANS.clear()
    firsts = [host(xp.var(y, axis=1, correction=correction)) for correction in (0, 1)]
    (plan,) = reduction_gpu._PLANS.values()
    assert plan.second is not None and plan.splits > 1
    for correction, first in zip((0, 1), firsts):
        np.testing.assert_allclose(first, c.var(axis=1, ddof=correction), rtol=1e-9)
        assert host(xp.var(put(c, gpu), axis=1, correction=correction)).tobytes() == first.tobytes()
    reduction_gpu._PLANS.clear()
    np.testing.assert_allclose(host(xp.sum(x, axis=1, dtype=xp.float64)), a.sum(axis=1, dtype=np.float64),
                               rtol=1e-6)
    assert not reduction_gpu._PLANS  # (x was cast first: the plan would launch on x itself)
    # Two views of one kind, the first on a 16-byte boundary (its plan reads vectors), the second not:
    # the second is not read through the first's plan.
    for start in (4, 1):
        np.testing.assert_allclose(host(xp.sum(x[:, start:start + 296], axis=0)), a[:, start:start + 296].astype(
            np.float64).sum(axis=0), rtol=1e-4, atol=1e-3)
    assert [p.vector for p in reduction_gpu._PLANS.values()] == [False]


def test_a_repeated_full_reduction_runs_its_plan(gpu: str) -> None:
    """A full reduction of one launch (reduce_all: its last block folds the blocks' partials) is
    planned too: later calls, on other arrays of the kind and with their own correction, give the
    first call's bits, call after call (each launch leaves the counter of finished blocks at zero)."""
    a = np.random.default_rng(4).standard_normal((1 << 21) + 3).astype(np.float32)
    x = put(a, gpu)
    reduction_gpu._PLANS.clear()
    first = host(xp.sum(x))
    (plan,) = reduction_gpu._PLANS.values()
    assert plan.folds and plan.splits > 1  # (reduce_all's: more than one block)
    np.testing.assert_allclose(first, a.astype(np.float64).sum(), rtol=1e-5)
    for _ in range(20):
        assert host(xp.sum(put(a, gpu))).tobytes() == first.tobytes()
    reduction_gpu._PLANS.clear()
    b = a[:(1 << 15) + 3].astype(np.float64)  # (float64, and short: the corrections differ by 3e-5)
    y = put(b, gpu)
    for correction in (0, 1, 0):  # (one plan: each call's own correction)
        np.testing.assert_allclose(host(xp.var(y, correction=correction)), b.var(ddof=correction), rtol=1e-9)
    (plan,) = reduction_gpu._PLANS.values()
    assert plan.folds and plan.splits > 1


def test_a_repeated_reduction_of_an_expression_runs_its_plan(gpu: str, fusing: None) -> None:
    """A reduction of a deferred expression is planned for the expression's kind and shape
    (``_FUSED_PLANS``): later calls, over other arrays and with their own correction, compute each
    expression in the reduction's first pass and give the first call's bits; rows in one pass, rows cut
    in two, and a full reduction of one launch."""
    rng = np.random.default_rng(5)
    cases = [((4096, 300), lambda v: xp.sum(v * 2 + 1, axis=-1), lambda r: (r * 2 + 1).sum(axis=-1)),
             ((3, 70001), lambda v: xp.max(xp.abs(v - 0.25), axis=1), lambda r: np.abs(r - 0.25).max(axis=1)),
             (((1 << 15) + 3,), lambda v: xp.var(v * v, correction=1), lambda r: (r * r).var(ddof=1))]
    for shape, f, expected in cases:
        a, b = rng.standard_normal(shape), rng.standard_normal(shape)
        reduction_gpu._FUSED_PLANS.clear()
        first = host(f(put(a, gpu)))
        assert len(reduction_gpu._FUSED_PLANS) == 1
        np.testing.assert_allclose(first, expected(a), rtol=1e-9)
        for _ in range(3):
            assert host(f(put(a, gpu))).tobytes() == first.tobytes()
        np.testing.assert_allclose(host(f(put(b, gpu))), expected(b), rtol=1e-9)  # (another array of the kind)
        assert len(reduction_gpu._FUSED_PLANS) == 1
    reduction_gpu._FUSED_PLANS.clear()
    y = put(b, gpu)
    for correction in (0, 1, 0):  # (one plan: each call's own correction; the two differ by 3e-5)
        np.testing.assert_allclose(host(xp.var(y * y, correction=correction)), (b * b).var(ddof=correction), rtol=1e-9)
    assert len(reduction_gpu._FUSED_PLANS) == 1


@pytest.mark.parametrize("shape,axis", [((3, 100003), 1), ((100003, 3), 0), ((5000,), 0), ((40, 30, 20), 1)])
def test_cumulative_multi_tile(gpu: str, shape: tuple[int, ...], axis: int) -> None:
    a = np.random.default_rng(3).integers(-5, 6, shape)
    got = xp.cumulative_sum(put(a, gpu), axis=axis, include_initial=True)
    expected = np.concatenate([np.zeros_like(a.take([0], axis=axis)), np.cumsum(a, axis=axis)], axis=axis)
    assert np.array_equal(host(got), expected)
    f = np.random.default_rng(4).uniform(0.999, 1.001, shape)
    np.testing.assert_allclose(host(xp.cumulative_prod(put(f, gpu), axis=axis)), np.cumprod(f, axis=axis),
                               rtol=1e-10)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint64", "int8", "float16"])
@pytest.mark.parametrize("descending", [False, True])
def test_radix_sort_many_tiles(gpu: str, dtype: str, descending: bool) -> None:
    rng = np.random.default_rng(5)
    a = (rng.standard_normal(300001) * 100).astype(storage(dtype)) if dtype.startswith("float") \
        else rng.integers(0, 120, 300001).astype(dtype)
    if dtype.startswith("float"):
        a[::1000] = np.nan
        a[1::997] = -0.0
    x = put(a, gpu)
    key = -a.astype(np.float64) if descending else a.astype(np.float64)
    order = np.argsort(key, kind="stable")
    assert np.array_equal(host(xp.argsort(x, descending=descending)), order)
    assert np.array_equal(host(xp.sort(x, descending=descending)), a[order], equal_nan=True)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_sort_rows_and_columns(gpu: str, axis: int) -> None:
    a = np.random.default_rng(6).integers(0, 50, (300, 700)).astype(np.float32)
    x = put(a, gpu)
    assert np.array_equal(host(xp.argsort(x, axis=axis)), np.argsort(a, axis=axis, kind="stable"))
    assert np.array_equal(host(xp.sort(x, axis=axis, descending=True)), -np.sort(-a, axis=axis))


def test_unique_nonzero_isin_searchsorted_large(gpu: str) -> None:
    rng = np.random.default_rng(7)
    a = rng.integers(0, 5000, 200003).astype(np.float64)
    a[::777] = np.nan
    x = put(a, gpu)
    values, first, inverse, counts = xp.unique_all(x)
    v, f, i, c = np.unique(a, return_index=True, return_inverse=True, return_counts=True, equal_nan=False)
    assert np.array_equal(host(values), v, equal_nan=True)
    assert np.array_equal(host(first), f) and np.array_equal(host(inverse), i) and np.array_equal(host(counts), c)
    z = (a[:200000] > 2500).reshape(400, 500)
    got = xp.nonzero(put(z, gpu))
    for g, e in zip(got, np.nonzero(z)):
        assert np.array_equal(host(g), e)
    probe = rng.integers(-10, 5100, 10000).astype(np.float64)
    assert np.array_equal(host(xp.isin(put(probe, gpu), x)), np.isin(probe, a))
    s = np.sort(a)
    for side in ("left", "right"):
        assert np.array_equal(host(xp.searchsorted(put(s, gpu), put(probe, gpu), side=side)),
                              np.searchsorted(s, probe, side=side))


@pytest.mark.parametrize("tiles, extra", [(0, 1), (0, 2), (1, -1), (1, 0), (1, 1), (2, -1), (2, 0), (2, 1), (3, 17)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int16"])
def test_radix_sort_tile_boundaries(gpu: str, dtype: str, tiles: int, extra: int) -> None:
    # Around whole onesweep tiles of the device (4096 4-byte keys or 2048 8-byte ones on NVIDIA, half
    # as many on CDNA); ties check stability across tiles.
    key = xp.uint64 if np.dtype(dtype).itemsize == 8 else xp.uint32
    n = tiles * gpu_sort.tile_size(devices.parse(gpu), key) + extra
    a = np.random.default_rng(n).integers(-20, 20, n).astype(dtype)
    x = put(a, gpu)
    for descending in (False, True):
        order = np.argsort(-a.astype(np.float64) if descending else a, kind="stable")
        assert np.array_equal(host(xp.argsort(x, descending=descending)), order)
        assert np.array_equal(host(xp.sort(x, descending=descending)), a[order])


def test_radix_sort_large_stable(gpu: str) -> None:
    rng = np.random.default_rng(8)
    a = rng.integers(0, 3000, 2**21 + 123).astype(np.float32)
    a[::4099] = np.nan
    a[1::5001] = -0.0
    x = put(a, gpu)
    for descending in (False, True):
        order = np.argsort(-a if descending else a, kind="stable")
        assert np.array_equal(host(xp.argsort(x, descending=descending)), order)
    u = rng.random(2**22, dtype=np.float32)
    assert np.array_equal(host(xp.sort(put(u, gpu))), np.sort(u))
    # 70001 rows: the row keys take three digits.
    r = rng.integers(0, 4, (70001, 3)).astype(np.int64)
    for axis in (0, 1):
        assert np.array_equal(host(xp.argsort(put(r, gpu), axis=axis)), np.argsort(r, axis=axis, kind="stable"))


# -- the full reductions whose last block folds its peers' partials (reduce_all, reduce_all_of) ------
#: Sizes about multiples of the simulator's smallest chunk (8192): 1 to 9 blocks, one short of a
#: block, one past, and a tail of a few elements.
FOLD_SIZES = [16383, 16384, 16385, 3 * 8192 + 1, 5 * 8192 - 1, 9 * 8192 + 7]
#: Each reduction with a fused form that is still a full reduction: (name, expression of x).
FOLDS: list[tuple[str, Callable[[xp.Array], xp.Array]]] = [
    ("sum", lambda x: xp.sum(x * 2 + 1)),
    ("any", lambda x: xp.any(x > 3.9)),
    ("var", lambda x: xp.var(xp.sin(x) + x, correction=1)),
    ("max", lambda x: xp.max(xp.abs(x - 0.25))),
    ("argmax", lambda x: xp.argmax(x * x + 1)),
]


@pytest.mark.parametrize("shape,axis", [((50000, 3), 1), ((3, 50000), 0), ((20000, 1), 1), ((1,), 0), ((1, 1), 0)])
def test_cumulative_short_rows(gpu: str, shape: tuple[int, ...], axis: int) -> None:
    """Many rows of a few elements (one tile each: no look-back), and a single element."""
    a = np.random.default_rng(5).integers(-5, 6, shape)
    assert np.array_equal(host(xp.cumulative_sum(put(a, gpu), axis=axis)), np.cumsum(a, axis=axis))
    f = np.random.default_rng(6).uniform(0.5, 1.5, shape)
    np.testing.assert_allclose(host(xp.cumulative_prod(put(f, gpu), axis=axis)), np.cumprod(f, axis=axis),
                               rtol=1e-12)


def _tiles(gpu: str, dtype: str, tiles: int, extra: int) -> int:
    """The length of a row of ``tiles`` full tiles of scan_tiles and ``extra`` elements (dtype: the
    accumulator's)."""
    return tiles * reduction_gpu._scan_tile(devices.parse(gpu), getattr(xp, dtype)) + extra


#: (function, input dtype, rows, tiles a row, then elements) of the look-back cases: exact integer
#: sums (int64, and int32 in rows), float64 and float32 sums, a complex128 sum, a float64 product.
LOOK_BACK_CASES = [("cumulative_sum", "int64", 1, 41, 77), ("cumulative_sum", "int32", 5, 6, 1),
                   ("cumulative_sum", "float64", 1, 37, 0), ("cumulative_sum", "float32", 3, 9, 100),
                   ("cumulative_sum", "complex128", 2, 8, 3), ("cumulative_prod", "float64", 1, 23, 5)]


def _look_back_input(dtype: str, shape: tuple[int, int], prod: bool) -> np.ndarray:
    rng = np.random.default_rng(shape[1])
    if prod:
        return rng.uniform(1 - 1e-4, 1 + 1e-4, shape)
    if dtype.startswith("int"):
        return rng.integers(-1000, 1001, shape).astype(dtype)
    a = rng.uniform(-1, 1, shape)
    return (a + 1j * rng.uniform(-1, 1, shape) if dtype.startswith("complex") else a).astype(dtype)


def _check_scan(got: np.ndarray, want: np.ndarray, dtype: str, order: str) -> None:
    if dtype.startswith("int"):
        assert np.array_equal(got, want), order
    else:
        rtol = 1e-5 if dtype == "float32" else 1e-12
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * np.abs(want).max(), err_msg=order)


def _same_scan_every_order(gpu: str, name: str, a: np.ndarray, want: np.ndarray, dtype: str,
                           block_orders: Callable[[], Iterator[str]]) -> None:
    """``name`` of ``a`` along its rows under every block order: ``want`` (``_check_scan``), and the
    same bits each time."""
    x = put(a, gpu)
    first = None
    for order in block_orders():
        got = host(getattr(xp, name)(x, axis=1))
        _check_scan(got, want, dtype, order)
        first = got if first is None else first
        assert got.tobytes() == first.tobytes(), order


@pytest.mark.parametrize("dtype", ["int64", "float64"])
def test_cumulative_whole_rows(gpu: str, dtype: str, block_orders: Callable[[], Iterator[str]]) -> None:
    """Rows of several tiles, enough of them that a block scans whole rows (no look-back), carrying each
    row's combination from tile to tile: exact integer sums, float products, the same bits every order."""
    device = devices.parse(gpu)
    rows = device.runtime.properties.compute_units * reduction_gpu._SCAN_ROWS_PER_CU + 3
    a = _look_back_input(dtype, (rows, _tiles(gpu, dtype, 3, 5)), dtype == "float64")
    name, numpy = ("cumulative_prod", np.cumprod) if dtype == "float64" else ("cumulative_sum", np.cumsum)
    want = numpy(a, axis=1)
    _same_scan_every_order(gpu, name, a, want, dtype, block_orders)


@pytest.mark.parametrize("name,dtype,rows,tiles,extra", LOOK_BACK_CASES)
def test_scan_look_back_whichever_block_order(gpu: str, name: str, dtype: str, rows: int, tiles: int, extra: int,
                                              block_orders: Callable[[], Iterator[str]]) -> None:
    """Rows of many tiles under every block order: each tile's prefix from its predecessors' published
    aggregates and windows' totals (decoupled look-back), whichever block takes which tile and runs
    when; integers exact, floats within their rounding, and the same bits under every order (the
    look-back's grouping is fixed)."""
    shape = (rows, _tiles(gpu, "int64" if dtype.startswith("int") else dtype, tiles, extra))
    a = _look_back_input(dtype, shape, name == "cumulative_prod")
    wide = np.int64 if dtype.startswith("int") else np.complex128 if "complex" in dtype else np.float64
    want = (np.cumprod if name == "cumulative_prod" else np.cumsum)(a.astype(wide), axis=1)
    _same_scan_every_order(gpu, name, a, want, dtype, block_orders)


def test_scan_look_back_groups(gpu: str, block_orders: Callable[[], Iterator[str]]) -> None:
    """A row past a group of tiles (a wave of windows of a wave of tiles each), so that tiles take the
    earlier group's total; complex128 (the smallest tile), every order, the same bits each time."""
    wave = devices.parse(gpu).runtime.properties.wave_size
    shape = (1, _tiles(gpu, "complex128", wave * wave + wave + 3, 5))
    a = _look_back_input("complex128", shape, False)
    want = np.cumsum(a, axis=1)
    _same_scan_every_order(gpu, "cumulative_sum", a, want, "complex128", block_orders)


def test_nonzero_look_back_whichever_block_order(gpu: str, block_orders: Callable[[], Iterator[str]]) -> None:
    """nonzero's positions (scan_tiles with the nonzero_index map) across 30 tiles, every order."""
    n = _tiles(gpu, "int64", 30, 11)
    z = np.random.default_rng(n).integers(0, 3, (3, n // 3)) * (np.arange(n // 3) % 7 != 0)
    x = put(z, gpu)
    for order in block_orders():
        for g, e in zip(xp.nonzero(x), np.nonzero(z)):
            assert np.array_equal(host(g), e), order


def test_scan_state_is_marked_by_each_launch(gpu: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Consecutive scans of several tiles share one state, which nothing clears between them: each
    launch takes the next mark, finds its turn's counter at zero (the launch before cleared it) and
    leaves it at the tiles (a block takes one) and the other at zero, and sets the flag of every
    tile's aggregate and every full window's total to its mark. A state that reaches the last mark
    is zeroed and starts again at 1; a longer scan grows it."""
    device = devices.parse(gpu)
    wave = device.runtime.properties.wave_size
    monkeypatch.setattr(reduction_gpu, "_SCAN_STATES", {})  # (a new state, and plans that hold it)
    monkeypatch.setattr(reduction_gpu, "_SCAN_PLANS", {})
    slot = reduction_gpu._scan_slot_bytes(xp.int64)
    at = reduction_gpu._SCAN_SLOTS_AT
    lengths = [_tiles(gpu, "int64", wave + 12, 5)] * 3 + [_tiles(gpu, "int64", 5, 0),
                                                         _tiles(gpu, "int64", 2 * wave, 1)]
    for k, n in enumerate(lengths):
        if k == 2:  # (from the third launch, a state past mark 2 starts again: marks 1, 2, 1, 2, 1)
            monkeypatch.setattr(reduction_gpu, "_SCAN_LAST_MARK", 2)
        a = np.random.default_rng(k).integers(-9, 10, n)
        assert np.array_equal(host(xp.cumulative_sum(put(a, gpu))), np.cumsum(a)), k
        state = reduction_gpu._scan_state(device, xp.int64)
        mark = state.mark
        assert mark == [1, 2, 1, 2, 1][k], k
        tiles = -(-n // reduction_gpu._scan_tile(device, xp.int64))
        raw = host(state.memory)
        counters = raw[:16].view(np.uint64)
        assert int(counters[mark & 1]) == tiles and int(counters[(mark + 1) & 1]) == 0, k
        flags = raw[at:].reshape(-1, slot)[:, 8:12].copy().view(np.uint32)[:, 0]  # (value, then its flag)
        windows = -(-tiles // wave)
        assert np.all(flags[:tiles] == mark), k
        full = tiles // wave
        assert list(flags[tiles:tiles + windows] == mark) == [True] * full + [False] * (windows - full), k
    assert len(reduction_gpu._SCAN_STATES) == 1


def _fold_cases(a: np.ndarray) -> list[np.floating | np.bool_ | np.intp]:
    """NumPy's results of FOLDS over ``a``."""
    return [np.sum(a * 2 + 1), np.any(a > 3.9), np.var(np.sin(a) + a, ddof=1), np.max(np.abs(a - 0.25)),
            np.argmax(a * a + 1)]


@pytest.mark.parametrize("fused", [False, True], ids=["reduce_all", "reduce_all_of"])
def test_a_fold_is_right_whichever_block_comes_last(gpu: str, fused: bool, request: pytest.FixtureRequest,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    block_orders: Callable[[], Iterator[str]]) -> None:
    """Every block order gives NumPy's result, the same bits each time, and leaves the counter of
    finished blocks at zero. On the simulator the blocks run forward, reversed, shuffled and four at
    once interleaved (ROCM_ARRAY_SIM_BLOCKS), so the last to finish is seldom the last index; a GPU
    runs its own order, as many times (scripts/stress_fold.py repeats it 1000 times)."""
    request.getfixturevalue("fusing")
    device = xp.asarray(0, device=gpu).device
    folded: list[int] = []  # the lengths each one-launch full reduction was queued for
    length = [0]  # (the one in hand)
    fused_: list[xp.Array | None] = []  # what each fused attempt gave (None: it ran eagerly)
    fold_all, deferred = reduction_gpu._fold_all, reduction_gpu._reduce_deferred

    def counted_fold(*a: Any) -> None:
        folded.append(length[0])
        fold_all(*a)

    def counted_deferred(*a: Any) -> xp.Array | None:
        fused_.append(deferred(*a))
        return fused_[-1]

    monkeypatch.setattr(reduction_gpu, "_fold_all", counted_fold)
    monkeypatch.setattr(reduction_gpu, "_reduce_deferred", counted_deferred)
    for n in FOLD_SIZES:
        length[0] = n
        a = np.random.default_rng(n).uniform(-4, 4, n)
        x, want = put(a, gpu), _fold_cases(a)
        first: list[np.ndarray] = []
        for order in block_orders():
            with contextlib.nullcontext() if fused else fusion.eager():
                got = [host(f(x)) for _, f in FOLDS]
            done = reduction_gpu._DONE.get(device.runtime)  # (made at the first fold: not at 16383)
            assert done is None or int(host(done)[0]) == 0, (n, order)
            for (name, _), g, w in zip(FOLDS, got, want):
                np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12, err_msg=f"{name}, n={n}, {order}")
            if first:
                assert all(same.tobytes() == g.tobytes() for same, g in zip(first, got)), (n, order)
            first = first or got
    orders = len(SIM_ORDERS)
    assert folded.count(FOLD_SIZES[-1]) == len(FOLDS) * orders  # each case one launch, not two
    assert sum(r is not None for r in fused_) == (len(FOLDS) * orders * len(FOLD_SIZES) if fused else 0)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_sorted_zeros_keep_their_signs_whichever_block_comes_last(gpu: str, dtype: str,
                                                                   block_orders: Callable[[], Iterator[str]]) -> None:
    """The value sort's tiles under every block order: zeros of both signs (keys that tie in every
    pass but the top one, sort.hip) come back in input order with their signs, as NumPy's stable
    sort gives them, across 5 tiles and a part, in both orders."""
    key = xp.uint64 if np.dtype(dtype).itemsize == 8 else xp.uint32
    n = 5 * gpu_sort.tile_size(devices.parse(gpu), key) + 77
    a = np.random.default_rng(n).choice(np.array([0.0, -0.0, -0.0, 2.0, -2.0, np.nan]), n).astype(dtype)
    x = put(a, gpu)
    for order in block_orders():
        for descending in (False, True):
            want = a[np.argsort(-a if descending else a, kind="stable")]
            got = host(xp.sort(x, descending=descending))
            assert np.array_equal(got, want, equal_nan=True), (order, descending)
            assert np.array_equal(np.signbit(got), np.signbit(want)), (order, descending)
