"""The ``nn`` plugin: ``xp.nn``, the operations of a tensor framework's neural-network backend.

Convolutions, pooling, upsampling, gather/scatter and index ops, softmax, norms
and activations, in NCHW / NCL layouts, on every device. Each front module
(``front_<group>``) lists what it provides in ``IMPLS``; the hook gathers them, after
``cpu`` and ``gpu`` fill the tables of ``backs`` (no GPU is touched until a kernel is
launched). The activations are rows of the elementwise plugin, which computes them (and
fuses them on GPUs).
"""

from __future__ import annotations

from rocm_array.backs import register_once
from rocm_array.hookspecs import Impl, KernelSource, hookimpl

from . import cpu, front_conv, front_index, front_pointwise, front_pool, front_rows, gpu


_register = register_once(cpu, gpu)


@hookimpl
def rocm_array_functions() -> list[Impl]:
    _register()
    return [*front_pointwise.IMPLS, *front_rows.IMPLS, *front_conv.IMPLS, *front_pool.IMPLS, *front_index.IMPLS]


@hookimpl
def rocm_array_kernels() -> list[KernelSource]:
    return gpu.kernel_sources()


@hookimpl
def rocm_array_needs() -> list[str]:
    return ['elementwise', 'linalg']
