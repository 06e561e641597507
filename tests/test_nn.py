"""The nn plugin against NumPy references written here (float64), on every device.

Each front is checked for its values over dtypes and parameters, the layouts
(non-contiguous views, 0-D, empty) and its errors. Over a recording driver (no GPU),
that an activation of an elementwise expression is one fused kernel. On a GPU these run the
default path (the vendor library where present); test_gpu_nn.py runs the own
kernels too.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

import rocm_array as xp
from helpers import host, small_values, storage
from rocm_array import dtypes, memory
from rocm_array.devices import Device
from rocm_array.namespace import FunctionTable, PluginUnavailableError
from rocm_array.plugin_manager import assemble
from rocm_array_plugins.elementwise import fused

FLOATS = ["float16", "bfloat16", "float32", "float64"]
TOL = {"float16": 4e-3, "bfloat16": 3e-2, "float32": 2e-5, "float64": 1e-11}


def sample(shape: tuple[int, ...], dtype: str = "float64", seed: int = 0, lo: float = -2, hi: float = 2) -> np.ndarray:
    """Random values exactly representable in ``dtype`` (so references see what the device sees)."""
    return np.random.default_rng(seed).uniform(lo, hi, shape).astype(storage(dtype)).astype(np.float64)


def on(a: np.ndarray, dtype: str, device: str, *, strided: bool = False) -> xp.Array:
    """``a`` as ``dtype`` on ``device``; ``strided``: a reversed, non-contiguous view holding the same values."""
    a = np.asarray(a).astype(storage(dtype))
    if strided and a.ndim:
        return xp.asarray(np.ascontiguousarray(a[..., ::-1]), device=device)[..., ::-1]
    return xp.asarray(a, device=device)


def close(out: xp.Array, expected: np.ndarray, dtype: str, scale: float | None = None) -> None:
    assert out.dtype == getattr(xp, dtype)
    got = host(out).astype(np.float64)
    assert got.shape == expected.shape
    tol = TOL[dtype]
    big = max(1.0, float(np.max(np.abs(expected[np.isfinite(expected)]), initial=0))) if scale is None else scale
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol * big, equal_nan=True)


# -- activations, affine, powf ------------------------------------------------------------------------
ERF = np.vectorize(math.erf, otypes=[np.float64])
ACTIVATIONS = {
    "relu": (lambda x: xp.nn.relu(x), lambda a: np.where(a < 0, 0, a)),
    "gelu": (lambda x: xp.nn.gelu(x), lambda a: 0.5 * a * (1 + ERF(a / np.sqrt(2)))),
    "gelu_tanh": (lambda x: xp.nn.gelu(x, approximate="tanh"),
                  lambda a: 0.5 * a * (1 + np.tanh(np.sqrt(2 / np.pi) * (a + 0.044715 * a ** 3)))),
    "silu": (lambda x: xp.nn.silu(x), lambda a: a / (1 + np.exp(-a))),
    "sigmoid": (lambda x: xp.nn.sigmoid(x), lambda a: 1 / (1 + np.exp(-a))),
    "elu": (lambda x: xp.nn.elu(x, alpha=0.7), lambda a: np.where(a > 0, a, 0.7 * np.expm1(a))),
    "affine": (lambda x: xp.nn.affine(x, 1.5, -0.25), lambda a: a * 1.5 - 0.25),
    "powf": (lambda x: xp.nn.powf(x, 3.0), lambda a: a ** 3),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ACTIVATIONS)
@pytest.mark.parametrize("shape, strided", [((3, 17), True), ((), False), ((0, 4), False), ((1000,), False)])
def test_activations(device: str, name: str, dtype: str, shape: tuple[int, ...], strided: bool) -> None:
    fn, ref = ACTIVATIONS[name]
    a = sample(shape, dtype, 1)
    close(fn(on(a, dtype, device, strided=strided)), ref(a), dtype)


def test_activation_special_values(device: str) -> None:
    a = np.array([np.nan, -np.inf, np.inf, -0.0, 0.0, 50.0, -50.0])
    x = on(a, "float32", device)
    close(xp.nn.relu(x), np.where(a < 0, 0, a), "float32")
    close(xp.nn.sigmoid(x), 1 / (1 + np.exp(-a)), "float32")
    close(xp.nn.powf(on(np.array([2.0, 0.0, -1.0]), "float32", device), 0.5),
          np.array([np.sqrt(2), 0, np.nan]), "float32")


@pytest.mark.parametrize("call, err", [
    (lambda x, i: xp.nn.relu(i), TypeError),
    (lambda x, i: xp.nn.gelu(x, approximate="fast"), ValueError),
    (lambda x, i: xp.nn.elu(x, alpha="1"), TypeError),
    (lambda x, i: xp.nn.affine(x, True, 0.0), TypeError),
    (lambda x, i: xp.nn.powf(np.ones(3), 2.0), TypeError),
])
def test_activation_errors(device: str, call, err) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(err):
        call(on(np.ones(3), "float32", device), xp.ones(3, dtype=xp.int32, device=device))


@pytest.mark.parametrize("dtype", ["int32", "uint8", "bool", "complex64"])
@pytest.mark.parametrize("name", ACTIVATIONS)
def test_activations_take_real_floating_arrays_only(device: str, name: str, dtype: str) -> None:
    x = xp.ones(3, dtype=getattr(xp, dtype), device=device)
    front = name.partition("_")[0]  # (gelu_tanh is gelu's)
    with pytest.raises(TypeError, match=rf"^nn\.{front}\(\) needs real floating arrays, got x of {dtype}$"):
        ACTIVATIONS[name][0](x)


def _rounded_once(got: xp.Array, exact: np.ndarray, scale: np.ndarray, dtype: str) -> bool:
    """Whether ``got`` (of a 16-bit float ``dtype``) is ``exact`` computed in float32 and rounded once:
    within half a unit in its last place, plus float32's error on terms of size ``scale``."""
    r = exact.astype(storage(dtype))
    ulp = np.abs((r.view(np.int16) + 1).view(r.dtype).astype(np.float64) - r.astype(np.float64))
    return bool(np.all(np.abs(host(got).astype(np.float64) - exact) <= 0.5 * ulp + 2.0 ** -20 * scale))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_parameters_reach_16_bit_floats_unrounded(device: str, dtype: str) -> None:
    """elu's alpha, affine's mul and add and powf's exponent reach a 16-bit x in float32, and affine
    rounds once. (Rounded to x's dtype first, alpha 0.7 and the exponent 1/3 missed by up to 1.2 units
    in the last place; x * 0.1 rounded before adding 0.3, by up to 1638 near zero.)"""
    a = sample((4096,), dtype, 3, -6, 6)
    x = on(a, dtype, device)
    elu = np.where(a > 0, a, 0.7 * np.expm1(a))
    assert _rounded_once(xp.nn.elu(x, alpha=0.7), elu, np.abs(elu), dtype)
    assert _rounded_once(xp.nn.affine(x, 0.1, 0.3), a * 0.1 + 0.3, np.abs(a * 0.1) + 0.3, dtype)
    cube_root = np.abs(a) ** (1 / 3)
    assert _rounded_once(xp.nn.powf(xp.abs(x), 1 / 3), cube_root, cube_root, dtype)



