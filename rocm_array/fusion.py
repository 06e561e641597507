"""The switch of deferred elementwise results on GPUs ("fusion").

With fusion on, an elementwise function of GPU arrays of one shape returns an array whose data
is not computed yet: an expression over its operands, which later elementwise functions extend.
The whole expression runs as one generated kernel when its data is first needed (any other use:
indexing, a reduction, printing, a device transfer, DLPack, a Python scalar, an in-place write).
The elementwise plugin builds and runs the expressions; the core knows a deferred result only as
a ``runtime.buffer.LazyBuffer`` (computed when read, and before its operands are written in
place: ``memory.before_write``). This module holds the switch and ``compute``:

- it is on by default; ``ROCM_ARRAY_FUSION=0`` turns it off for the process (read at import);
  the GPU suite and array-api-tests pass either way (on an H100);
- ``set_enabled(flag)`` turns it on or off for the process;
- ``with eager():`` runs this thread's elementwise functions as eager kernels inside the block.

Results are the same bits either way: a generated kernel rounds each operation's result to its
dtype as the eager kernels do, and never contracts two operations into one (no fused
multiply-add across them).
"""

from __future__ import annotations

import contextlib
import os
import threading
from typing import TYPE_CHECKING, Iterator

from .runtime.buffer import LazyBuffer

if TYPE_CHECKING:
    from .array import Array

__all__ = ["FUSION_VAR", "FusionFallbackWarning", "active", "enabled", "set_enabled", "eager", "compute"]

FUSION_VAR = "ROCM_ARRAY_FUSION"

_on = os.environ.get(FUSION_VAR, "1").strip() != "0"
_local = threading.local()


class FusionFallbackWarning(UserWarning):
    """An expression's generated kernel did not compile: its operations run one by one (the same
    results), said once per expression shape, with the compiler's message."""


def enabled() -> bool:
    """Whether fusion is on for the process (``set_enabled``, or ``ROCM_ARRAY_FUSION``)."""
    return _on


def set_enabled(flag: bool) -> None:
    """Turn fusion on or off for the process. Results already deferred stay so until needed."""
    global _on
    _on = bool(flag)


def active() -> bool:
    """Whether an elementwise function called now on this thread may defer its result."""
    return _on and not getattr(_local, "eager", 0)


def compute(x: Array) -> Array:
    """``x``, its data computed now if it is a deferred result (its kernel queued on the device's
    stream, as an eager function's would be); any other array as it is. No use of an array needs
    it (each computes what it reads); it puts the work at a chosen point, to time it, say."""
    buf = x._buf
    if isinstance(buf, LazyBuffer):
        buf.force()
    return x


@contextlib.contextmanager
def eager() -> Iterator[None]:
    """Within the block, this thread's elementwise functions launch their kernels at once."""
    _local.eager = getattr(_local, "eager", 0) + 1
    try:
        yield
    finally:
        _local.eager -= 1
