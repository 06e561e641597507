"""Kernel arguments and launch geometry, shared by every GPU kernel launch (platform neutral).

Kernel arguments are ctypes values laid out as the kernel declares them: the
element types of ``rocm_array_kernels/common/types.h`` (``ctype_of``), and the strided
geometry ``ra_geometry<N>`` of ``rocm_array_kernels/common/indexing.h`` (``geometry``),
whose dimensions are merged first (``merge_dims``).
"""

from __future__ import annotations

import ctypes
import functools
import math
from typing import Any, Callable, Sequence

import numpy as np

from ..dtypes import DType, host_cast
from .targets import KINDS, PerTarget

__all__ = ["MAX_DIMS", "contiguous_strides", "merge_dims", "crosses", "geometry", "geometry_struct", "ctype_of",
           "scalar_arg", "scalar_value", "grid_1d", "BLOCK", "BLOCKS_PER_CU", "TILE", "TILE_ROWS", "TILE_THREADS",
           "MAX_GRID_X", "MAX_GRID_Y", "vector_width"]

#: RA_MAX_DIMS in rocm_array_kernels/common/indexing.h.
MAX_DIMS = 8
#: Threads per block of the 1-D kernels: 8 waves of 32 or 4 of 64, the size both vendors' guides
#: start from. Not swept (BLOCKS_PER_CU, the grid's size, was).
BLOCK = 256
#: Blocks per compute unit a grid-stride kernel is given (enough to hide memory latency). On an H200
#: (2^26 float32, one process a value): a + b took 211, 198, 197, 195 and 191 us at 8, 16, 32, 64
#: and 128; exp 144, 141, 137, 136 and 136 us: flat from 16 up.
BLOCKS_PER_CU = 32
#: The transposing kernels' tile (RA_TILE, RA_TILE_ROWS: a block of TILE x TILE_ROWS threads moves a
#: TILE x TILE tile through shared memory): copy_transpose and binary_tiles. NVIDIA: on an H200,
#: reshape(a.T, (-1,)) of 8192^2 float32 took 188 us at 32x8, 190 at 32x4, 193 at 32x16 and 195 at
#: 64x8; a.T + b 266, 269, 276 and 274 us; 4096^2 float64 77, 88, 84 and 93 us. AMD, from the
#: kernels' resources (not timed): a tile of complex128 takes 16.5 KiB of LDS, and binary_tiles two;
#: at 32x8, a CDNA CU (64 KiB) held 3 blocks of copy_transpose and 1 of binary_tiles, 3 and 1 waves
#: a SIMD of 8; at 32x32, 8 and 4. An RDNA WGP (128 KiB, wave 32) held 3 blocks of binary_tiles,
#: 6 waves of 16; at 32x16, 12.
TILE, TILE_ROWS = 32, PerTarget(nvidia=8, cdna=32, rdna=16)
#: Threads a block of the transposing kernels.
TILE_THREADS = PerTarget(**{k: TILE * TILE_ROWS.of(k) for k in KINDS})
#: The most blocks a grid has along x and along y (CUDA's and HIP's limits).
MAX_GRID_X, MAX_GRID_Y = 2**31 - 1, 65535


def vector_width(itemsize: int) -> int:
    """Elements of ``itemsize`` bytes that one 16-byte access holds (at least one): the kernels'
    vector loads (ra_vec, RaWidth)."""
    return 16 // itemsize or 1


