"""The nn plugin's GPU paths: the vendor library (cuDNN / MIOpen) and the own kernels, each
against the cpu device's results, and indices checked on the device; the pointwise functions
(rows of the elementwise plugin) against the cpu's, and fused with the operations before them.

``ROCM_ARRAY_NN_VENDOR=0`` forces the own kernels; both settings run here. Skipped
without a GPU.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import rocm_array as xp
from helpers import host, storage
from rocm_array import devices, fusion
from rocm_array.runtime import vendor
from rocm_array_plugins.elementwise import deferred
from rocm_array_plugins.nn import gpu as nn_gpu
from rocm_array_plugins.nn.front_pool import PoolSpec

GPUS = [str(d) for d in devices.gpus()]
pytestmark = pytest.mark.skipif(not GPUS, reason="no GPU")
TOL = {"float16": 2e-3, "bfloat16": 2e-2, "float32": 1e-5, "float64": 1e-12}


@pytest.fixture(params=["vendor", "own"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "vendor":  # without the library the "vendor" path is the own kernels again
        why = vendor.why("dnn", devices.parse(GPUS[0]).runtime)
        if why:
            pytest.skip(f"no vendor path to test: {why}")
    monkeypatch.setenv("ROCM_ARRAY_NN_VENDOR", "1" if request.param == "vendor" else "0")
    return request.param


def pair(a: np.ndarray, dtype: str) -> tuple[xp.Array, xp.Array]:
    a = a.astype(storage(dtype))
    return xp.asarray(a, device="cpu"), xp.asarray(a, device=GPUS[0])


def agree(gpu: xp.Array, cpu: xp.Array, dtype: str, scale: float = 1.0) -> None:
    g, c = host(gpu).astype(np.float64), host(cpu).astype(np.float64)
    assert gpu.dtype == cpu.dtype and g.shape == c.shape
    big = max(1.0, np.abs(c[np.isfinite(c)]).max(initial=0))  # NaN and inf must match exactly
    np.testing.assert_allclose(g, c, rtol=TOL[dtype], atol=TOL[dtype] * scale * big)


def test_vendor_library_loads_where_expected() -> None:
    rt = devices.parse(GPUS[0]).runtime
    why = vendor.why("dnn", rt)
    if rt.platform == "sim":
        assert "no vendor library" in why
        return
    if why:  # a GPU without the library installed: said, not passed
        pytest.skip(why)
    assert vendor.library("dnn", rt).name == {"nvidia": "cuDNN", "amd": "MIOpen"}[rt.platform]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("xs, ws, opts", [
    ((2, 16, 14, 14), (32, 16, 3, 3), dict(padding=1)),
    ((1, 8, 13, 11), (8, 2, 3, 3), dict(stride=2, padding=(1, 0), dilation=(1, 2), groups=4)),
])
def test_conv2d_paths(path: str, dtype: str, xs, ws, opts) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(0)
    (xc, xg), (wc, wg) = pair(rng.uniform(-1, 1, xs), dtype), pair(rng.uniform(-1, 1, ws), dtype)
    agree(xp.nn.conv2d(xg, wg, **opts), xp.nn.conv2d(xc, wc, **opts), dtype, scale=10)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_conv_transposed_and_1d_paths(path: str, dtype: str) -> None:
    rng = np.random.default_rng(1)
    (xc, xg), (wc, wg) = pair(rng.uniform(-1, 1, (2, 8, 7, 9)), dtype), pair(rng.uniform(-1, 1, (8, 3, 3, 3)), dtype)
    opts = dict(stride=2, padding=1, output_padding=1, groups=2)
    agree(xp.nn.conv_transpose2d(xg, wg, **opts), xp.nn.conv_transpose2d(xc, wc, **opts), dtype, scale=10)
    (ac, ag), (vc, vg) = pair(rng.uniform(-1, 1, (3, 4, 50)), dtype), pair(rng.uniform(-1, 1, (6, 4, 5)), dtype)
    agree(xp.nn.conv1d(ag, vg, padding=2), xp.nn.conv1d(ac, vc, padding=2), dtype, scale=10)
    (bc, bg), (uc, ug) = pair(rng.uniform(-1, 1, (3, 6, 20)), dtype), pair(rng.uniform(-1, 1, (6, 2, 4)), dtype)
    agree(xp.nn.conv_transpose1d(bg, ug, stride=3), xp.nn.conv_transpose1d(bc, uc, stride=3), dtype, scale=10)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("fn, args", [("max_pool2d", (2,)), ("avg_pool2d", (3, 2, 1)), ("max_pool2d", (3, 1, 1))])
def test_pool_paths(path: str, dtype: str, fn: str, args: tuple[int, ...]) -> None:
    xc, xg = pair(np.random.default_rng(2).uniform(-1, 1, (4, 8, 17, 16)), dtype)
    agree(getattr(xp.nn, fn)(xg, *args), getattr(xp.nn, fn)(xc, *args), dtype)


def held(dtype: str, vector: bool = True) -> int:
    """The longest row a block of the row kernels holds in registers (read once)."""
    size = storage(dtype).itemsize
    v = 16 // size if vector else 1
    return nn_gpu.ROWS_BLOCK * nn_gpu.held_loads(devices.parse(GPUS[0]), size, v) * v


def offset_view(a: np.ndarray, dtype: str, offset: int) -> xp.Array:
    """``a`` on the GPU as a contiguous view starting ``offset`` elements into its buffer."""
    flat = np.concatenate([np.zeros(offset), a.ravel()]).astype(storage(dtype))
    return xp.reshape(xp.asarray(flat, device=GPUS[0])[offset:], a.shape)


# dtype -> (rows, n); "vector": 16-byte loads, "scalar": rows not a multiple of them; "short", "tiny": rows
# per wave (down to one thread each), some past the end; "long": rows beyond what a block holds (one more
# read per pass); "offset": a misaligned start.
ROW_CASES = {"vector": lambda d: (5, 4096), "scalar": lambda d: (4, 1001), "short": lambda d: (13, 40),
             "tiny": lambda d: (300, 8),
             "long": lambda d: (2, held(d) + 64),
             "long scalar": lambda d: (2, held(d, False) + 1), "offset": lambda d: (3, 1024)}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("case", ROW_CASES)
def test_row_kernel_paths(dtype: str, case: str) -> None:
    """softmax, log_softmax and the norms on each path of the row kernels, with -inf and NaN rows."""
    rows, n = ROW_CASES[case](dtype)
    rng = np.random.default_rng(4)
    a = rng.uniform(-20, 20, (rows, n))
    a[0, ::3] = -np.inf  # masked entries: zeros in softmax
    a[1, :] = -np.inf  # a row of -inf only: NaN, as exp(-inf - -inf)
    if rows > 2:
        a[2, n // 2] = np.nan  # NaN spreads over its row only
    xc, xg = pair(a, dtype)
    if case == "offset":
        xg = offset_view(a, dtype, 1)
    vector = 16 // storage(dtype).itemsize
    scalar = case in ("scalar", "long scalar", "offset")
    assert nn_gpu._row_width(xg, ()) == (1 if scalar else vector)
    agree(xp.nn.softmax(xg), xp.nn.softmax(xc), dtype)
    agree(xp.nn.log_softmax(xg), xp.nn.log_softmax(xc), dtype, scale=10)
    b = rng.uniform(-2, 2, (rows, n))
    (bc, bg), (wc, wg) = pair(b, dtype), pair(rng.uniform(0.5, 2, n), dtype)
    uc, ug = pair(rng.uniform(-1, 1, n), dtype)
    if case == "offset":  # an aligned input with a misaligned weight takes the scalar loads too
        bg, wg = offset_view(b, dtype, vector), offset_view(rng.uniform(0.5, 2, n), dtype, 1)
        wc = xp.asarray(host(wg), device="cpu")
        assert nn_gpu._row_width(bg, (wg,)) == 1
    agree(xp.nn.layer_norm(bg, n, wg, ug), xp.nn.layer_norm(bc, n, wc, uc), dtype, scale=10)
    agree(xp.nn.rms_norm(bg, n, wg), xp.nn.rms_norm(bc, n, wc), dtype, scale=10)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_large_rows(dtype: str) -> None:
    """Many rows (grid-striding blocks), softmax over a leading axis (moved last by the front)."""
    xc, xg = pair(np.random.default_rng(3).uniform(-20, 20, (64, 20000)), dtype)
    agree(xp.nn.softmax(xg), xp.nn.softmax(xc), dtype)
    agree(xp.nn.log_softmax(xg, axis=0), xp.nn.log_softmax(xc, axis=0), dtype, scale=10)
    agree(xp.nn.layer_norm(xg, 20000), xp.nn.layer_norm(xc, 20000), dtype, scale=10)
    yc, yg = pair(np.random.default_rng(5).uniform(-5, 5, (40000, 3)), dtype)
    agree(xp.nn.softmax(yg), xp.nn.softmax(yc), dtype)


# (shape, kernel_size, stride, padding) -> the vector width pool2d_tiled takes for 2-, 4- and 8-byte floats
# (0: the general kernel).
TILED_CASES = [
    (((2, 3, 8, 32), 2, None, 0), (8, 4, 2)),
    (((2, 3, 9, 24), 3, None, 0), (8, 4, 2)),  # a row left over
    (((1, 2, 7, 20), 3, None, 0), (2, 2, 2)),  # rows and columns left over
    (((3, 8, 12), 2, None, 0), (2, 2, 2)),  # 3-D input
    (((1, 3, 6, 10), 2, None, 0), (0, 0, 0)),  # an odd output width
    (((1, 2, 8, 17), 2, None, 0), (0, 0, 0)),  # an odd input width
    (((1, 2, 8, 16), 2, 1, 0), (0, 0, 0)),  # overlapping windows
    (((1, 2, 8, 16), 2, None, 1), (0, 0, 0)),  # padding
    (((1, 2, 8, 16), 4, None, 0), (0, 0, 0)),  # a window it is not built for
    (((1, 2, 8, 16), (2, 1), None, 0), (0, 0, 0)),  # a rectangular window
]


@pytest.mark.parametrize("is_max", [True, False])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("case, widths", TILED_CASES)
def test_pool_tiled_and_general(path, dtype, is_max, case, widths) -> None:  # type: ignore[no-untyped-def]
    shape, k, s, p = case
    a = np.random.default_rng(6).uniform(-1, 1, shape)
    a[..., 0, :] = np.nan  # NaN in every lane position of the vectors: pooling propagates it
    xc, xg = pair(a, dtype)
    fn = xp.nn.max_pool2d if is_max else xp.nn.avg_pool2d
    y = fn(xg, k, s, p)
    agree(y, fn(xc, k, s, p), dtype)
    finite = np.isfinite(host(y).astype(np.float64))
    assert finite.any() and not finite.all()  # (all NaN would agree with anything NaN)
    kh, kw = (k, k) if isinstance(k, int) else k
    sh, sw = (kh, kw) if s is None else (s, s)
    *lead, h, w = shape
    spec = PoolSpec(int(np.prod(lead)), h, w, *y.shape[-2:], kh, kw, sh, sw, p, p)
    v = nn_gpu._tiled_width(spec, xg, y)
    assert v == widths[{2: 0, 4: 1, 8: 2}[storage(dtype).itemsize]]


def test_pool_tiled_needs_aligned_input(path: str) -> None:
    """A contiguous input starting off a vector boundary takes narrower vectors, or the general kernel."""
    a = np.random.default_rng(7).uniform(-1, 1, (2, 3, 8, 32))
    spec = PoolSpec(6, 8, 32, 4, 16, 2, 2, 2, 2, 0, 0)
    for offset, width in ((0, 4), (2, 2), (1, 0)):
        xg = offset_view(a, "float32", offset)
        y = xp.nn.max_pool2d(xg, 2)
        agree(y, xp.nn.max_pool2d(xp.asarray(a.astype(np.float32), device="cpu"), 2), "float32")
        assert nn_gpu._tiled_width(spec, xg, y) == width


def test_index_errors_are_found_on_the_device() -> None:
    x = xp.zeros((1000, 8), dtype=xp.float32, device=GPUS[0])
    idx = np.zeros((1000, 8), np.int64)
    idx[777, 3] = 1000
    with pytest.raises(IndexError, match="index 1000 is out of range for a dimension of size 1000"):
        xp.nn.gather(x, 0, xp.asarray(idx, device=GPUS[0]))
    with pytest.raises(IndexError):
        xp.nn.scatter_add(x, 0, xp.asarray(idx, device=GPUS[0]), x)
    ok = xp.nn.gather(x, 0, xp.asarray(np.minimum(idx, 999), device=GPUS[0]))  # the device is still usable
    assert host(ok).shape == (1000, 8)


# -- the pointwise functions: rows of the elementwise plugin ------------------------------------------------
POINTWISE = {
    "relu": lambda x: xp.nn.relu(x), "gelu": lambda x: xp.nn.gelu(x),
    "gelu_tanh": lambda x: xp.nn.gelu(x, approximate="tanh"), "silu": lambda x: xp.nn.silu(x),
    "sigmoid": lambda x: xp.nn.sigmoid(x), "elu": lambda x: xp.nn.elu(x, alpha=0.7),
    "affine": lambda x: xp.nn.affine(x, 0.1, 0.3), "powf": lambda x: xp.nn.powf(x, 1 / 3),
}
FLOATS = ["float16", "bfloat16", "float32", "float64"]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", POINTWISE)
@pytest.mark.parametrize("layout", ["contiguous", "strided"])
def test_pointwise_functions_agree_with_cpu(name: str, dtype: str, layout: str) -> None:
    """Every value kind (NaN, infinities, signed zeros, large), parameters no 16-bit float holds."""
    rng = np.random.default_rng(5)
    a = np.concatenate([rng.uniform(-6, 6, 1021), [np.nan, np.inf, -np.inf, -0.0, 0.0, 50.0, -50.0]])
    if layout == "strided":  # every other element of an array twice as long
        (xc, xg) = (x[::2] for x in pair(np.repeat(a, 2), dtype))
    else:
        xc, xg = pair(a, dtype)
    agree(POINTWISE[name](xg), POINTWISE[name](xc), dtype)



@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["silu", "gelu_tanh", "elu", "affine", "powf"])
def test_a_pointwise_function_of_an_expression_is_one_fused_kernel(fusing: None, name: str, dtype: str) -> None:
    """nn.silu(x * 2) is one deferred expression of both operations, computed by one generated
    kernel (the multiply never runs alone), with the eager kernels' bits; the rows with parameters
    too (the generated struct holds them)."""
    a = np.random.default_rng(6).uniform(-3, 3, 10007).astype(storage(dtype))  # (odd: vectors and a tail)
    x = xp.asarray(a, device=GPUS[0])
    with fusion.eager():
        eager = host(POINTWISE[name](x * 2))
    t = x * 2
    y = POINTWISE[name](t)
    node = y._buf.node
    assert isinstance(y._buf, deferred.Pending) and node.count == 2 and node.args[0].args[0] is x  # (t within)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (a generated kernel that does not compile would fall back, saying so)
        got = host(y)
    assert (y.device.runtime, node.key) in deferred._READY and t._buf._real is None
    assert np.array_equal(got.view(np.uint8), eager.view(np.uint8))
