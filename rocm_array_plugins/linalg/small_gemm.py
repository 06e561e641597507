"""The plan and launch of ``rocm_array_kernels/linalg/small_gemm.hip``: batched float32 products of matrices
of at most 64 x 64, one product a block, where it beats the vendor BLAS's batched GEMM.

``plan`` says whether a product goes to it, and with which instantiation; ``gpu.product`` asks
before it calls the BLAS. The kernel needs asynchronous copies to win (the whole batch's operands
in flight at once), so the plan takes it only where the GPU has them (NVIDIA from sm_80); on other
GPUs it would be the same kernel with plain loads, and nobody has measured it against rocBLAS.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

from rocm_array import dtypes
from rocm_array.array import Array
from rocm_array.devices import Device
from rocm_array.hookspecs import KernelSource
from rocm_array.launch import Family, address
from rocm_array.runtime.launcher import Launcher

__all__ = ["SMALL_GEMM", "Config", "FULL", "GENERAL", "SMALL", "CONFIGS", "kernel_sources", "plan", "launch"]


@dataclass(frozen=True)
class Config:
    """One instantiation: products of up to ``tile`` x ``tile``; each thread sums ``tm`` x ``tn``
    outputs; the operands arrive in k-chunks of ``kc``."""

    tile: int
    tm: int
    tn: int
    kc: int

    @property
    def name(self) -> str:
        return f"small_gemm<{self.tile}, {self.tm}, {self.tn}, {self.kc}>"

    @property
    def threads(self) -> int:
        return (self.tile // self.tm) * (self.tile // self.tn)


#: The instantiations, all compiled together (and by the compile check). Measured on an H200 against
#: cuBLAS's batched GEMM (torch.bmm), each call's events queued behind a hold as in benchmarks/,
#: batches of 16 to 4096 products: SMALL took 0.67-0.85x cuBLAS's time at 32 x 32 and below (and
#: 0.61x for a single product); the 64 tile as the plan picks 0.76-1.01x, but for 56^3 in 1024
#: products (1.08x). FULL is the faster of the two for full-height products in batches of two
#: blocks an SM or more (64^3, 512 products: 14.2 against GENERAL's 15.2 and cuBLAS's 14.7 us).
#: BENCHMARKS.md, "Small batched products", has the table.
FULL = Config(64, 8, 4, 32)  # 128 threads: fewer shared-memory reads a multiply-add
GENERAL = Config(64, 4, 4, 16)  # 256 threads: more warps to hide latency, finer skipping of rows past m
SMALL = Config(32, 4, 4, 16)  # 64 threads
CONFIGS = (FULL, GENERAL, SMALL)
SMALL_GEMM = Family("linalg/small_gemm.hip", threads={c.name: c.threads for c in CONFIGS})
#: Fewer 64-tile products than this go to the BLAS: one block a product leaves most SMs idle, and
#: cuBLAS's kernel for one product of 64^3 took 6.0 us against GENERAL's 7.3 us.
MIN_COUNT = 16
#: NVIDIA's first architecture with cp.async (portability.h's ra_copy16_async).
ASYNC_COPIES_FROM = 80


def kernel_sources() -> list[KernelSource]:
    return SMALL_GEMM.sources([_names()])


def _names() -> tuple[str, ...]:
    return tuple(c.name for c in CONFIGS)


def _async_copies(device: Device) -> bool:
    props = device.runtime.properties
    return props.platform == "nvidia" and int(props.arch.removeprefix("sm_")) >= ASYNC_COPIES_FROM


def plan(device: Device, dtype: dtypes.DType, m: int, n: int, k: int, count: int,
         a: Array, lda: int, sa: int, b: Array, ldb: int, sb: int) -> Config | None:
    """The instantiation that computes ``count`` products of row-major (m x k) and (k x n)
    operands at these strides (elements) faster than the BLAS, or None."""
    if dtype is not dtypes.float32 or max(m, n, k) > 64 or count >= 2**31 or not _async_copies(device):
        return None
    # 16-byte pieces: rows and batch steps of whole float4s, from 16-byte aligned addresses.
    if (n | k | lda | ldb | sa | sb) % 4 or (address(a) | address(b)) % 16:
        return None
    if max(m, n, k) <= 32:
        return SMALL
    # At n <= 32 half the 64 tile's threads sum columns past n (64x64 @ 64x32, 4096 products:
    # 70 us against cuBLAS's 52).
    if count < MIN_COUNT or n <= 32:
        return None
    return FULL if m > 48 and count > 2 * device.runtime.properties.compute_units else GENERAL


def launch(config: Config, out: Array, a: Array, b: Array, m: int, n: int, k: int, count: int,
           lda: int, sa: int, ldb: int, sb: int) -> None:
    """Queue the products into ``out`` (count x m x n, contiguous)."""
    key = (out.device._runtime, config)
    launcher = _LAUNCHERS.get(key)
    if launcher is None:
        launcher = _LAUNCHERS[key] = SMALL_GEMM.launcher(
            out.device, config.name, _names(), _ARGTYPES, (config.threads, 1, 1))
    launcher((count, 1, 1), (address(out), address(a), address(b), m, n, k, sa, lda, sb, ldb))


_ARGTYPES = [ctypes.c_void_p] * 3 + [ctypes.c_int32] * 3 + [ctypes.c_int64, ctypes.c_int32] * 2
#: (runtime, config) -> its Launcher.
_LAUNCHERS: dict[tuple[object, Config], Launcher] = {}
