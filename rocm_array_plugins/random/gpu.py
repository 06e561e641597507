"""The gpu back of the random plugin: rocm_array_kernels/random/random.hip, one Philox block per thread.

Instantiations: ``draw<op, T>`` per transform and float dtype (``normal_icdf<T>`` for the normal
draws of float32 and the 16-bit floats), ``integers<T, wide>`` per integer dtype and width, and
``cumulative_weights``; one group per transform (a first ``normal`` call compiles the normal draws
only).
"""

from __future__ import annotations

import ctypes
import functools
from typing import Any

from rocm_array import dtypes, memory
from rocm_array.array import Array
from rocm_array.devices import Device
from rocm_array.dtypes import DType
from rocm_array.hookspecs import KernelSource
from rocm_array.launch import BLOCK, Family, PerTarget, grid_1d, i64, ptr

from . import backs, streams

__all__ = ["kernel_sources"]

OPS = ("uniform", "normal", "exponential")
_WEIGHTS = "cumulative_weights<double>"
#: Threads a block of the normal draws of the table (normal_icdf): each block copies the 32 KiB
#: table to its LDS, so a CU holds 2 of them on CDNA (64 KiB) and 4 on RDNA (128 KiB a WGP); blocks
#: of 1024 and 512 threads keep a SIMD's 8 and 16 waves. NVIDIA: BLOCK (228 KiB an SM: 7 blocks of
#: 8 warps). From the kernels' resources, not timed on AMD.
_ICDF_BLOCK = PerTarget(nvidia=BLOCK, cdna=1024, rdna=512)
#: cumulative_weights runs on one thread of a block of one wave (launches are whole waves).
RANDOM = Family("random/random.hip", {**streams.KERNEL_PHILOX, **streams.TERMS},
                {"normal_icdf": _ICDF_BLOCK, "cumulative_weights": PerTarget(nvidia=32, cdna=64, rdna=32)})


def _draw_kernel(op: str, dtype: DType) -> tuple[str, bool]:
    """The kernel of ``op``'s draws of ``dtype``, and whether it takes the transforms' constants
    (the table's normal draws compile theirs in)."""
    if op == "normal" and dtype is not dtypes.float64:
        return f"normal_icdf<{dtype.c_type}>", False
    return f"draw<{op}_op, {dtype.c_type}>", True


@functools.lru_cache(maxsize=None)
def _groups() -> dict[str, tuple[str, ...]]:
    out = {op: tuple(_draw_kernel(op, t)[0] for t in streams.FLOATS) for op in OPS}
    out["integers"] = tuple(f"integers<{t.c_type}, {w}>" for t in streams.INTEGERS for w in ("false", "true"))
    out["weights"] = (_WEIGHTS,)
    return out


def kernel_sources() -> list[KernelSource]:
    """Every program the gpu back compiles, grouped as at run time."""
    return RANDOM.sources(_groups().values())


@functools.lru_cache(maxsize=None)
def _consts() -> Any:
    return streams.consts()


def _stream_args(key: tuple[int, int], stream: int, counter: int) -> list[Any]:
    return [streams.key_struct(key), ctypes.c_uint64(stream), ctypes.c_uint64(counter)]


def _launch(device: Device, group: str, name: str, blocks: int, args: list[Any]) -> None:
    """Launch ``name`` over ``blocks`` Philox blocks, a thread each (grid-striding)."""
    threads = RANDOM.block(device, name)
    RANDOM.launch(device, name, _groups()[group], grid_1d(blocks, device, block=threads), (threads, 1, 1), args)


def draw(op: str, out: Array, key: tuple[int, int], stream: int, counter: int, a: float, b: float) -> None:
    dtype, device, n = out.dtype, out.device, out.size
    if n:
        name, takes_consts = _draw_kernel(op, dtype)
        consts = [_consts()] if takes_consts else []
        real = ctypes.c_double if dtype is dtypes.float64 else ctypes.c_float  # the precision computed in
        _launch(device, op, name, streams.blocks(n, streams.float_words(dtype)),
                [ptr(out), *i64(n), *_stream_args(key, stream, counter), real(a), real(b), *consts])


def integers(out: Array, key: tuple[int, int], stream: int, counter: int, low: int, span: int) -> None:
    dtype, device, n = out.dtype, out.device, out.size
    if n:
        words = streams.integer_words(span)
        wide = "true" if words == 4 else "false"
        _launch(device, "integers", f"integers<{dtype.c_type}, {wide}>", streams.blocks(n, words),
                [ptr(out), *i64(n), *_stream_args(key, stream, counter), ctypes.c_uint64(low % (1 << 64)),
                 ctypes.c_uint64(span)])


def cumulative_weights(p: Array) -> Array:
    """One thread adds the weights in order: the cpu back's order, so both give the same bits
    (a parallel scan would round differently); one pass over choice()'s weights."""
    out = memory.empty(p.shape, p.dtype, p.device)
    RANDOM.launch(p.device, _WEIGHTS, _groups()["weights"], (1, 1, 1), (RANDOM.block(p.device, _WEIGHTS), 1, 1),
                  [ptr(out), ptr(p), *i64(p.size)])
    return out


def register() -> None:
    backs.DRAW["gpu"] = draw
    backs.INTEGERS["gpu"] = integers
    backs.WEIGHTS["gpu"] = cumulative_weights