def test_an_activation_of_an_expression_is_one_launch(recording: Device) -> None:
    """nn.silu(x * 2) defers, and runs with the multiply as one generated kernel (nn's own back
    computed x * 2 first: two launches); so do the rows with parameters, which the generated
    struct holds."""
    x = memory.empty((1 << 20,), dtypes.float32, recording)
    launches = recording.runtime.driver.launches
    for f, call in ((lambda t: xp.nn.silu(t), "RaUnary<silu_op"), (lambda t: xp.nn.elu(t, alpha=0.5), "RaParams<elu_op"),
                    (lambda t: xp.nn.affine(t, 0.5, 1.0), "RaParams<affine_op")):
        y = f(x * 2)
        node = y._buf.node
        assert launches == [] and node.count == 2 and call in fused.kernel(node.sig).source
        y._buf.ptr  # (its address is needed: by any other kernel, a copy, DLPack, printing...)
        [launch] = launches
        assert "fused_contiguous" in launch[0] and "RaFused" in launch[0]
        launches.clear()


@pytest.mark.parametrize("call", [
    lambda w: xp.nn.relu(None), lambda w: xp.nn.softmax(None), lambda w: xp.nn.layer_norm(None, (3,)),
    lambda w: xp.nn.max_pool2d(None, 2), lambda w: xp.nn.conv2d(None, w), lambda w: xp.nn.conv2d(w, None),
])
def test_none_is_not_an_array(device: str, call) -> None:  # type: ignore[no-untyped-def]
    # (None had been dropped as an optional operand: an IndexError or AttributeError from inside)
    with pytest.raises(TypeError, match=r"^nn\.\w+\(\): (x|weight) must be an array, not NoneType"):
        call(on(np.ones((1, 1, 3, 3)), "float32", device))


