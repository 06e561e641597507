"""The deep-learning primitives library of a GPU, behind one platform-neutral protocol.

``vendor.library("dnn", rt)`` gives the device's library (cuDNN through the
cudnn-frontend Python binding on ``nvidia``, MIOpen through its C API on ``amd``),
opened once per device, or says why it cannot be. Every call takes
contiguous NCHW tensors (``Tensor``: an address and a layout) of one float dtype and
queues the work on the runtime's stream; ``Unsupported`` means the library declined this shape or dtype, and the
caller computes it with its own kernels. Only ``dnn_nvidia`` and ``dnn_amd`` import
the vendor bindings.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, Protocol

if TYPE_CHECKING:
    from ..dtypes import DType

__all__ = ["Dnn", "Tensor", "Unsupported"]

Pair = tuple[int, int]


class Tensor(NamedTuple):
    """Device memory at ``ptr`` holding ``dtype`` elements in ``shape`` at ``strides`` (in elements)."""

    ptr: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    dtype: DType

    @property
    def ndim(self) -> int:
        return len(self.shape)


class Unsupported(Exception):
    """The library cannot run this problem (shape, dtype or parameters); use another path."""


class Dnn(Protocol):
    name: str

    def convolution(self, y: Tensor, x: Tensor, w: Tensor, stride: Pair, padding: Pair, dilation: Pair,
                    groups: int, transposed: bool) -> None:
        """y = conv(x, w) (weights (K, C/groups, kh, kw)), or the transposed convolution of x
        (weights (C, K/groups, kh, kw)), whose output size y's shape gives."""

    def pooling(self, y: Tensor, x: Tensor, window: Pair, stride: Pair, padding: Pair, mode: str) -> None:
        """y = pool(x); mode "max", "avg_include_pad" or "avg_exclude_pad"."""
