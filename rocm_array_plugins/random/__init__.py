"""The ``random`` plugin: ``xp.random.default_rng(seed)``, counter-based generators (Philox4x32-10)
that give the same numbers on ``cpu`` and on every GPU.

``front`` holds ``default_rng`` and its ``Generator``; ``cpu`` and ``gpu`` fill the tables of
``backs`` when the plugin is registered (no GPU is touched until a draw).
"""

from __future__ import annotations

from rocm_array.backs import register_once
from rocm_array.hookspecs import Impl, KernelSource, hookimpl

from . import cpu, front, gpu


_register = register_once(cpu, gpu)


@hookimpl
def rocm_array_functions() -> list[Impl]:
    _register()
    return list(front.IMPLS)


@hookimpl
def rocm_array_kernels() -> list[KernelSource]:
    return gpu.kernel_sources()


@hookimpl
def rocm_array_needs() -> list[str]:
    return ["elementwise", "reduction"]
