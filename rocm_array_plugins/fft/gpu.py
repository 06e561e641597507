"""The gpu back of the fft plugin: the vendor FFT library of ``rocm_array.runtime.fft``.

A transform is one batched library call per pass over at most ``MAX_RANK`` of
its axes. A pass reads its operand with the transformed axes last: one device
copy (``memory.copy_into`` of a permuted view) that also casts to the compute
dtype (float16 and bfloat16 compute in float32) and crops or zero-pads each
axis to the transform's length; an operand already laid out so is read where
it is. The result of a pass is a view in the input's axis order, so nothing is
copied back. As NumPy does, a real-to-complex transform handles the last axis
first and the others as complex passes, and a complex-to-real one the others
first and then only the last axis (so non-Hermitian input gives NumPy's
answer); the imaginary parts of the zero and Nyquist frequencies are ignored.
``norm`` is one elementwise ``multiply``; hfft and ihfft are irfft and rfft
with conjugates and the other norm, NumPy's identities.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rocm_array.array import Array
from rocm_array.dtypes import CATEGORIES, DType, complex_of, real_of
from rocm_array.launch import address
from rocm_array.memory import copy_into, empty, full
from rocm_array.runtime.fft import MAX_RANK
from rocm_array.runtime.vendor import library
from rocm_array_plugins.elementwise import own as elementwise

from . import backs

if TYPE_CHECKING:
    from .front_transforms import Transform

__all__ = ["transform"]


@dataclass(frozen=True)
class _Row:
    """How a transform runs: the library's ``kind``, its direction, whether ``norm="backward"``
    scales it by 1/N, and the conjugates of NumPy's hfft/ihfft identities."""

    kind: str
    inverse: bool
    scaled: bool
    conj_input: bool = False
    conj_output: bool = False


_FORWARD, _INVERSE = _Row("c2c", False, False), _Row("c2c", True, True)
_R2C, _C2R = _Row("r2c", False, False), _Row("c2r", True, True)
_ROWS = {"fft": _FORWARD, "fftn": _FORWARD, "ifft": _INVERSE, "ifftn": _INVERSE,
         "rfft": _R2C, "rfftn": _R2C, "irfft": _C2R, "irfftn": _C2R,
         # hfft(a) = irfft(conj(a)) and ihfft(a) = conj(rfft(a)), each with the other norm.
         "hfft": _Row("c2r", True, False, conj_input=True), "ihfft": _Row("r2c", False, True, conj_output=True)}


def _arrange(x: Array, order: list[int], sizes: dict[int, int], dtype: DType, copy: bool) -> Array:
    """``x`` with its axes in ``order``, contiguous, of ``dtype``, axis ``a`` cropped or zero-padded to
    ``sizes[a]``: a view of ``x`` when it already is all that (and no ``copy`` is asked), else a copy."""
    v = x._view(tuple(x.shape[a] for a in order), tuple(x.strides[a] for a in order), x.offset)
    want = tuple(sizes.get(a, x.shape[a]) for a in order)
    if not copy and want == v.shape and v.dtype is dtype and v.is_contiguous:
        return v
    padded = any(w > n for w, n in zip(want, v.shape))
    out = full(want, 0, dtype, x.device) if padded else empty(want, dtype, x.device)
    common = tuple(map(min, want, v.shape))
    copy_into(out._view(common, out.strides, 0), v._view(common, v.strides, v.offset))
    return out


def _ignore_imaginary_edges(z: Array, n: int) -> None:
    """Zero the imaginary parts of the zero (and, for even ``n``, Nyquist) frequencies on the last axis
    of the contiguous complex ``z`` in place, as NumPy's complex-to-real transforms ignore them."""
    real = real_of(z.dtype)
    edges = 2 if n % 2 == 0 and n > 1 else 1
    # The imaginary parts, read through a real view of the same buffer (each complex is two reals).
    imag = Array(z._buf, (*z.shape[:-1], edges), (*(2 * s for s in z.strides[:-1]), n * z.strides[-1]),
                 2 * z.offset + 1, real, z.device)
    copy_into(imag, full((), 0, real, z.device))


def _pass(x: Array, axes: tuple[int, ...], lengths: tuple[int, ...], kind: str, inverse: bool,
          sizes: dict[int, int], owned: bool) -> Array:
    """One library call: the ``kind`` transform of ``x`` over ``axes`` (``lengths`` points each, the
    logical lengths), after cropping or padding to ``sizes``; the result as a view in ``x``'s axis order.
    ``owned``: ``x`` is this transform's own intermediate, which a complex-to-real call may overwrite."""
    cdt = complex_of(x.dtype)
    rdt = real_of(cdt)
    order = [a for a in range(x.ndim) if a not in axes] + list(axes)
    src = _arrange(x, order, sizes, rdt if kind == "r2c" else cdt, copy=kind == "c2r" and not owned)
    half = (*lengths[:-1], lengths[-1] // 2 + 1)
    batch_shape = src.shape[:x.ndim - len(axes)]
    out = empty((*batch_shape, *(half if kind == "r2c" else lengths)), rdt if kind == "c2r" else cdt, x.device)
    if out.size:
        if kind == "c2r":
            _ignore_imaginary_edges(src, lengths[-1])
        fft = library("fft", x.device.runtime)
        fft.execute(kind, cdt, lengths, math.prod(batch_shape), address(src), address(out), inverse)
    where = {a: k for k, a in enumerate(order)}
    return out._view(tuple(out.shape[where[a]] for a in range(x.ndim)),
                     tuple(out.strides[where[a]] for a in range(x.ndim)), 0)


def transform(t: Transform, x: Array, lengths: tuple[int, ...], axes: tuple[int, ...], norm: str,
              dtype: DType, out_dtype: DType) -> Array:
    """``t`` of ``x`` (read as ``dtype``) over ``axes``, with ``lengths`` as NumPy's n or s; the result's
    dtype, ``out_dtype``, is the compute precision's (float16 and bfloat16 read as float32)."""
    row = _ROWS[t.name]
    if row.conj_input and x.dtype in CATEGORIES["complex floating"]:
        x, owned = elementwise("conj")(x), True
    else:
        owned = False
    sizes = dict(zip(axes, lengths))
    if row.kind == "c2r":
        sizes[axes[-1]] = lengths[-1] // 2 + 1
    # Passes of at most MAX_RANK axes; the last of them holds the last axis. A complex-to-real
    # transform runs only over the last axis (NumPy's irfftn), the others before it.
    last = (axes[-1],) if row.kind == "c2r" else axes[-MAX_RANK:]
    rest = axes[:len(axes) - len(last)]
    groups = [rest[max(0, i - MAX_RANK):i] for i in range(len(rest), 0, -MAX_RANK)]
    n = dict(zip(axes, lengths))
    steps = [(g, "c2c") for g in groups]
    steps = [(last, row.kind), *steps] if row.kind == "r2c" else [*steps, (last, row.kind)]
    for group, kind in steps:
        x = _pass(x, group, tuple(n[a] for a in group), kind, row.inverse, sizes, owned)
        sizes, owned = {}, True
    if row.conj_output:
        x = elementwise("conj")(x)
    total = math.prod(lengths)
    scale = 1 / math.sqrt(total) if norm == "ortho" else 1 / total if (norm == "backward") == row.scaled else 1
    return elementwise("multiply")(x, scale) if scale != 1 else x


def register() -> None:
    """Fill the ``gpu`` column of the plugin's table."""
    backs.TRANSFORM["gpu"] = transform
