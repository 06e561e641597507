"""The launch kit of every GPU back: kernel families, argument packing and grids (platform neutral).

A ``Family`` is one HIP source of ``rocm_array_kernels/`` with the constants that Python and
that kernel share. Each constant is defined once, here in Python, and reaches the
kernel as a ``-D`` compile option; the source only uses it (``tests/test_launch.py``
checks that every constant a family passes is used by its source and defined
nowhere in it). A constant whose best value differs between kinds of GPU is a
``PerTarget``: the value for the device's kind is chosen at run time from its
architecture and passed the same way. A back launches through its family:

    SORT = Family("reduction/sort.hip", {"RA_RADIX": 256})
    SORT.launch(x.device, "count<float>", group, grid_1d(n, x.device), (BLOCK, 1, 1), [ptr(x), *i64(n)])

A family also declares the most threads a block of each of its kernels has (``threads``: BLOCK
unless it names another) and the dynamic shared memory it takes (``shared``). The same
declaration serves the launches, which it checks (whole waves of the device, no more threads
than declared), and the resource report of the compile check (``rocm_array.occupancy``), which
computes from it the waves each kernel keeps on a SIMD of every target.

Kernels are compiled by groups (the instantiations built together in one program)
through the device's runtime, which keeps the one cache of loaded functions.
"""

from __future__ import annotations

import ctypes
import functools
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, NamedTuple, Sequence, TYPE_CHECKING, TypeVar, cast

from .hookspecs import KernelSource
from .runtime import layout, targets
from .runtime.launcher import Launcher
from .runtime.targets import PerTarget

if TYPE_CHECKING:
    from .array import Array
    from .devices import Device

__all__ = ["Family", "PerTarget", "LaunchError", "prepare", "address", "ptr", "i64", "grid_1d", "template", "BLOCK"]

BLOCK = layout.BLOCK


class LaunchError(ValueError):
    """A launch its family does not allow: a block of other than whole waves of the device, or of
    more threads or dynamic shared memory than the family declares for the kernel."""


def template(name: str) -> str:
    """The kernel template of a name expression: ``radix_onesweep`` of ``ra::radix_onesweep<...>``."""
    return name.partition("<")[0].rpartition("::")[2].strip()


class _On(NamedTuple):
    """What a family's launches on one device need: the device's kind, wave size and architecture,
    and the options its kernels compile with there."""

    kind: str
    wave: int
    arch: str
    options: tuple[str, ...]


