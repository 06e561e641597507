"""The cpu back of the fft plugin: NumPy's pocketfft.

NumPy transforms float32/complex64 in single precision; float16 and bfloat16
(real input of rfft/ihfft) are computed in float32. Results are cast to the
dtype the front chose.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rocm_array import dtypes
from rocm_array.array import Array, wrap_numpy
from rocm_array.dtypes import DType

from . import backs

if TYPE_CHECKING:
    from .front_transforms import Transform



def transform(t: Transform, x: Array, lengths: tuple[int, ...], axes: tuple[int, ...], norm: str,
              dtype: DType, out_dtype: DType) -> Array:
    """``t`` of ``x`` (read as ``dtype``) over ``axes``, with ``lengths`` as NumPy's n or s."""
    a = x._np.astype(dtypes.compute_dtype(dtype).numpy, copy=False)
    if t.ndim:
        r = t.numpy(a, lengths, axes, norm)
    else:
        r = t.numpy(a, lengths[0], axes[0], norm)
    return wrap_numpy(r.astype(out_dtype.numpy, copy=False), out_dtype)


def register() -> None:
    """Fill the ``cpu`` column of the plugin's tables."""
    backs.TRANSFORM["cpu"] = transform