class _RowMajor(dict[tuple[int, ...], tuple[int, ...]]):
    """Row-major strides, in elements, by shape: computed once per shape, at most ``KEEP`` shapes kept
    (every new array asks; most programs use few shapes). A subscript is the cheapest lookup there
    is: about 440 instructions below the ``functools.lru_cache`` call it replaces, and a lane asks
    whenever an operand's shape and strides are not the tuples it last found row-major (``gpu_lanes``)."""

    KEEP = 1024

    def __missing__(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        strides = []
        step = 1
        for n in reversed(shape):
            strides.append(step)
            step *= max(n, 1)
        if len(self) >= self.KEEP:
            self.clear()
        found = self[shape] = tuple(reversed(strides))
        return found


#: ``ROW_MAJOR[shape]``: row-major strides, in elements, for ``shape`` (a tuple).
ROW_MAJOR = _RowMajor()
#: ``contiguous_strides(shape)``: ``ROW_MAJOR[shape]`` as a function.
contiguous_strides: Callable[[tuple[int, ...]], tuple[int, ...]] = ROW_MAJOR.__getitem__


def merge_dims(shape: Sequence[int], *strides: Sequence[int]) -> tuple[tuple[int, ...], list[tuple[int, ...]]]:
    """The same iteration with fewer dimensions: size-1 dimensions dropped, and a dimension
    folded into the one inside it wherever every operand steps through both as one.

    A 0-d (or all size-1) shape becomes ``(1,)``; an empty shape keeps one zero dimension.
    """
    if math.prod(shape) == 0:
        return (0,), [(1,) for _ in strides]
    keep = [d for d, n in enumerate(shape) if n != 1]
    if not keep:
        return (1,), [(1,) for _ in strides]
    out_shape = [shape[keep[0]]]
    out_strides = [[s[keep[0]]] for s in strides]
    for d in keep[1:]:
        n = shape[d]
        if all(o[-1] == s[d] * n for o, s in zip(out_strides, strides)):
            out_shape[-1] *= n
            for o, s in zip(out_strides, strides):
                o[-1] = s[d]
        else:
            out_shape.append(n)
            for o, s in zip(out_strides, strides):
                o.append(s[d])
    return tuple(out_shape), [tuple(o) for o in out_strides]


def crosses(dst: Sequence[int], src: Sequence[int]) -> bool:
    """Whether 2-D strides (merged) have ``src`` fast along axis 0 and ``dst`` along axis 1, no
    stride 0: a transpose, where reading along one walks across the other (the tiled copy's case)."""
    return 0 < abs(src[0]) < abs(src[1]) and 0 < abs(dst[1]) < abs(dst[0])


@functools.lru_cache(maxsize=None)
def geometry_struct(operands: int) -> type[ctypes.Structure]:
    """The ctypes mirror of ``ra_geometry<operands>``."""
    return type(f"Geometry{operands}", (ctypes.Structure,), {"_fields_": [
        ("shape", ctypes.c_int64 * MAX_DIMS),
        ("strides", (ctypes.c_int64 * MAX_DIMS) * operands),
        ("ndim", ctypes.c_int32),
    ]})


def geometry(shape: Sequence[int], *strides: Sequence[int]) -> ctypes.Structure:
    """An ``ra_geometry<len(strides)>`` argument for already-merged ``shape`` (at most MAX_DIMS)."""
    if len(shape) > MAX_DIMS:
        raise ValueError(f"{len(shape)} dimensions after merging; kernels take at most {MAX_DIMS}")
    g = geometry_struct(len(strides))()
    g.ndim = len(shape)
    g.shape[:len(shape)] = list(shape)
    for k, s in enumerate(strides):
        g.strides[k][:len(s)] = list(s)
    return g


class _Complex64(ctypes.Structure):
    _fields_ = [("re", ctypes.c_float), ("im", ctypes.c_float)]


class _Complex128(ctypes.Structure):
    _fields_ = [("re", ctypes.c_double), ("im", ctypes.c_double)]


_CTYPES: dict[str, Any] = {
    "bool": ctypes.c_bool, "int8": ctypes.c_int8, "int16": ctypes.c_int16, "int32": ctypes.c_int32,
    "int64": ctypes.c_int64, "uint8": ctypes.c_uint8, "uint16": ctypes.c_uint16,
    "uint32": ctypes.c_uint32, "uint64": ctypes.c_uint64,
    # half and bfloat16 are structs of one uint16_t in the kernels.
    "float16": ctypes.c_uint16, "bfloat16": ctypes.c_uint16,
    "float32": ctypes.c_float, "float64": ctypes.c_double,
    "complex64": _Complex64, "complex128": _Complex128,
}


def ctype_of(dtype: DType) -> Any:
    """The ctypes type with the size and alignment of ``dtype``'s kernel type."""
    return _CTYPES[dtype.name]


def scalar_arg(dtype: DType, value: Any) -> Any:
    """``value`` converted as NumPy assigns it into a ``dtype`` array, as a kernel argument."""
    host = np.empty((), dtype.numpy)
    host[...] = host_cast(np.asarray(value), dtype)
    return ctype_of(dtype).from_buffer_copy(host.tobytes())


#: The conversions whose C casts are NumPy's assignment (bool, the integers, float32, float64).
_EXACT = {name: t for name, t in _CTYPES.items() if name not in ("float16", "bfloat16", "complex64", "complex128")}


def scalar_value(dtype: DType, value: Any) -> Any:
    """``scalar_arg``, by the ctypes conversion where it is NumPy's (a fraction of its cost)."""
    fast = _EXACT.get(dtype.name)
    return fast(value) if fast is not None else scalar_arg(dtype, value)


def grid_1d(n: int, compute_units: int, per_thread: int = 1, block: int = BLOCK) -> int:
    """Blocks for a grid-stride loop over ``n`` items: enough to fill the device, no more."""
    want = -(-n // (block * per_thread))
    return max(1, min(want, compute_units * BLOCKS_PER_CU))
