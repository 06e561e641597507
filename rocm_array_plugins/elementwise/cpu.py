"""The cpu backs of the elementwise plugin: NumPy does the arithmetic.

The front has already chosen every dtype; these functions cast NumPy's
results to it, so NumPy's own promotion never leaks out. Where NumPy departs
from the standard, a small wrapper here fixes it and the row names the wrapper; so do the
activation rows, which NumPy has no function of.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from rocm_array import dtypes, memory
from rocm_array.array import Array, wrap_numpy
from rocm_array.devices import Device
from rocm_array.dtypes import DType

from . import backs

if TYPE_CHECKING:
    from rocm_array.operands import Scalar

    from .front_ufunc import Ufunc



def ufunc(fn: Ufunc, arrays: list[Array | Scalar], dtype: DType, out_dtype: DType, shape: tuple[int, ...],
          out: Array | None = None, params: tuple[float, ...] = ()) -> Array:
    compute = (dtypes.compute_dtype(dtype) if fn.widen_half else dtype).numpy
    # The result first: a shape past the host's memory is then cpu's MemoryError, as a GPU's is,
    # not NumPy's ValueError from inside the ufunc.
    result = memory.empty(shape, out_dtype, arrays[0].device)
    args = [(a if isinstance(a, Array) else a.array())._np.astype(compute, copy=False) for a in arrays]
    with np.errstate(all="ignore"):  # (a float32 result past float16's range rounds to inf, silently as on a GPU)
        np.copyto(result._np, fn.numpy(*args, *(np.asarray(p, compute) for p in params)), casting="unsafe")
    if out is None:
        return result
    memory.copy_into(out, result)
    return out


def where(condition: Array, x1: Array, x2: Array, dtype: DType, shape: tuple[int, ...]) -> Array:
    result = memory.empty(shape, dtype, condition.device)  # (first, as ufunc's)
    np.copyto(result._np, np.where(condition._np, x1._np.astype(dtype.numpy, copy=False),
                                   x2._np.astype(dtype.numpy, copy=False)), casting="unsafe")
    return result


# -- where NumPy departs from the standard ---------------------------------------------


def floor_divide(x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    """The standard prefers ``floor(x1 / x2)`` when an operand is infinite; NumPy gives NaN or -1."""
    r = np.floor_divide(x1, x2)
    if x1.dtype.kind == "f":
        r = np.where(np.isinf(x1) | np.isinf(x2), np.floor(x1 / x2), r)
    return cast("np.ndarray", r)


def power(x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    """Integer powers with negative exponents get a defined value instead of NumPy's ValueError.

    The exact result ``1 / x1**-n`` truncated toward zero: 1 for x1 == 1, ±1 for
    x1 == -1 (by the exponent's parity), 0 otherwise (also for x1 == 0, as CuPy).
    """
    if x1.dtype.kind != "i":
        return cast("np.ndarray", np.power(x1, x2))
    neg = x2 < 0
    r = np.power(x1, np.where(neg, 0, x2).astype(x2.dtype))
    if neg.any():
        inverse = np.where(x1 == 1, 1, np.where(x1 == -1, np.where(x2 % 2 == 0, 1, -1), 0))
        r = np.where(neg, inverse.astype(r.dtype), r)
    return cast("np.ndarray", r)


def sign(x: np.ndarray) -> np.ndarray:
    """Complex: NaN + NaN j where either part is NaN, as the standard says (NumPy gives 1 + 0j for
    inf + nan j)."""
    r = np.asarray(np.sign(x))
    if x.dtype.kind == "c":
        r[np.isnan(x.real) | np.isnan(x.imag)] = complex(np.nan, np.nan)
    return r


def nextafter(x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    """x2 where x1 == x2, as the standard's signed zeros and C's nextafter have it (NumPy's float16
    gives x1: nextafter(+0, -0) was +0)."""
    return np.where(x1 == x2, x2, np.nextafter(x1, x2))


def expm1(x: np.ndarray) -> np.ndarray:
    """Complex: ``expm1(a) cos(b) - 2 sin(b/2)^2 + i exp(a) sin(b)`` in float64, accurate near 0 as
    the GPU's (NumPy's exp(z) - 1 lost the small parts and overflowed complex64's exp(89 + 1j));
    the standard's special cases: ``exp(x) - 1`` for an infinite or NaN part (NumPy gives NaN
    there), +0 for the real part at ±0 (NumPy gives -0 for -0), b itself for b = ±0."""
    if x.dtype.kind != "c":
        return cast("np.ndarray", np.expm1(x))
    z = x.astype(np.complex128)
    a, b = z.real, z.imag
    with np.errstate(all="ignore"):
        r = np.empty_like(z)
        r.real = np.expm1(a) * np.cos(b) - 2 * np.sin(b / 2) ** 2
        r.imag = np.where(b == 0, b, np.exp(a) * np.sin(b))
        r = np.where(np.isfinite(z), r, np.exp(z) - 1)
    r.real[z == 0] = 0
    return r


def log1p(x: np.ndarray) -> np.ndarray:
    """Complex near 0 (|x| < 1/2): ``log1p(2a + a^2 + b^2) / 2 + i atan2(b, 1 + a)``, accurate as the
    GPU's (NumPy's log(1 + z) gave log1p(1e-30j) a real part of 0, not 5e-61); elsewhere NumPy's."""
    r = np.log1p(x)
    if x.dtype.kind == "c":
        z = x.astype(np.complex128)
        a, b = z.real, z.imag
        near = np.abs(z) < 0.5
        with np.errstate(all="ignore"):
            r = np.where(near, 0.5 * np.log1p(a * (2 + a) + b * b) + 1j * np.arctan2(b, 1 + a), r)
    return cast("np.ndarray", r)