@dataclass(frozen=True, eq=False)  # one object per family: hashed by identity (backs key tables by it)
class Family:
    """The kernels of ``rocm_array_kernels/<source>``, compiled with ``defines`` (name -> integer, or a
    ``PerTarget``). ``threads``: the most threads a block of a kernel has, by its name expression or
    its template's name (a number, a ``PerTarget``, or the name of one of ``defines``: the constant
    its ``__launch_bounds__`` use), BLOCK for those not named; ``shared``: the most dynamic shared
    memory a block of a kernel takes, by the same names (bytes; 0 for those not named)."""

    source: str
    defines: Mapping[str, int | PerTarget] = field(default_factory=dict)
    threads: Mapping[str, int | PerTarget | str] = field(default_factory=dict)
    shared: Mapping[str, int] = field(default_factory=dict)
    _devices: dict[Any, _On] = field(default_factory=dict, init=False, repr=False)
    _bounds: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict, init=False, repr=False)

    @functools.cached_property
    def kinds(self) -> tuple[str, ...]:
        """The kinds of GPU whose programs differ (each of ``KINDS`` when a value is a ``PerTarget``),
        else ``()``: one program serves all."""
        values = [*self.defines.values(), *self.threads.values()]
        return targets.KINDS if any(isinstance(v, PerTarget) for v in values) else ()

    @functools.lru_cache(maxsize=None)  # (a family lives as long as the process)
    def options(self, kind: str) -> tuple[str, ...]:
        """The ``-D`` options of the constants for a kind of GPU (``KINDS``), sorted by name."""
        return tuple(f"-D{name}={value.of(kind) if isinstance(value, PerTarget) else value}"
                     for name, value in sorted(self.defines.items()))

    def most_threads(self, kind: str, name: str) -> int:
        """The most threads a block of the kernel ``name`` has on a kind of GPU (see ``threads``)."""
        value = self.threads.get(name, self.threads.get(template(name), BLOCK))
        if isinstance(value, str):
            value = self.defines[value]
        return value.of(kind) if isinstance(value, PerTarget) else value

    def most_shared(self, name: str) -> int:
        """The most dynamic shared memory (bytes) a block of the kernel ``name`` takes."""
        return self.shared.get(name, self.shared.get(template(name), 0))

    def _on(self, device: Device) -> _On:
        runtime = device.runtime
        on = self._devices.get(runtime)
        if on is None:
            p = runtime.properties
            kind = targets.kind(p.arch, p.wave_size)
            on = self._devices[runtime] = _On(kind, p.wave_size, p.arch, self.options(kind))
        return on

    def value(self, device: Device, name: str) -> int:
        """The value of the constant ``name`` (one of ``defines``) on ``device``."""
        value = self.defines[name]
        return value.of(self._on(device).kind) if isinstance(value, PerTarget) else value

    def options_on(self, device: Device) -> tuple[str, ...]:
        """The options this family's kernels compile with on ``device``."""
        return self._on(device).options

    def block(self, device: Device, name: str) -> int:
        """The threads a block of ``name`` has on ``device`` where the family declares its block
        per kind of GPU (a back launches with it)."""
        return self.most_threads(self._on(device).kind, name)

    def check(self, device: Device, name: str, block: tuple[int, int, int], shared: int = 0) -> None:
        """Raise LaunchError unless a block of ``block`` threads taking ``shared`` bytes of dynamic
        shared memory is one ``name`` may be launched with on ``device`` (see the class). Every
        launch asks: the bounds are looked up once a kind and name (a check took 0.18 us so, 0.53 us
        looking them up each time, on a 2-core CI host)."""
        on = self._on(device)
        threads = block[0] * block[1] * block[2]
        bounds = self._bounds.get((on.kind, name))
        if bounds is None:
            bounds = self._bounds[(on.kind, name)] = (self.most_threads(on.kind, name), self.most_shared(name))
        if threads % on.wave:
            raise LaunchError(
                f"{self.source}: {name} launched with blocks of {block} ({threads} threads), not a multiple of "
                f"the wave size {on.wave} of {on.arch}: launch whole waves (the device's wave_size)")
        if threads > bounds[0] or shared > bounds[1]:
            raise LaunchError(
                f"{self.source}: {name} launched with blocks of {block} ({threads} threads, {shared} bytes of dynamic "
                f"shared memory), more than its family declares ({bounds[0]} threads, {bounds[1]} bytes): "
                f"declare the larger block in the Family's threads or shared (its __launch_bounds__ too), or "
                f"launch a smaller one")

    def kernel(self, device: Device, name: str, group: Sequence[str] = ()) -> Any:
        """The loaded function ``name`` on ``device``, compiled with the instantiations of ``group``."""
        return device.runtime.kernel(self.source, name, group, self._on(device).options)

    def launch(self, device: Device, name: str, group: Sequence[str], grid: tuple[int, int, int],
               block: tuple[int, int, int], args: Sequence[Any], shared: int = 0) -> None:
        """Queue ``name`` on ``device``'s stream; ``args`` are ctypes values in the kernel's order."""
        self.check(device, name, block, shared)
        device.runtime.launch(self.kernel(device, name, group), grid, block, args, shared)

    def launcher(self, device: Device, name: str, group: Sequence[str], argtypes: Sequence[Any],
                 block: tuple[int, int, int], shared: int = 0) -> Launcher:
        """A ``Launcher`` of ``name``: the cheap launch of hot paths (arguments packed in place; the
        block checked once, here)."""
        self.check(device, name, block, shared)
        return device.runtime.launcher(self.kernel(device, name, group), argtypes, block, shared)

    def prepare(self, device: Device, names: Iterable[str], group: Sequence[str] = ()) -> None:
        """Make ready the kernels ``names`` that a call is about to launch (see ``prepare``)."""
        prepare(device, *((self, name, group) for name in names))

    def sources(self, groups: Iterable[Sequence[str]], text: str | None = None) -> list[KernelSource]:
        """The ``rocm_array_kernels`` entries of ``groups``, each compiled as the backs compile it:
        one a group, or one a group and kind of GPU where values differ between kinds. ``text``: the
        program generated at run time that ``source`` names (a fused expression's)."""
        # (a family without values per kind: any kind's options and blocks are all kinds')
        per_kind: list[tuple[str, tuple[str, ...]]] = [(k, (k,)) for k in self.kinds] or [(targets.KINDS[0], ())]
        return [KernelSource(self.source, tuple(g), self.options(kind), text, kinds,
                             tuple(self.most_threads(kind, n) for n in g), tuple(self.most_shared(n) for n in g))
                for g in groups for kind, kinds in per_kind]


def prepare(device: Device, *kernels: tuple[Family, str, Sequence[str]]) -> None:
    """Make ready the kernels (family, name, group) that a call is about to launch, in any
    family: those not compiled yet compile at once, on threads. A back that launches several
    kernels calls it first, so that its first call waits for the slowest compile, not their sum."""
    device.runtime.prepare([(f.source, name, group, f.options_on(device)) for f, name, group in kernels])


#: The plans a table of them keeps at most (``kept``): a bound on their memory in a loop over ever new
#: shapes (all are dropped when it is reached), not a measured optimum.
MOST_PLANS = 512
_P = TypeVar("_P")


def kept(plans: dict[Any, _P], key: Any, plan: _P) -> _P:
    """``plan``, kept in ``plans`` under ``key`` (a back's table of launches resolved once for a kind of
    operands), which is emptied first when it holds ``MOST_PLANS``."""
    if len(plans) >= MOST_PLANS:
        plans.clear()
    plans[key] = plan
    return plan


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
