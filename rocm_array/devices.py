"""Devices: ``cpu`` (NumPy does the work) and ``gpu:N`` (a runtime platform does).

A GPU device holds its runtime (bytes, kernels, streams). What a device does with
Arrays is in the backs chosen by ``Device.kind``: the memory package's and the
plugins'.
"""

from __future__ import annotations

import os
from typing import Any, cast

from . import runtime
from .runtime.protocol import Runtime

__all__ = ["Device", "cpu", "available", "default", "parse", "check_same"]


class Device:
    """A place where arrays live. ``kind`` is ``"cpu"`` or ``"gpu"``."""

    __slots__ = ("kind", "index", "_runtime")

    def __init__(self, kind: str, index: int = 0, runtime: Runtime | None = None) -> None:
        self.kind = kind
        self.index = index
        self._runtime = runtime

    @property
    def runtime(self) -> Runtime:
        """The platform runtime of a GPU device (AttributeError on ``cpu``)."""
        if self._runtime is None:
            raise AttributeError("the cpu device has no GPU runtime")
        return self._runtime

    def __repr__(self) -> str:
        return "cpu" if self.kind == "cpu" else f"gpu:{self.index}"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and other.kind == self.kind and other.index == self.index

    def __hash__(self) -> int:
        return hash((self.kind, self.index))

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        # By name: the runtime (driver handles, locks) is this process's; another finds its own.
        return parse, (str(self),)


cpu = Device("cpu")

_gpus: tuple[Device, ...] | None = None
_gpu_problems: list[str] = []


def gpus() -> tuple[Device, ...]:
    """The GPUs the runtime found (discovered once, on first use)."""
    global _gpus
    if _gpus is None:
        found, problems = runtime.discover()
        _gpu_problems[:] = problems
        _gpus = tuple(Device("gpu", i, rt) for i, rt in enumerate(found))
    return _gpus


def gpu_problems() -> list[str]:
    """Why GPUs (or a platform) are missing, for ``python -m rocm_array info``."""
    gpus()
    return list(_gpu_problems)


def available() -> tuple[Device, ...]:
    """Every device: ``cpu`` and then the GPUs."""
    return (cpu, *gpus())


def parse(spec: object, name: str = "") -> Device:
    """A Device from a Device or a string like ``"cpu"``, ``"gpu"`` or ``"gpu:1"``; the errors name
    the function ``name`` when given."""
    if isinstance(spec, Device):
        return spec
    who = f"{name}(): " if name else ""
    if not isinstance(spec, str):
        raise TypeError(f"{who}device must be a rocm_array device or a string such as 'cpu' or 'gpu:0', "
                        f"not {type(spec).__name__}")
    kind, _, idx = spec.strip().partition(":")
    if kind == "cpu" and not idx:
        return cpu
    if kind == "gpu":
        try:
            index = int(idx) if idx else 0
        except ValueError:
            raise ValueError(f"{who}bad device {spec!r}: expected 'cpu' or 'gpu:N'") from None
        found = gpus()
        if 0 <= index < len(found):
            return found[index]
        why = "; ".join(gpu_problems()) or f"{len(found)} GPU(s) present"
        raise ValueError(f"{who}no device {spec!r}: {why}")
    raise ValueError(f"{who}bad device {spec!r}: expected 'cpu' or 'gpu:N'")


_default: Device | None = None


def default() -> Device:
    """``ROCM_ARRAY_DEVICE`` if set, else the first GPU, else ``cpu``."""
    global _default
    if _default is None:
        spec = os.environ.get("ROCM_ARRAY_DEVICE")
        if spec:
            _default = parse(spec)
        else:
            _default = next(iter(gpus()), cpu)
    return _default


def resolve(device: object | None, name: str = "") -> Device:
    """The device a creation function ``name`` uses: the one given, or the default."""
    return default() if device is None else parse(device, name)


def check_same(*arrays: Any) -> Device:
    """The one device shared by ``arrays``; ValueError (no silent copy) when they differ."""
    dev = arrays[0].device
    for a in arrays[1:]:
        if a.device != dev:
            raise ValueError(
                f"arrays are on different devices ({dev} and {a.device}); "
                "move one with to_device() first"
            )
    return cast("Device", dev)
