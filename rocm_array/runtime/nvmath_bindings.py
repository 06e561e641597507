"""nvmath-python's low-level bindings, imported without the rest of nvmath-python.

``import nvmath`` runs its package initializer, which preloads libraries and imports nvmath's FFT,
linear-algebra, sparse and tensor front ends: 0.7 s here, most of rocm_array's warm first matmul
and fft (642 ms and 632 ms on an H200, against CuPy's 138 ms and 27 ms). rocm_array calls only
cuSOLVER's binding module (``nvmath.bindings.cusolverDn``; cuBLAS and cuFFT go through ctypes,
``cdll``). ``load`` imports them
with their parent packages present but not initialized, then takes those placeholders away: a
later ``import nvmath`` (the user's, or another library's) initializes nvmath as usual and finds
the same binding modules. When nvmath is imported already, its modules are used as they are.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
from types import ModuleType

__all__ = ["load"]

_PARENTS = ("nvmath", "nvmath.bindings")
_LOCK = threading.Lock()


def _imported(name: str) -> ModuleType | None:
    """``nvmath.<name>`` as its parent package holds it now (imported, or stood in for by a test)."""
    parent, _, leaf = f"nvmath.{name}".rpartition(".")
    package = sys.modules.get(parent)
    return getattr(package, leaf, None) if package is not None else None


def load(*names: str) -> tuple[ModuleType, ...]:
    """The modules ``nvmath.<name>`` for ``names`` (``"bindings.cublas"``, ``"_utils"``…)."""
    found = [_imported(n) for n in names]
    if all(m is not None for m in found):
        return tuple(m for m in found if m is not None)
    with _LOCK:
        made = []
        for parent in _PARENTS:
            if parent not in sys.modules:
                spec = importlib.util.find_spec(parent)
                if spec is None:
                    raise ModuleNotFoundError(f"No module named {parent!r}", name=parent)
                sys.modules[parent] = importlib.util.module_from_spec(spec)  # not executed
                made.append(parent)
        try:  # (only the missing ones: a module its parent already holds is the one to use)
            return tuple(importlib.import_module(f"nvmath.{n}") if m is None else m for n, m in zip(names, found))
        finally:
            for parent in made:
                del sys.modules[parent]
