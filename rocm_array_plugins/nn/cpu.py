"""The cpu backs of the nn plugin: NumPy, computing the 16-bit floats in float32.

Each takes the contiguous arrays its front prepared and returns a new array of
the front's dtype.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from rocm_array import dtypes
from rocm_array.array import Array, wrap_numpy
from rocm_array.dtypes import DType

from . import backs

if TYPE_CHECKING:
    from .front_conv import ConvSpec
    from .front_pool import PoolSpec


def _f(x: Array) -> np.ndarray:
    """x's elements in the dtype NumPy computes in."""
    return x._np.astype(dtypes.compute_dtype(x.dtype).numpy, copy=False)


def _out(a: np.ndarray, dtype: DType) -> Array:
    with np.errstate(all="ignore"):
        return wrap_numpy(np.asarray(a).astype(dtype.numpy, order="C", copy=False), dtype)


def softmax(x: Array, log: bool) -> Array:
    a = _f(x)
    with np.errstate(all="ignore"):
        shifted = a - a.max(axis=1, keepdims=True)
        s = np.exp(shifted).sum(axis=1, keepdims=True)
        return _out(shifted - np.log(s) if log else np.exp(shifted) / s, x.dtype)


def norm(x: Array, weight: Array | None, bias: Array | None, eps: float, rms: bool) -> Array:
    a = _f(x)
    with np.errstate(all="ignore"):
        d = a if rms else a - a.mean(axis=1, keepdims=True)
        y = d / np.sqrt((d * d).mean(axis=1, keepdims=True) + a.dtype.type(eps))
        if weight is not None:
            y = y * _f(weight)
        if bias is not None:
            y = y + _f(bias)
    return _out(y, x.dtype)


def _windows(a: np.ndarray, spec: Any, pad_value: float) -> np.ndarray:
    """(N, C, H, W) -> the view (N, C, KH, KW, OH, OW) of its padded windows (im2col without copying)."""
    p = np.pad(a, ((0, 0), (0, 0), (spec.ph, spec.ph), (spec.pw, spec.pw)), constant_values=pad_value)
    sn, sc, sy, sx = p.strides
    dh, dw = getattr(spec, "dh", 1), getattr(spec, "dw", 1)
    return as_strided(p, (p.shape[0], p.shape[1], spec.kh, spec.kw, spec.oh, spec.ow),
                      (sn, sc, sy * dh, sx * dw, sy * spec.sh, sx * spec.sw), writeable=False)


def conv(spec: ConvSpec, x: Array, w: Array) -> Array:
    a, f = _f(x), _f(w)
    g = spec.groups
    if not spec.transposed:
        win = _windows(a, spec, 0).reshape(spec.n, g, spec.c // g, spec.kh, spec.kw, spec.oh, spec.ow)
        y = np.einsum("ngcijyx,gkcij->ngkyx", win, f.reshape(g, spec.k // g, spec.c // g, spec.kh, spec.kw),
                      optimize=True)
        return _out(y.reshape(spec.n, spec.k, spec.oh, spec.ow), x.dtype)
    # Transposed: every input pixel adds weight * value into its window of the padded output.
    cols = np.einsum("ngcyx,gckij->ngkijyx", a.reshape(spec.n, g, spec.c // g, spec.ih, spec.iw),
                     f.reshape(g, spec.c // g, spec.k // g, spec.kh, spec.kw), optimize=True)
    cols = cols.reshape(spec.n, spec.k, spec.kh, spec.kw, spec.ih, spec.iw)
    full = np.zeros((spec.n, spec.k, spec.oh + 2 * spec.ph, spec.ow + 2 * spec.pw), a.dtype)
    for i in range(spec.kh):
        for j in range(spec.kw):
            y0, x0 = i * spec.dh, j * spec.dw
            full[:, :, y0:y0 + spec.sh * (spec.ih - 1) + 1:spec.sh,
                 x0:x0 + spec.sw * (spec.iw - 1) + 1:spec.sw] += cols[:, :, i, j]
    return _out(full[:, :, spec.ph:spec.ph + spec.oh, spec.pw:spec.pw + spec.ow], x.dtype)


def pool(spec: PoolSpec, x: Array, is_max: bool, include_pad: bool) -> Array:
    a = _f(x)[None]
    with np.errstate(all="ignore"):
        if is_max:
            y = _windows(a, spec, -np.inf).max(axis=(2, 3))
        else:
            total = _windows(a, spec, 0).sum(axis=(2, 3))
            if include_pad:  # the window clipped to the padded input, as torch counts it
                y0 = np.arange(spec.oh) * spec.sh - spec.ph
                x0 = np.arange(spec.ow) * spec.sw - spec.pw
                count = np.outer(np.minimum(y0 + spec.kh, spec.h + spec.ph) - y0,
                                 np.minimum(x0 + spec.kw, spec.w + spec.pw) - x0)
            else:
                count = _windows(np.ones((1, 1, spec.h, spec.w), a.dtype), spec, 0).sum(axis=(2, 3))
            y = total / count
    return _out(y[0], x.dtype)


def upsample(spec: PoolSpec, x: Array, sh: np.float32, sw: np.float32) -> Array:
    rows = np.minimum(np.floor(np.arange(spec.oh, dtype=np.float32) * sh).astype(np.int64), spec.h - 1)
    cols = np.minimum(np.floor(np.arange(spec.ow, dtype=np.float32) * sw).astype(np.int64), spec.w - 1)
    return _out(x._np[:, rows[:, None], cols[None, :]], x.dtype)


def _check(name: str, index: np.ndarray, size: int) -> None:
    bad = (index < 0) | (index >= size)
    if bad.any():
        raise IndexError(f"nn.{name}(): index {int(index[bad].flat[0])} is out of range for a dimension "
                         f"of size {size}")


def _crop(a: np.ndarray, shape: tuple[int, ...], keep: int | None) -> np.ndarray:
    return a[tuple(slice(None) if d == keep else slice(0, n) for d, n in enumerate(shape))]


def gather(x: Array, index: Array, dim: int, name: str) -> Array:
    idx = index._np
    _check(name, idx, x.shape[dim] if x.ndim else 1)
    if x.ndim == 0:
        return _out(np.broadcast_to(x._np, idx.shape), x.dtype)
    return _out(np.take_along_axis(_crop(x._np, idx.shape, dim), idx, axis=dim), x.dtype)


def scatter(out: Array, src: Array, index: Array, dim: int, add: bool, name: str) -> None:
    idx = index._np
    o = out._np.reshape(out.shape or (1,))  # a view: out is contiguous
    _check(name, idx, o.shape[dim])
    values = _crop(src._np, idx.shape, None).reshape(idx.shape or (1,))
    idx = idx.reshape(idx.shape or (1,))
    where: list[Any] = list(np.indices(idx.shape, sparse=True))
    where[dim] = idx
    if not add:
        o[tuple(where)] = values
        return
    wide = dtypes.compute_dtype(out.dtype)  # the 16-bit floats accumulate in float32
    acc = o if wide is out.dtype else o.astype(wide.numpy)
    np.add.at(acc, tuple(where), values.astype(acc.dtype, copy=False))
    if acc is not o:
        o[...] = acc.astype(o.dtype)


def register() -> None:
    """Fill the ``cpu`` column of the plugin's tables."""
    backs.SOFTMAX["cpu"], backs.NORM["cpu"] = softmax, norm
    backs.CONV["cpu"], backs.POOL["cpu"], backs.UPSAMPLE["cpu"] = conv, pool, upsample
    backs.GATHER["cpu"], backs.SCATTER["cpu"] = gather, scatter
