"""rocm_array: an Array API standard (2025.12) namespace for AMD GPUs.

This module is a shim: it assembles the namespace from the plugins found
through the ``rocm_array.plugins`` entry points and exports it with the core's
dtypes, constants and inspection API. It computes nothing itself.
"""

from __future__ import annotations

import sys as _sys
import types as _types
from typing import Any as _Any

from . import log as _log  # noqa: F401  (sets the rocm_array logger's level from ROCM_ARRAY_LOG)
from . import plugin_manager as _plugin_manager
from .array import Array, expose_method as _expose_method
from .memory import cpu as _memory_cpu, gpu as _memory_gpu
from .constants import e, inf, nan, newaxis, pi
from .dtypes import (
    bfloat16, bool, complex64, complex128, float16, float32, float64,
    int8, int16, int32, int64, uint8, uint16, uint32, uint64,
)
from .info import __array_namespace_info__
# What users catch or filter, at the names the README gives them (``xp.AxisError``).
from .axes import AxisError
from .fusion import FusionFallbackWarning
from .namespace import PluginConflictError, PluginUnavailableError
from .plugin_manager import PluginConflictWarning, PluginListWarning, PluginLoadWarning
from .runtime.vendor import VendorFallbackWarning

__array_api_version__ = "2025.12"
__version__ = "0.1.0"

#: The sub-namespaces (extensions) plugins may fill: ``linalg.solve`` lands in ``rocm_array.linalg``.
_EXTENSIONS = ("linalg", "fft", "nn", "random")

_memory_cpu.register()
_memory_gpu.register()


_table: _Any = _plugin_manager.assemble()


def _export() -> None:
    subs: dict[str, _types.ModuleType] = {}
    for name, func in _table.items():
        prefix, _, leaf = name.rpartition(".")
        if not prefix:
            globals()[name] = func
        elif prefix == "Array":
            _expose_method(leaf)
        elif prefix in _EXTENSIONS:
            if prefix not in subs:
                subs[prefix] = _types.ModuleType(f"{__name__}.{prefix}", f"The {prefix} extension.")
            setattr(subs[prefix], leaf, func)
    for prefix, mod in subs.items():
        mod.__getattr__ = _missing_in(prefix)  # type: ignore[method-assign]
        globals()[prefix] = mod
        _sys.modules[mod.__name__] = mod


def _missing_in(prefix: str) -> _Any:
    def __getattr__(name: str) -> _Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _table[f"{prefix}.{name}"]
    return __getattr__


def __getattr__(name: str) -> _Any:
    """A name the plugins did not provide: say which plugin has it and how to turn it on."""
    if name.startswith("__"):
        raise AttributeError(f"module 'rocm_array' has no attribute {name!r}")
    if name in _EXTENSIONS:
        funcs = sorted(k for k in _table.missing if k.startswith(name + "."))
        why = _table.missing[funcs[0]] if funcs else _table.default_reason
        raise PluginUnavailableError(f"the rocm_array.{name} extension is unavailable: {why}")
    return _table[name]


_export()