# -- softmax, log_softmax -------------------------------------------------------------------------------
def ref_softmax(a: np.ndarray, axis: int, log: bool) -> np.ndarray:
    m = np.max(a, axis=axis, keepdims=True)
    e = np.exp(a - m)
    s = e.sum(axis=axis, keepdims=True)
    return (a - m - np.log(s)) if log else e / s


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape, axis", [((4, 33), -1), ((4, 5, 6), 1), ((7, 3), 0), ((2, 3000), -1), ((5,), 0)])
def test_softmax(device: str, log: bool, dtype: str, shape: tuple[int, ...], axis: int) -> None:
    a = sample(shape, dtype, 2, -8, 8)
    fn = xp.nn.log_softmax if log else xp.nn.softmax
    close(fn(on(a, dtype, device, strided=True), axis=axis), ref_softmax(a, axis, log), dtype)


def test_softmax_is_stable_and_masks(device: str) -> None:
    a = np.array([[1000.0, 1001.0, 999.0], [-np.inf, 0.0, -np.inf], [-1e4, -1e4, -1e4]])
    close(xp.nn.softmax(on(a, "float32", device)), ref_softmax(a, -1, False), "float32")
    close(xp.nn.log_softmax(on(a, "float64", device)), ref_softmax(a, -1, True), "float64")


def test_softmax_layouts_and_errors(device: str) -> None:
    close(xp.nn.softmax(on(np.array(3.0), "float32", device)), np.array(1.0), "float32")
    assert xp.nn.softmax(on(np.zeros((0, 3)), "float32", device), axis=0).shape == (0, 3)
    with pytest.raises(TypeError):
        xp.nn.softmax(xp.ones(3, dtype=xp.int64, device=device))
    with pytest.raises(IndexError):
        xp.nn.softmax(on(np.ones((2, 3)), "float32", device), axis=2)


# -- layer_norm, rms_norm ---------------------------------------------------------------------------------
def ref_norm(a: np.ndarray, k: int, w: np.ndarray | None, b: np.ndarray | None, eps: float, rms: bool) -> np.ndarray:
    axes = tuple(range(a.ndim - k, a.ndim))
    d = a if rms else a - a.mean(axis=axes, keepdims=True)
    y = d / np.sqrt((d * d).mean(axis=axes, keepdims=True) + eps)
    return y * (1 if w is None else w) + (0 if b is None else b)


@pytest.mark.parametrize("rms", [False, True])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape, k, affine", [((4, 10), 1, True), ((3, 4, 5), 2, True), ((2, 6), 1, False),
                                               ((2, 2500), 1, True), ((7,), 1, False)])
def test_norms(device: str, rms: bool, dtype: str, shape: tuple[int, ...], k: int, affine: bool) -> None:
    a = sample(shape, dtype, 3) + 0.5
    w = sample(shape[-k:], dtype, 4) if affine else None
    b = sample(shape[-k:], dtype, 5) if affine else None
    eps = 1e-3
    fn = xp.nn.rms_norm if rms else xp.nn.layer_norm
    out = fn(on(a, dtype, device, strided=True), shape[-k:], None if w is None else on(w, dtype, device),
             None if b is None else on(b, dtype, device), eps=eps)
    close(out, ref_norm(a, k, w, b, eps, rms), dtype, scale=10.0)


def test_rms_norm_default_eps_and_errors(device: str) -> None:
    a = sample((3, 8), "float32", 6)
    eps = float(ml_dtypes.finfo(np.float32).eps)
    close(xp.nn.rms_norm(on(a, "float32", device), 8), ref_norm(a, 1, None, None, eps, True), "float32")
    x = on(a, "float32", device)
    with pytest.raises(ValueError):
        xp.nn.layer_norm(x, (4,))
    with pytest.raises(ValueError):
        xp.nn.layer_norm(x, 8, on(np.ones(4), "float32", device))
    with pytest.raises(TypeError):
        xp.nn.layer_norm(xp.ones((2, 8), dtype=xp.int32, device=device), 8)
    with pytest.raises(TypeError, match="real floating"):  # an integer weight is not promoted
        xp.nn.layer_norm(x, 8, xp.ones(8, dtype=xp.int32, device=device))
    with pytest.raises(ValueError, match="normalized_shape is empty"):
        xp.nn.rms_norm(x, ())
    for eps, err in (("a", TypeError), (True, TypeError), (-1.0, ValueError)):
        with pytest.raises(err, match="eps"):
            xp.nn.layer_norm(x, 8, eps=eps)


