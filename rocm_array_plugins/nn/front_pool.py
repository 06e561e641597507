"""max_pool2d, avg_pool2d, upsample_nearest1d and upsample_nearest2d.

The input's leading dimensions are planes (``(N, C, H, W)`` or ``(C, H, W)``;
``(N, C, L)`` for 1-D); the back works on a contiguous ``(planes, H, W)`` array.
Pooling takes real floating arrays (floor output size, as torch's default);
upsampling moves elements and takes any dtype. Nearest source index:
``floor(dst * scale)`` in float32, where scale is ``1 / scale_factor`` when that is
given and ``in / out`` otherwise (torch's rule).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from rocm_array import memory
from rocm_array.array import Array
from rocm_array.axes import flag
from rocm_array.hookspecs import Impl

from .backs import POOL, UPSAMPLE
from rocm_array.views import flat_view

from .common import arrays, floating, ints

IntOrSeq = int | Sequence[int]


@dataclass(frozen=True)
class PoolSpec:
    """(planes, H, W) -> (planes, OH, OW) through kh x kw windows (stride, padding)."""

    planes: int
    h: int
    w: int
    oh: int
    ow: int
    kh: int = 1
    kw: int = 1
    sh: int = 1
    sw: int = 1
    ph: int = 0
    pw: int = 0


#: ``back(spec, x, scale_h, scale_w) -> y``; the scales are float32 values.


def _pool(name: str, x: Array, kernel_size: IntOrSeq, stride: IntOrSeq | None, padding: IntOrSeq,
          is_max: bool, include_pad: bool) -> Array:
    dt = floating(name, x=x)
    if x.ndim not in (3, 4):
        raise ValueError(f"nn.{name}(): needs a 3-D or 4-D input, got shape {x.shape}")
    k = ints(kernel_size, 2, name, "kernel_size", 1)
    s = k if stride is None else ints(stride, 2, name, "stride", 1)
    p = ints(padding, 2, name, "padding", 0)
    if any(pi > ki // 2 for pi, ki in zip(p, k)):
        raise ValueError(f"nn.{name}(): padding {p} must be at most half the kernel size {k}")
    h, w = x.shape[-2:]
    out = tuple((i + 2 * pi - ki) // si + 1 for i, pi, ki, si in zip((h, w), p, k, s))
    if any(o < 1 for o in out):
        raise ValueError(f"nn.{name}(): the output would be empty (input {x.shape}, kernel {k})")
    planes = math.prod(x.shape[:-2])
    spec = PoolSpec(planes, h, w, *out, *k, *s, *p)
    if planes == 0:
        return memory.contiguous(x._view(x.shape[:-2] + out, (0,) * x.ndim, x.offset), dt)
    y = POOL[x.device.kind](spec, flat_view(memory.contiguous(x, dt), (planes, h, w)), is_max, include_pad)
    return flat_view(y, x.shape[:-2] + out)


def max_pool2d(x: Array, /, kernel_size: IntOrSeq, stride: IntOrSeq | None = None, padding: IntOrSeq = 0) -> Array:
    """The maximum of each window of a batch of images (padding never wins; NaN propagates).

    Parameters
    ----------
    x : Array
        (N, C, H, W), real floating.
    kernel_size : int or pair of ints
        The window.
    stride : int or pair of ints, optional
        Default: kernel_size.
    padding : int or pair of ints, optional
        At most half the window. Default: 0.

    Returns
    -------
    Array
        (N, C, OH, OW), of x's dtype.

    Raises
    ------
    TypeError
        An input that is not a real floating array.
    ValueError
        A window, stride or padding that does not fit.

    Notes
    -----
    Devices: NumPy on ``cpu``; on a GPU the project's pooling kernels (vector loads where windows do
    not overlap; faster than cuDNN's on an H200, so cuDNN is not used), MIOpen on AMD where it takes
    the problem.

    Examples
    --------
    >>> import rocm_array as xp
    >>> x = xp.asarray([[[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]]], device="cpu")
    >>> xp.nn.max_pool2d(x, 2)
    Array([[[[6., 8.]]]], dtype=float64, device=cpu)
    """
    return _pool("max_pool2d", x, kernel_size, stride, padding, True, True)


def avg_pool2d(x: Array, /, kernel_size: IntOrSeq, stride: IntOrSeq | None = None, padding: IntOrSeq = 0,
               *, count_include_pad: bool = True) -> Array:
    """The mean of each window of a batch of images.

    Parameters
    ----------
    x : Array
        (N, C, H, W), real floating.
    kernel_size : int or pair of ints
        The window.
    stride : int or pair of ints, optional
        Default: kernel_size.
    padding : int or pair of ints, optional
        Default: 0.
    count_include_pad : bool, optional
        Whether the divisor counts padded positions. Default: True.

    Returns
    -------
    Array
        (N, C, OH, OW), of x's dtype.

    Raises
    ------
    TypeError
        An input that is not a real floating array.
    ValueError
        A window, stride or padding that does not fit.

    Notes
    -----
    Devices: NumPy on ``cpu``; on a GPU the project's pooling kernels (vector loads where windows do
    not overlap; faster than cuDNN's on an H200, so cuDNN is not used), MIOpen on AMD where it takes
    the problem.

    Examples
    --------
    >>> import rocm_array as xp
    >>> x = xp.asarray([[[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]]], device="cpu")
    >>> xp.nn.avg_pool2d(x, 2)
    Array([[[[3.5, 5.5]]]], dtype=float64, device=cpu)
    """
    return _pool("avg_pool2d", x, kernel_size, stride, padding, False,
                 flag(count_include_pad, "nn.avg_pool2d", "count_include_pad"))


def _upsample(name: str, spatial: int, x: Array, size: IntOrSeq | None,
              scale_factor: float | Sequence[float] | None) -> Array:
    arrays(name, x=x)
    if x.ndim != spatial + 2:
        raise ValueError(f"nn.{name}(): needs a {spatial + 2}-D input, got shape {x.shape}")
    if (size is None) == (scale_factor is None):
        raise ValueError(f"nn.{name}(): give exactly one of size and scale_factor")
    inp = x.shape[2:]
    if size is not None:
        out = ints(size, spatial, name, "size", 1)
        scales = [np.float32(i) / np.float32(o) for i, o in zip(inp, out)]
    else:
        seq: list[Any] = list(scale_factor) if isinstance(scale_factor, (tuple, list)) else [scale_factor] * spatial
        if len(seq) != spatial or any(isinstance(f, bool) or not isinstance(f, (int, float)) for f in seq):
            raise TypeError(f"nn.{name}(): scale_factor must be {spatial} positive number(s), got {scale_factor!r}")
        if any(not 0 < f < math.inf for f in seq):
            raise ValueError(f"nn.{name}(): scale_factor must be positive and finite, got {scale_factor!r}")
        out = tuple(int(math.floor(i * f)) for i, f in zip(inp, seq))
        if any(o < 1 for o in out):
            raise ValueError(f"nn.{name}(): the output would be empty (input {x.shape}, scale {scale_factor})")
        scales = [np.float32(1.0 / f) for f in seq]
    one = (1,) * (2 - spatial)
    h, w = one + inp
    spec = PoolSpec(x.shape[0] * x.shape[1], h, w, *(one + tuple(out)))
    shape = x.shape[:2] + tuple(out)
    if spec.planes == 0 or any(i == 0 for i in inp):
        if spec.planes and any(i == 0 for i in inp):
            raise ValueError(f"nn.{name}(): cannot upsample an empty input of shape {x.shape}")
        return memory.contiguous(x._view(shape, (0,) * x.ndim, x.offset), x.dtype)
    sh, sw = ([np.float32(1)] * (2 - spatial)) + scales
    y = UPSAMPLE[x.device.kind](spec, flat_view(memory.contiguous(x, x.dtype), (spec.planes, h, w)), sh, sw)
    return flat_view(y, shape)


def upsample_nearest1d(x: Array, /, size: IntOrSeq | None = None,
                       scale_factor: float | Sequence[float] | None = None) -> Array:
    """Nearest-neighbour upsampling of a batch of sequences.

    Parameters
    ----------
    x : Array
        (N, C, L).
    size : int, optional
        The output length.
    scale_factor : float, optional
        Or the scale (one of the two).

    Returns
    -------
    Array
        (N, C, OL).

    Raises
    ------
    TypeError
        A non-array input.
    ValueError
        Neither or both of size and scale_factor.

    Notes
    -----
    Devices: NumPy on ``cpu``; one gather kernel on a GPU (by element width).

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.nn.upsample_nearest1d(xp.asarray([[[1.0, 2.0]]], device="cpu"), size=4)
    Array([[[1., 1., 2., 2.]]], dtype=float64, device=cpu)
    """
    return _upsample("upsample_nearest1d", 1, x, size, scale_factor)


def upsample_nearest2d(x: Array, /, size: IntOrSeq | None = None,
                       scale_factor: float | Sequence[float] | None = None) -> Array:
    """Nearest-neighbour upsampling of a batch of images.

    Parameters
    ----------
    x : Array
        (N, C, H, W).
    size : int or pair of ints, optional
        The output size.
    scale_factor : float or pair of floats, optional
        Or the scale (one of the two).

    Returns
    -------
    Array
        (N, C, OH, OW).

    Raises
    ------
    TypeError
        A non-array input.
    ValueError
        Neither or both of size and scale_factor.

    Notes
    -----
    Devices: NumPy on ``cpu``; one gather kernel on a GPU (by element width).

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.nn.upsample_nearest2d(xp.asarray([[[[1.0, 2.0]]]], device="cpu"), scale_factor=2).shape
    (1, 1, 2, 4)
    """
    return _upsample("upsample_nearest2d", 2, x, size, scale_factor)


IMPLS: list[Impl] = [Impl(f"nn.{f.__name__}", f)
                     for f in (max_pool2d, avg_pool2d, upsample_nearest1d, upsample_nearest2d)]
