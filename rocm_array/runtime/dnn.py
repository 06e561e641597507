"""The deep-learning primitives library of a GPU, behind one platform-neutral protocol.

``library(rt)`` gives the device's library (cuDNN through the cudnn-frontend
Python binding on ``nvidia``, MIOpen through its C API on ``amd``), loaded once per
device, or None when it cannot be loaded (``why(rt)`` says why). Every call takes
contiguous NCHW arrays of one float dtype and queues the work on the runtime's
stream; ``Unsupported`` means the library declined this shape or dtype, and the
caller computes it with its own kernels. Only ``dnn_nvidia`` and ``dnn_amd`` import
the vendor bindings.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..array import Array
    from .gpu import GpuRuntime

__all__ = ["Dnn", "Unsupported", "library", "why"]

Pair = tuple[int, int]


class Unsupported(Exception):
    """The library cannot run this problem (shape, dtype or parameters); use another path."""


class Dnn(Protocol):
    name: str

    def convolution(self, y: Array, x: Array, w: Array, stride: Pair, padding: Pair, dilation: Pair,
                    groups: int, transposed: bool) -> None:
        """y = conv(x, w) (weights (K, C/groups, kh, kw)), or the transposed convolution of x
        (weights (C, K/groups, kh, kw)), whose output size y's shape gives."""

    def pooling(self, y: Array, x: Array, window: Pair, stride: Pair, padding: Pair, mode: str) -> None:
        """y = pool(x); mode "max", "avg_include_pad" or "avg_exclude_pad"."""


_LIBRARIES: dict[tuple[str, int], Dnn | None] = {}
_WHY: dict[tuple[str, int], str] = {}


def library(rt: GpuRuntime) -> Dnn | None:
    """The library of ``rt``'s device, loaded on first use; None when it is not usable."""
    key = (rt.platform, rt.properties.index)
    if key not in _LIBRARIES:
        try:
            if rt.platform == "nvidia":
                from .dnn_nvidia import Cudnn as lib
            else:
                from .dnn_amd import MIOpen as lib
            _LIBRARIES[key] = lib(rt)
        except Exception as exc:  # not installed, no library file, an incompatible version
            _LIBRARIES[key] = None
            _WHY[key] = f"{type(exc).__name__}: {exc}"
    return _LIBRARIES[key]


def why(rt: GpuRuntime) -> str:
    """Why ``library(rt)`` is None ("" when it loaded)."""
    library(rt)
    return _WHY.get((rt.platform, rt.properties.index), "")