# -- convolutions -------------------------------------------------------------------------------------------
def ref_conv(a: np.ndarray, w: np.ndarray, stride: tuple[int, int], pad: tuple[int, int],
             dil: tuple[int, int], groups: int) -> np.ndarray:
    """Direct 2-D cross-correlation (NCHW), one kernel tap at a time."""
    n, c, h, wd = a.shape
    k, cg, kh, kw = w.shape
    p = np.pad(a, ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    oh = (h + 2 * pad[0] - dil[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + 2 * pad[1] - dil[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, k, oh, ow))
    kg = k // groups
    for i in range(kh):
        for j in range(kw):
            patch = p[:, :, i * dil[0]:i * dil[0] + stride[0] * (oh - 1) + 1:stride[0],
                      j * dil[1]:j * dil[1] + stride[1] * (ow - 1) + 1:stride[1]]
            for g in range(groups):
                out[:, g * kg:(g + 1) * kg] += np.einsum("nchw,kc->nkhw", patch[:, g * cg:(g + 1) * cg],
                                                         w[g * kg:(g + 1) * kg, :, i, j])
    return out


CONV_CASES = [  # (x shape, weight shape, stride, padding, dilation, groups)
    ((2, 3, 9, 8), (4, 3, 3, 3), 1, 1, 1, 1),
    ((1, 4, 10, 11), (6, 2, 3, 2), (2, 1), (1, 0), (1, 2), 2),
    ((2, 6, 7, 7), (6, 1, 3, 3), 2, 0, 1, 6),
    ((1, 2, 5, 5), (3, 2, 1, 1), 1, 0, 1, 1),
    ((3, 8, 12, 12), (16, 8, 5, 5), 1, 2, 2, 1),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("xs, ws, stride, padding, dilation, groups", CONV_CASES)
def test_conv2d(device: str, dtype: str, xs, ws, stride, padding, dilation, groups) -> None:  # type: ignore[no-untyped-def]
    a, w = sample(xs, dtype, 7), sample(ws, dtype, 8)
    out = xp.nn.conv2d(on(a, dtype, device, strided=True), on(w, dtype, device), stride=stride,
                       padding=padding, dilation=dilation, groups=groups)
    pair = lambda v: v if isinstance(v, tuple) else (v, v)  # noqa: E731
    close(out, ref_conv(a, w, pair(stride), pair(padding), pair(dilation), groups), dtype,
          scale=float(np.sqrt(np.prod(ws[1:]))) * 4)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_conv1d_with_bias(device: str, dtype: str) -> None:
    a, w, b = sample((2, 4, 20), dtype, 9), sample((6, 2, 3), dtype, 10), sample((6,), dtype, 11)
    out = xp.nn.conv1d(on(a, dtype, device), on(w, dtype, device), on(b, dtype, device), stride=2,
                       padding=1, dilation=2, groups=2)
    ref = ref_conv(a[:, :, None], w[:, :, None], (1, 2), (0, 1), (1, 2), 2)[:, :, 0] + b[:, None]
    close(out, ref, dtype)
    out2 = xp.nn.conv2d(on(a[:, :, None], dtype, device), on(w[:, :, None], dtype, device),
                        on(b, dtype, device), stride=(1, 2), padding=(0, 1), dilation=(1, 2), groups=2)
    close(out2, ref[:, :, None], dtype)


TRANSPOSED_CASES = [  # (x shape, weight shape, stride, padding, output_padding, dilation, groups)
    ((2, 4, 5, 6), (4, 3, 3, 3), 2, 1, 1, 1, 1),
    ((1, 4, 4, 4), (4, 2, 2, 3), (1, 2), (0, 1), (0, 1), (2, 1), 2),
    ((2, 3, 6, 5), (3, 5, 3, 3), 1, 0, 0, 1, 1),
]


def dot(a: xp.Array, b: np.ndarray) -> float:
    return float(np.sum(host(a).astype(np.float64) * b))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("xs, ws, stride, padding, output_padding, dilation, groups", TRANSPOSED_CASES)
def test_conv_transpose2d_is_the_adjoint(device: str, dtype: str, xs, ws, stride, padding, output_padding,  # type: ignore[no-untyped-def]
                                         dilation, groups) -> None:
    a, w = sample(xs, dtype, 12), sample(ws, dtype, 13)
    y = xp.nn.conv_transpose2d(on(a, dtype, device), on(w, dtype, device), stride=stride, padding=padding,
                               output_padding=output_padding, groups=groups, dilation=dilation)
    pair = lambda v: v if isinstance(v, tuple) else (v, v)  # noqa: E731
    s, p, d, op = pair(stride), pair(padding), pair(dilation), pair(output_padding)
    expect = tuple((i - 1) * si - 2 * pi + di * (k - 1) + o + 1
                   for i, si, pi, di, k, o in zip(xs[2:], s, p, d, ws[2:], op))
    assert y.shape == (xs[0], ws[1] * groups) + expect
    z = sample(y.shape, dtype, 14)
    # <conv_transpose(a), z> == <a, conv(z)>: the weight read as conv2d's (K = in channels of a)
    lhs, rhs = dot(y, z), float(np.sum(a * ref_conv(z, w, s, p, d, groups)))
    assert abs(lhs - rhs) <= TOL[dtype] * 100 * max(1.0, abs(rhs))


def test_conv_transpose1d(device: str) -> None:
    a, w, b = sample((2, 2, 7), "float64", 15), sample((2, 3, 4), "float64", 16), sample((3,), "float64", 17)
    y = xp.nn.conv_transpose1d(on(a, "float64", device), on(w, "float64", device), on(b, "float64", device),
                               stride=3, padding=2, output_padding=1)
    full = np.zeros((2, 3, (7 - 1) * 3 + 4 + 1))
    for i in range(7):
        full[:, :, 3 * i:3 * i + 4] += np.einsum("nc,cko->nko", a[:, :, i], w)
    close(y, full[:, :, 2:2 + y.shape[2]] + b[:, None], "float64")


@pytest.mark.parametrize("call, err", [
    (lambda x, w: xp.nn.conv2d(x, w[:, :2]), ValueError),
    (lambda x, w: xp.nn.conv2d(x[0], w), ValueError),
    (lambda x, w: xp.nn.conv2d(x, w, groups=2), ValueError),
    (lambda x, w: xp.nn.conv2d(x, w, stride=0), ValueError),
    (lambda x, w: xp.nn.conv2d(x, w, padding=(1, 2, 3)), ValueError),
    (lambda x, w: xp.nn.conv2d(x, w, stride=1.5), TypeError),
    (lambda x, w: xp.nn.conv2d(x, w, xp.ones(3, dtype=xp.float32, device=x.device)), ValueError),
    (lambda x, w: xp.nn.conv2d(xp.ones((1, 3, 2, 2), dtype=xp.float32, device=x.device), w), ValueError),
    (lambda x, w: xp.nn.conv_transpose2d(x, w, stride=2, output_padding=2), ValueError),
    (lambda x, w: xp.nn.conv2d(xp.ones((1, 3, 5, 5), dtype=xp.int32, device=x.device),
                               xp.ones((4, 3, 3, 3), dtype=xp.int32, device=x.device)), TypeError),
])
def test_conv_errors(device: str, call, err) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(err):
        call(on(np.ones((1, 3, 5, 5)), "float32", device), on(np.ones((4, 3, 3, 3)), "float32", device))


def test_conv_promotes_dtypes(device: str) -> None:
    a, w = sample((1, 2, 5, 5), "float32", 18), sample((3, 2, 3, 3), "float64", 19)
    out = xp.nn.conv2d(on(a, "float32", device), on(w, "float64", device))
    close(out, ref_conv(a, w, (1, 1), (0, 0), (1, 1), 1), "float64")
    with pytest.raises(TypeError, match="real floating"):  # floating dtypes promote; an integer one is refused
        xp.nn.conv2d(on(a, "int32", device), on(w, "float32", device))


# -- pooling and upsampling ----------------------------------------------------------------------------------
def ref_pool(a: np.ndarray, k: tuple[int, int], s: tuple[int, int], p: tuple[int, int], is_max: bool,
             include_pad: bool = True) -> np.ndarray:
    *lead, h, w = a.shape
    oh, ow = (h + 2 * p[0] - k[0]) // s[0] + 1, (w + 2 * p[1] - k[1]) // s[1] + 1
    out = np.zeros((*lead, oh, ow))
    for y in range(oh):
        for x in range(ow):
            y0, x0 = y * s[0] - p[0], x * s[1] - p[1]
            win = a[..., max(y0, 0):min(y0 + k[0], h), max(x0, 0):min(x0 + k[1], w)]
            if is_max:
                out[..., y, x] = win.max(axis=(-2, -1))
            else:
                n = ((min(y0 + k[0], h + p[0]) - y0) * (min(x0 + k[1], w + p[1]) - x0) if include_pad
                     else win.shape[-1] * win.shape[-2])
                out[..., y, x] = win.sum(axis=(-2, -1)) / n
    return out


POOL_CASES = [((2, 3, 8, 8), 2, None, 0), ((1, 2, 9, 7), (3, 2), (2, 1), (1, 1)), ((3, 5, 6), 3, 1, 1),
              ((1, 1, 5, 5), 5, None, 2)]


@pytest.mark.parametrize("is_max", [True, False])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape, k, s, p", POOL_CASES)
def test_pool2d(device: str, is_max: bool, dtype: str, shape, k, s, p) -> None:  # type: ignore[no-untyped-def]
    a = sample(shape, dtype, 20)
    fn = xp.nn.max_pool2d if is_max else xp.nn.avg_pool2d
    pair = lambda v: v if isinstance(v, tuple) else (v, v)  # noqa: E731
    out = fn(on(a, dtype, device, strided=True), k, s, p)
    close(out, ref_pool(a, pair(k), pair(k if s is None else s), pair(p), is_max), dtype)


def test_avg_pool_excluding_padding_and_nan(device: str) -> None:
    a = sample((1, 2, 6, 6), "float32", 21)
    out = xp.nn.avg_pool2d(on(a, "float32", device), 3, 2, 1, count_include_pad=False)
    close(out, ref_pool(a, (3, 3), (2, 2), (1, 1), False, False), "float32")
    a[0, 0, 0, 0] = np.nan
    out = host(xp.nn.max_pool2d(on(a, "float32", device), 2))
    assert np.isnan(out[0, 0, 0, 0]) and not np.isnan(out[0, 0, 1, 1])


@pytest.mark.parametrize("call, err", [
    (lambda x: xp.nn.max_pool2d(x, 2, padding=2), ValueError),
    (lambda x: xp.nn.max_pool2d(x, 0), ValueError),
    (lambda x: xp.nn.max_pool2d(x[0, 0], 2), ValueError),
    (lambda x: xp.nn.avg_pool2d(x, 9), ValueError),
    (lambda x: xp.nn.avg_pool2d(x, 2, count_include_pad="no"), TypeError),
    (lambda x: xp.nn.max_pool2d(xp.ones((1, 1, 4, 4), dtype=xp.int8, device=x.device), 2), TypeError),
])
def test_pool_errors(device: str, call, err) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(err):
        call(on(np.ones((1, 2, 4, 4)), "float32", device))


def ref_upsample(a: np.ndarray, out: tuple[int, ...], scales: list[np.float32]) -> np.ndarray:
    idx = [np.minimum(np.floor(np.arange(o, dtype=np.float32) * sc).astype(int), n - 1)
           for o, sc, n in zip(out, scales, a.shape[2:])]
    return a[(slice(None), slice(None), *np.ix_(*idx))] if len(idx) == 2 else a[:, :, idx[0]]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int64", "uint8", "complex128", "bool"])
def test_upsample_nearest(device: str, dtype: str) -> None:
    a = small_values(dtype, (2, 3, 4, 5), 22)  # (imaginary parts: a copy of 8 of 16 bytes would show)
    x = on(a, dtype, device, strided=True)
    f32 = np.float32
    cases = [(xp.nn.upsample_nearest2d(x, size=(7, 10)), ref_upsample(a, (7, 10), [f32(4) / f32(7), f32(5) / f32(10)])),
             (xp.nn.upsample_nearest2d(x, scale_factor=2), ref_upsample(a, (8, 10), [f32(0.5), f32(0.5)])),
             (xp.nn.upsample_nearest2d(x, scale_factor=(1.5, 0.6)), ref_upsample(a, (6, 3), [f32(1 / 1.5), f32(1 / 0.6)])),
             (xp.nn.upsample_nearest1d(x[:, :, 0], size=11), ref_upsample(a[:, :, 0], (11,), [f32(5) / f32(11)]))]
    for out, ref in cases:
        assert out.dtype == getattr(xp, dtype)
        np.testing.assert_array_equal(host(out), ref)


def test_upsample_errors(device: str) -> None:
    x = on(np.ones((1, 1, 3, 3)), "float32", device)
    for call, err in [(lambda: xp.nn.upsample_nearest2d(x), ValueError),
                      (lambda: xp.nn.upsample_nearest2d(x, size=4, scale_factor=2), ValueError),
                      (lambda: xp.nn.upsample_nearest2d(x, scale_factor=-1.0), ValueError),
                      (lambda: xp.nn.upsample_nearest2d(x, scale_factor=float("inf")), ValueError),
                      (lambda: xp.nn.max_pool2d(x, 2, stride=10**20), ValueError),
                      (lambda: xp.nn.conv2d(x, x, padding=10**20), ValueError),
                      (lambda: xp.nn.upsample_nearest1d(x, size=4), ValueError),
                      (lambda: xp.nn.upsample_nearest2d(x, scale_factor="2"), TypeError)]:
        with pytest.raises(err):
            call()


# -- gather, scatter, index ops --------------------------------------------------------------------------------
INDEX_DTYPES = ["float32", "float16", "int64", "int8", "bool", "complex64", "float64"]


@pytest.mark.parametrize("dtype", INDEX_DTYPES)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gather(device: str, dtype: str, dim: int) -> None:
    a = small_values(dtype, (4, 5, 6), 23)
    rng = np.random.default_rng(24)
    ishape = [3, 4, 5]
    ishape[dim] = 7
    idx = rng.integers(0, a.shape[dim], ishape)
    out = xp.nn.gather(on(a, dtype, device, strided=True), dim, xp.asarray(idx, device=device))
    crop = a[tuple(slice(0, n) if d != dim % 3 else slice(None) for d, n in enumerate(ishape))]
    np.testing.assert_array_equal(host(out), np.take_along_axis(crop, idx, axis=dim))


@pytest.mark.parametrize("add", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int64", "int8", "float64", "uint32"])
@pytest.mark.parametrize("dim", [0, 1])
def test_scatter(device: str, add: bool, dtype: str, dim: int) -> None:
    a = (sample((5, 6), "float64", 25) * 4).astype(storage(dtype))
    src = (sample((4, 7), "float64", 26) * 4).astype(storage(dtype))
    rng = np.random.default_rng(27)
    ishape = (3, 4)
    idx = rng.integers(0, a.shape[dim], ishape) if add else np.stack(
        [rng.permutation(a.shape[dim])[:ishape[dim]] for _ in range(ishape[1 - dim])], axis=1 - dim)
    fn = xp.nn.scatter_add if add else xp.nn.scatter
    out = fn(on(a, dtype, device), dim, xp.asarray(idx, dtype=xp.int32, device=device), on(src, dtype, device))
    wide = np.int64 if np.dtype(storage(dtype)).kind in "iu" else np.float64
    ref = a.astype(wide) if add else a.copy()
    for i in range(ishape[0]):
        for j in range(ishape[1]):
            pos = (idx[i, j], j) if dim == 0 else (i, idx[i, j])
            if add:
                ref[pos] += src[i, j].astype(wide)
            else:
                ref[pos] = src[i, j]
    same(out, ref.astype(storage(dtype)), dtype)


def same(out: xp.Array, ref: np.ndarray, dtype: str) -> None:
    """Equal, up to the rounding of sums in another order for the floats."""
    if dtype in TOL:
        close(out, ref.astype(np.float64), dtype)
    else:
        np.testing.assert_array_equal(host(out), ref)


@pytest.mark.parametrize("dtype", ["float32", "int16", "bfloat16"])
def test_index_select_and_add(device: str, dtype: str) -> None:
    a = (sample((4, 5, 3), "float64", 28) * 5).astype(storage(dtype))
    idx = np.array([4, 0, 0, 2])
    x, i = on(a, dtype, device, strided=True), xp.asarray(idx, device=device)
    np.testing.assert_array_equal(host(xp.nn.index_select(x, 1, i)), a[:, idx])
    src = (sample((4, 4, 3), "float64", 29) * 5).astype(storage(dtype))
    out = xp.nn.index_add(x, 1, i, on(src, dtype, device))
    ref = a.astype(np.float64)
    np.add.at(ref, (slice(None), idx), src.astype(np.float64))
    same(out, ref.astype(storage(dtype)), dtype)
    out = xp.nn.index_add(on(np.zeros(3), "float32", device), 0, xp.asarray([2, 2], device=device),
                          on(np.array([1.0, 2.0]), "float32", device), alpha=2)
    np.testing.assert_array_equal(host(out), [0, 0, 6])


def test_index_edge_cases(device: str) -> None:
    x = on(np.arange(6.0).reshape(2, 3), "float32", device)
    assert xp.nn.gather(x, 0, xp.zeros((0, 3), dtype=xp.int64, device=device)).shape == (0, 3)
    assert xp.nn.index_select(x, 1, xp.zeros((0,), dtype=xp.int64, device=device)).shape == (2, 0)
    np.testing.assert_array_equal(host(xp.nn.index_select(x, 0, xp.asarray(1, device=device))), [[3, 4, 5]])


@pytest.mark.parametrize("bad", [3, -1, 100])
@pytest.mark.parametrize("name", ["gather", "scatter", "scatter_add", "index_select", "index_add"])
def test_out_of_range_index_is_an_index_error(device: str, name: str, bad: int) -> None:
    x = on(np.zeros((3, 3)), "float32", device)
    idx = xp.asarray(np.array([[0, bad], [1, 2]]), device=device)
    calls = {
        "gather": lambda: xp.nn.gather(x, 0, idx),
        "scatter": lambda: xp.nn.scatter(x, 0, idx, x),
        "scatter_add": lambda: xp.nn.scatter_add(x, 1, idx, x),
        "index_select": lambda: xp.nn.index_select(x, 0, idx[0]),
        "index_add": lambda: xp.nn.index_add(x, 0, idx[0], x[:2]),
    }
    with pytest.raises(IndexError, match=rf"nn\.{name}\(\): index {bad} is out of range"):  # as on cpu
        calls[name]()


def test_gather_and_scatter_of_views_past_a_kernels_dimensions(device: str) -> None:
    """Nine-dimensional strided and permuted views (their layouts merge to more dimensions than a
    kernel takes): the same results as NumPy's on every axis."""
    rng = np.random.default_rng(30)
    base = rng.standard_normal((6, 2, 2, 3, 2, 2, 2, 3, 2)).astype(np.float32)
    x = xp.permute_dims(on(base, "float32", device)[::2], (0, 2, 1, 3, 4, 6, 5, 7, 8))
    h = base[::2].transpose(0, 2, 1, 3, 4, 6, 5, 7, 8)
    src = rng.standard_normal(h.shape).astype(np.float32)
    for dim in (0, 4, 8):
        idx = rng.integers(0, h.shape[dim], h.shape)
        np.testing.assert_array_equal(host(xp.nn.gather(x, dim, xp.asarray(idx, device=device))),
                                      np.take_along_axis(h, idx, axis=dim))
        perm = np.argsort(rng.random(h.shape), axis=dim)  # no repeats along dim
        want = h.copy()
        np.put_along_axis(want, perm, src, axis=dim)
        got = xp.nn.scatter(x, dim, xp.asarray(perm, device=device), on(src, "float32", device))
        np.testing.assert_array_equal(host(got), want)
        got = xp.nn.scatter_add(x, dim, xp.asarray(perm, device=device), on(src, "float32", device))
        np.testing.assert_allclose(host(got), h + np.take_along_axis(src, np.argsort(perm, axis=dim), axis=dim),
                                   rtol=1e-6)


@pytest.mark.parametrize("call, err", [
    (lambda x, i: xp.nn.gather(x, 0, xp.astype(i, xp.float32)), TypeError),
    (lambda x, i: xp.nn.gather(x, 2, i), IndexError),
    (lambda x, i: xp.nn.gather(x, 0, i[0]), ValueError),
    (lambda x, i: xp.nn.gather(x, 0, xp.zeros((2, 4), dtype=xp.int64, device=x.device)), ValueError),
    (lambda x, i: xp.nn.scatter(x, 0, i, xp.astype(x, xp.float64)), TypeError),
    (lambda x, i: xp.nn.scatter_add(xp.astype(x, xp.bool), 0, i, xp.astype(x, xp.bool)), TypeError),
    (lambda x, i: xp.nn.index_select(x, 0, i), ValueError),
    (lambda x, i: xp.nn.index_add(x, 0, i[0], x), ValueError),
    (lambda x, i: xp.nn.index_add(x, 0, i[0], x[:2], alpha="a"), TypeError),
])
def test_index_errors(device: str, call, err) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(err):
        call(on(np.zeros((3, 3)), "float32", device), xp.zeros((2, 2), dtype=xp.int64, device=device))


# -- the plugin --------------------------------------------------------------------------------------------------
def test_nn_plugin_can_be_disabled() -> None:
    table = assemble({"ROCM_ARRAY_DISABLE_PLUGINS": "nn"}, FunctionTable())
    assert not any(name.startswith("nn.") for name in table)
    with pytest.raises(PluginUnavailableError, match="'nn' plugin.*ROCM_ARRAY_DISABLE_PLUGINS"):
        table["nn.conv2d"]
    assert "nn.softmax" in assemble({}, FunctionTable())
