"""The switch of deferred elementwise results on GPUs ("fusion").

With fusion on, an elementwise function of GPU arrays of one shape returns an array whose data
is not computed yet: an expression over its operands, which later elementwise functions extend.
The whole expression runs as one generated kernel when its data is first needed (any other use:
indexing, a reduction, printing, a device transfer, DLPack, a Python scalar, an in-place write).
The elementwise plugin builds and runs the expressions; the core knows a deferred result only as
a ``runtime.buffer.LazyBuffer`` (computed when read, and before its operands are written in
place: ``memory.before_write``). Another plugin's kernel may compute an expression in place of
reading its result (a reduction does, in its first pass): it asks this module for them
(``expressions()``, the ``Expressions`` protocol), which their provider, the elementwise plugin,
registers when it loads (``register_expressions``); no plugin imports another's internals for it.
This module holds that contract, the switch and ``compute``:

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
from typing import TYPE_CHECKING, Any, Iterator, Protocol, Sequence

from .runtime.buffer import LazyBuffer

if TYPE_CHECKING:
    from .array import Array
    from .devices import Device
    from .dtypes import DType

__all__ = ["FUSION_VAR", "FusionFallbackWarning", "Expression", "Expressions", "active", "enabled", "set_enabled",
           "eager", "compute", "expressions", "register_expressions"]

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


class Expression(Protocol):
    """A deferred result's expression, as another plugin's kernel computes it: through the C++ type
    ``RaComputed<RaFused>`` (``rocm_array_kernels/elementwise/fused.hip``), its elements from 0."""

    @property
    def out_dtype(self) -> DType:
        """The dtype of its elements."""

    def source(self) -> str:
        """The C++ text of its ``RaFused`` (the same for every expression of its operations, dtypes
        and layouts), which a program appends to ``Expressions.prelude()`` and its own code."""

    def computed(self) -> bytes:
        """The bytes of its ``RaComputed<RaFused>``: the kernel argument that reads its elements."""


class Expressions(Protocol):
    """What the provider of deferred expressions offers the kernels of other plugins that fuse them."""

    def expression(self, x: Array) -> Expression | None:
        """The expression of the deferred ``x`` when ``x`` views all of it in order and it is not
        computed yet, else None (``x`` is read as an array)."""

    def prelude(self) -> str:
        """What a program computing an expression starts with (the code ``Expression.source`` uses)."""

    def generated(self, device: Device, path: str, name: str, options: tuple[str, ...], prelude: str,
                  source: str) -> Any:
        """The loaded kernel ``name`` of the generated program ``prelude + source``, or None while it
        compiles or when it did not (the caller then reads the expression's result as an array).
        ``path`` has one prelude: kernels are found by ``source``, the whole program built only to
        compile it."""

    def examples(self) -> Sequence[Expression]:
        """Expressions of every kind, for the compile check's programs."""


_expressions: Expressions | None = None


def register_expressions(provider: Expressions) -> None:
    """Make ``provider`` the one ``expressions()`` returns (the elementwise plugin's, when it loads)."""
    global _expressions
    _expressions = provider


def expressions() -> Expressions | None:
    """The provider of deferred expressions, or None when none has registered (nothing is deferred
    then: a kernel reads every operand as an array)."""
    return _expressions


@contextlib.contextmanager
def eager() -> Iterator[None]:
    """Within the block, this thread's elementwise functions launch their kernels at once."""
    _local.eager = getattr(_local, "eager", 0) + 1
    try:
        yield
    finally:
        _local.eager -= 1