def tanh(x: np.ndarray) -> np.ndarray:
    """Complex ``±inf + bj`` with finite b: the standard gives ``±1 ± 0j`` with the zero signed as b
    (conjugate symmetry); NumPy signs it as sin(2b), as C99 does."""
    r = np.asarray(np.tanh(x))
    if x.dtype.kind == "c":
        m = np.isinf(x.real) & np.isfinite(x.imag)
        r.real[m] = np.copysign(1, x.real[m])
        r.imag[m] = np.copysign(0, x.imag[m])
    return r


# -- the activations (table.ACTIVATIONS), which NumPy has no function of: on float32 or float64 ------
# (the parameters as 0-D arrays of that dtype)
_erf = np.vectorize(math.erf, otypes=[np.float64])


def relu(x: np.ndarray) -> np.ndarray:
    """max(x, 0); NaN stays NaN."""
    return np.where(x < 0, 0, x).astype(x.dtype)


def gelu(x: np.ndarray) -> np.ndarray:
    """x * Phi(x), Phi by erf (math.erf: NumPy has none)."""
    return cast("np.ndarray", 0.5 * x * (1 + _erf(x / math.sqrt(2)).astype(x.dtype)))


def gelu_tanh(x: np.ndarray) -> np.ndarray:
    """gelu by its tanh approximation."""
    return cast("np.ndarray", 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi).astype(x.dtype) * (x + 0.044715 * x ** 3))))


def sigmoid(x: np.ndarray) -> np.ndarray:
    return cast("np.ndarray", 1 / (1 + np.exp(-x)))


def silu(x: np.ndarray) -> np.ndarray:
    return cast("np.ndarray", x / (1 + np.exp(-x)))


def elu(x: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    return np.where(x > 0, x, alpha * np.expm1(x)).astype(x.dtype)


def affine(x: np.ndarray, mul: np.ndarray, add: np.ndarray) -> np.ndarray:
    return cast("np.ndarray", x * mul + add)


def powf(x: np.ndarray, e: np.ndarray) -> np.ndarray:
    return cast("np.ndarray", np.power(x, e))


def sequence(n: int, start: int | float | complex, step: int | float | complex,
             dtype: DType, device: Device) -> Array:
    out = memory.empty((n,), dtype, device)  # (first, as ufunc's)
    r: np.ndarray
    if dtype.kind in "iu" and isinstance(start, int) and isinstance(step, int):
        # Integers are exact in uint64 arithmetic modulo 2**64, then wrapped into the dtype.
        r = np.arange(n, dtype=np.uint64) * np.uint64(step % 2**64) + np.uint64(start % 2**64)
    else:
        r = start + step * np.arange(n, dtype=np.complex128 if isinstance(start + step, complex) else np.float64)
    with np.errstate(all="ignore"):
        np.copyto(out._np, r, casting="unsafe")
    return out


def triangle(x: Array, k: int, upper: bool) -> Array:
    return wrap_numpy((np.triu if upper else np.tril)(x._np, k), x.dtype)


def _check_indices(v: Array, indices: list[Array]) -> None:
    """IndexError for an index outside its axis, worded as a GPU's index report (NumPy's names the
    axis of the canonical view, which need not be the caller's)."""
    for axis, i in enumerate(indices):
        n, a = v.shape[axis], i._np
        bad = (a < -n) | (a >= n)
        if bad.any():
            raise IndexError(f"index {a[bad].flat[0]} is out of bounds for an axis of size {n}")


def gather(v: Array, indices: list[Array], shape: tuple[int, ...], in_bounds: bool) -> Array:
    if not in_bounds:
        _check_indices(v, indices)
    return wrap_numpy(v._np[tuple(i._np for i in indices)], v.dtype)


def scatter(v: Array, indices: list[Array], value: Array, in_bounds: bool) -> None:
    if not in_bounds:
        _check_indices(v, indices)
    v._np[tuple(i._np for i in indices)] = value._np


def mask_indices(mask: Array) -> tuple[Array, ...]:
    return tuple(wrap_numpy(i.astype(np.int64), dtypes.int64) for i in np.nonzero(mask._np))


def from_dlpack(obj: Any, copy: bool | None) -> Array:
    return wrap_numpy(np.from_dlpack(obj, copy=copy))


def register() -> None:
    """Fill the ``cpu`` column of the plugin's tables."""
    backs.UFUNC["cpu"], backs.WHERE["cpu"] = ufunc, where
    backs.SEQUENCE["cpu"], backs.TRIANGLE["cpu"], backs.FROM_DLPACK["cpu"] = sequence, triangle, from_dlpack
    backs.GATHER["cpu"], backs.SCATTER["cpu"], backs.MASK_INDICES["cpu"] = gather, scatter, mask_indices
