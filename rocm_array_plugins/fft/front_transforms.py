"""The transforms: fft, ifft, fftn, ifftn, rfft, irfft, rfftn, irfftn, hfft, ihfft.

One row per transform says what it takes and gives; the shared front checks
the array, ``n``/``s``, ``axis``/``axes`` and ``norm`` and chooses dtypes; the
device's back transforms. Beyond the standard, which asks for complex input,
the complex-input transforms also take real floating arrays (as NumPy, CuPy and
PyTorch do) and read them as complex of the same precision. Repeated axes
are a ValueError (the standard leaves them undefined).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence, cast

import numpy as np

from rocm_array.array import Array
from rocm_array.axes import integer, normalize_axes
from rocm_array.dtypes import CATEGORIES, DType, complex_of, real_of
from rocm_array.hookspecs import Impl

from .backs import TRANSFORM
from .docs import transform_doc

_NORMS = ("backward", "ortho", "forward")


@dataclass(frozen=True)
class Transform:
    """A transform: its name, NumPy function (the cpu back's) and dtype roles.

    ``real_input``: takes real floating arrays only (rfft, rfftn, ihfft).
    ``real_output``: gives real arrays from Hermitian input (irfft, irfftn, hfft),
    whose last transformed axis defaults to ``2 * (M - 1)`` points.
    ``ndim``: takes ``s``/``axes`` (several axes) rather than ``n``/``axis``.
    """

    name: str
    numpy: Callable[..., Any]
    real_input: bool = False
    real_output: bool = False
    ndim: bool = False

    def dtypes(self, x: object) -> tuple[DType, DType]:
        """The dtype ``x`` is read as and the result's; TypeError for arrays of other dtypes."""
        if not isinstance(x, Array):
            raise TypeError(f"fft.{self.name}() expects an array, got {type(x).__name__}")
        category = "real floating" if self.real_input else "floating-point"
        if x.dtype not in CATEGORIES[category]:
            raise TypeError(f"fft.{self.name}() does not accept {x.dtype.name} input; it needs a {category} dtype")
        if self.real_input:
            return x.dtype, complex_of(x.dtype)
        dtype = complex_of(x.dtype)
        return dtype, real_of(dtype) if self.real_output else dtype

    def __call__(self, x: Array, lengths: Sequence[int | None] | None, axes: Sequence[int] | None,
                 norm: str) -> Array:
        dtype, out_dtype = self.dtypes(x)
        if norm not in _NORMS:
            raise ValueError(f"fft.{self.name}(): norm must be one of {_NORMS}, got {norm!r}")
        if axes is None and lengths is not None:
            raise ValueError(f"fft.{self.name}(): s needs axes")
        ax = normalize_axes(axes, x.ndim, f"fft.{self.name}")
        if not ax:
            raise ValueError(f"fft.{self.name}() needs at least one axis to transform")
        if lengths is None:
            lengths = [None] * len(ax)
        if len(lengths) != len(ax):
            raise ValueError(f"fft.{self.name}(): s has {len(lengths)} entries for {len(ax)} axes")
        n = tuple(self._length(lengths[i], x.shape[a], i == len(ax) - 1) for i, a in enumerate(ax))
        return cast("Array", TRANSFORM[x.device.kind](self, x, n, ax, norm, dtype, out_dtype))

    def _length(self, n: int | None, m: int, last: bool) -> int:
        """The transform length along an axis of ``m`` points: ``n`` checked, or its default."""
        if n is None or (self.ndim and n == -1):
            n = 2 * (m - 1) if self.real_output and last else m
        else:
            n = integer(n, f"fft.{self.name}", "n" if not self.ndim else "each entry of s")
        if not 1 <= n <= MAX_LENGTH:
            raise ValueError(f"fft.{self.name}(): the transform length must be from 1 to {MAX_LENGTH}, got {n}")
        return n


#: The longest transform (and fftfreq's n): the largest size an array of bytes may have (NumPy's and the drivers'
#: 64-bit sizes; past it NumPy's own errors had leaked).
MAX_LENGTH = 2**62


def _one_axis(t: Transform) -> Callable[..., Array]:
    """The public function of a one-axis transform: ``(x, /, *, n, axis, norm)``."""
    def transform(x: Array, /, *, n: int | None = None, axis: int = -1, norm: str = "backward") -> Array:
        return t(x, [n], [axis], norm)
    transform.__name__ = transform.__qualname__ = t.name
    transform.__doc__ = transform_doc(t)
    return transform


def _many_axes(t: Transform) -> Callable[..., Array]:
    """The public function of an n-dimensional transform: ``(x, /, *, s, axes, norm)``."""
    def transform(x: Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
                  norm: str = "backward") -> Array:
        return t(x, s, axes, norm)
    transform.__name__ = transform.__qualname__ = t.name
    transform.__doc__ = transform_doc(t)
    return transform


fft = _one_axis(Transform("fft", np.fft.fft))
ifft = _one_axis(Transform("ifft", np.fft.ifft))
fftn = _many_axes(Transform("fftn", np.fft.fftn, ndim=True))
ifftn = _many_axes(Transform("ifftn", np.fft.ifftn, ndim=True))
rfft = _one_axis(Transform("rfft", np.fft.rfft, real_input=True))
irfft = _one_axis(Transform("irfft", np.fft.irfft, real_output=True))
rfftn = _many_axes(Transform("rfftn", np.fft.rfftn, real_input=True, ndim=True))
irfftn = _many_axes(Transform("irfftn", np.fft.irfftn, real_output=True, ndim=True))
hfft = _one_axis(Transform("hfft", np.fft.hfft, real_output=True))
ihfft = _one_axis(Transform("ihfft", np.fft.ihfft, real_input=True))

IMPLS: list[Impl] = [Impl(f"fft.{f.__name__}", f)
                     for f in (fft, ifft, fftn, ifftn, rfft, irfft, rfftn, irfftn, hfft, ihfft)]
