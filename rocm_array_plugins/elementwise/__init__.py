"""The ``elementwise`` plugin: elementwise functions and operators, creation,
manipulation, indexing, where/clip and the data type functions.

Each front module (``front_*``: the user-facing functions) lists what it provides in ``IMPLS``;
the hook gathers them, after ``cpu``, ``gpu``, ``gpu_indexing`` and ``gpu_lanes`` fill the tables of ``backs`` and
``deferred`` registers the plugin's deferred expressions with the core (``rocm_array.fusion``), where
other plugins' kernels fuse them (no GPU is touched until a gpu back is called).
"""

from __future__ import annotations

from rocm_array.backs import register_once
from rocm_array.hookspecs import Impl, KernelSource, Own, hookimpl

from . import (cpu, deferred, front_creation, front_data_types, front_indexing, front_manipulation, front_operators,
               front_where, fused, gpu, gpu_indexing, gpu_lanes, table)


_register = register_once(cpu, gpu, gpu_indexing, gpu_lanes, deferred)


@hookimpl
def rocm_array_functions() -> list[Impl]:
    _register()
    return [*front_operators.IMPLS, *front_data_types.IMPLS, *front_creation.IMPLS, *front_manipulation.IMPLS,
            *front_indexing.IMPLS, *front_where.IMPLS]


#: This plugin's own functions, for the plugins that need them (see ``Own``): its namespace's, and the
#: activation rows (``table.ACTIVATIONS``), which the nn plugin publishes in ``xp.nn`` through its fronts.
own = Own(lambda: [*rocm_array_functions(), *(Impl(u.name, u) for u in table.ACTIVATIONS)])


@hookimpl
def rocm_array_kernels() -> list[KernelSource]:
    return [*gpu.kernel_sources(), *gpu_indexing.kernel_sources(), *fused.kernel_sources()]
