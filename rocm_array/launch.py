"""The launch kit of every GPU back: kernel families, argument packing and grids (platform neutral).

A ``Family`` is one HIP source of ``kernels/`` with the constants that Python and
that kernel share. Each constant is defined once, here in Python, and reaches the
kernel as a ``-D`` compile option; the source only uses it (``tests/test_launch.py``
checks that every constant a family passes is used by its source and defined
nowhere in it). A back launches through its family:

    SORT = Family("reduction/sort.hip", {"RA_RADIX": 256})
    SORT.launch(x.device, "count<float>", group, grid_1d(n, x.device), (BLOCK, 1, 1), [ptr(x), *i64(n)])

Kernels are compiled by groups (the instantiations built together in one program)
through the device's runtime, which keeps the one cache of loaded functions.
"""

from __future__ import annotations

import ctypes
import functools
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence, TYPE_CHECKING, cast

from .hookspecs import KernelSource
from .runtime import layout
from .runtime.launcher import Launcher

if TYPE_CHECKING:
    from .array import Array
    from .devices import Device

__all__ = ["Family", "prepare", "address", "ptr", "i64", "grid_1d", "BLOCK"]

BLOCK = layout.BLOCK


@dataclass(frozen=True, eq=False)  # one object per family: hashed by identity (backs key tables by it)
class Family:
    """The kernels of ``kernels/<source>``, compiled with ``defines`` (name -> integer)."""

    source: str
    defines: Mapping[str, int] = field(default_factory=dict)

    @functools.cached_property  # read at every launch: a sort and a join apiece before
    def options(self) -> tuple[str, ...]:
        return tuple(f"-D{name}={value}" for name, value in sorted(self.defines.items()))

    def kernel(self, device: Device, name: str, group: Sequence[str] = ()) -> Any:
        """The loaded function ``name`` on ``device``, compiled with the instantiations of ``group``."""
        return device.runtime.kernel(self.source, name, group, self.options)

    def launch(self, device: Device, name: str, group: Sequence[str], grid: tuple[int, int, int],
               block: tuple[int, int, int], args: Sequence[Any], shared: int = 0) -> None:
        """Queue ``name`` on ``device``'s stream; ``args`` are ctypes values in the kernel's order."""
        device.runtime.launch(self.kernel(device, name, group), grid, block, args, shared)

    def launcher(self, device: Device, name: str, group: Sequence[str], argtypes: Sequence[Any],
                 block: tuple[int, int, int], shared: int = 0) -> Launcher:
        """A ``Launcher`` of ``name``: the cheap launch of hot paths (arguments packed in place)."""
        return device.runtime.launcher(self.kernel(device, name, group), argtypes, block, shared)

    def prepare(self, device: Device, names: Iterable[str], group: Sequence[str] = ()) -> None:
        """Make ready the kernels ``names`` that a call is about to launch (see ``prepare``)."""
        prepare(device, *((self, name, group) for name in names))

    def sources(self, groups: Iterable[Sequence[str]]) -> list[KernelSource]:
        """The ``rocm_array_kernels`` entries of ``groups``, each compiled as the backs compile it."""
        return [KernelSource(self.source, tuple(g), self.options) for g in groups]


def prepare(device: Device, *kernels: tuple[Family, str, Sequence[str]]) -> None:
    """Make ready the kernels (family, name, group) that a call is about to launch, in any
    family: those not compiled yet compile at once, on threads. A back that launches several
    kernels calls it first, so that its first call waits for the slowest compile, not their sum."""
    device.runtime.prepare([(f.source, name, group, f.options) for f, name, group in kernels])


def address(x: Array) -> int:
    """The device address of the first element of the GPU array ``x``."""
    return cast("int", x._buf.ptr + x._offset * x._dtype.itemsize)


def ptr(x: Array | None) -> ctypes.c_void_p:
    """``x``'s address as a pointer argument; NULL for None."""
    return ctypes.c_void_p(None if x is None else address(x))


def i64(*values: int) -> list[ctypes.c_int64]:
    """64-bit integer arguments."""
    return [ctypes.c_int64(v) for v in values]


def grid_1d(n: int, device: Device, per_thread: int = 1, block: int = BLOCK) -> tuple[int, int, int]:
    """The grid of a grid-stride loop over ``n`` items: enough blocks to fill the device, no more."""
    return (layout.grid_1d(n, device.runtime.properties.compute_units, per_thread, block), 1, 1)
