"""The ``nn`` plugin: ``xp.nn``, the operations of a tensor framework's neural-network backend.

Convolutions, pooling, upsampling, gather/scatter and index ops, softmax, norms
and activations, in NCHW / NCL layouts, on every device. Each module lists what
it provides in ``IMPLS``; the hook gathers them, after ``cpu`` and ``gpu`` fill the
tables of ``backs`` (no GPU is touched until a kernel is launched). The activations
are rows of the elementwise plugin, which computes them (and fuses them on GPUs).
"""

from __future__ import annotations

from rocm_array.backs import register_once
from rocm_array.hookspecs import Impl, KernelSource, hookimpl

from . import conv, cpu, gpu, index, pointwise, pool, rows


_register = register_once(cpu, gpu)


@hookimpl
def rocm_array_functions() -> list[Impl]:
    _register()
    return [*pointwise.IMPLS, *rows.IMPLS, *conv.IMPLS, *pool.IMPLS, *index.IMPLS]


@hookimpl
def rocm_array_kernels() -> list[KernelSource]:
    return gpu.kernel_sources()


@hookimpl
def rocm_array_needs() -> list[str]:
    return ['elementwise', 'linalg']
