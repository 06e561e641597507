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
A reduction over the last axis may likewise be deferred by that provider (``RowReduction``,
``Expressions.reduce_rows``): an expression over such a result, broadcast back along the axis,
then runs as one kernel that reads each row once and does the reduction inside (a softmax, a
layer norm). This module holds that contract, the switch and ``compute``:

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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterator, Protocol, Sequence

from .runtime.buffer import LazyBuffer

if TYPE_CHECKING:
    from .array import Array
    from .devices import Device
    from .dtypes import DType

__all__ = ["FUSION_VAR", "FusionFallbackWarning", "Expression", "Expressions", "active", "state", "enabled",
           "set_enabled", "eager", "compute", "expressions", "register_expressions", "RowReduction"]

FUSION_VAR = "ROCM_ARRAY_FUSION"

_on = os.environ.get(FUSION_VAR, "1").strip() != "0"


class _Eager(threading.local):
    """This thread's depth of ``eager()`` blocks. (A class default, where ``getattr(local, name, 0)``
    raised and caught an AttributeError inside every deferred operation of a thread that had
    entered none: about 4,000 instructions of each.)"""

    depth = 0


_local = _Eager()
_blocks = 0  # ``eager()`` blocks open, on all threads
_blocks_lock = threading.Lock()


class _State:
    """What the lanes read at each operation, kept by ``set_enabled`` and ``eager()``: ``defer`` is
    True when fusion is on and no thread is inside an ``eager()`` block, False when fusion is off,
    and None when a thread is inside one (``active()`` then says, for the calling thread). A plain
    slot: a call costs about 600 instructions of the 26,000 an ``a + b`` is allowed, and a read of a
    thread-local attribute as much (callgrind; tests/test_host_budget.py)."""

    __slots__ = ("defer",)

    def __init__(self) -> None:
        self.defer: bool | None = _on


#: ``state.defer or state.defer is None and active()``: whether an elementwise function called now
#: may defer its result.
state = _State()


def _update() -> None:
    state.defer = (None if _blocks else True) if _on else False


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
    _update()


def active() -> bool:
    """Whether an elementwise function called now on this thread may defer its result."""
    return _on and not _local.depth


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


@dataclass(frozen=True, eq=False)
class RowReduction:
    """A reduction over the last axis as its plugin describes it to the provider of expressions, which
    may compute it inside a kernel of its own (a row kernel): the functors of the C++ program
    ``source`` (``map``, ``combine`` and ``finalize``, of accumulator dtype ``compute``, giving
    ``out_dtype``; ``correction``, the finalize's parameter), the ``threads`` of a block that the
    reduction's own kernel gives a row (a row kernel folding each thread's elements in that kernel's
    order, with that many threads, gets its bits), the ``options`` that ``source`` compiles with on
    the device, and ``eager``: the reduction of an array of rows by the plugin's own kernels (the
    result's elements, one a row), how the result is computed when it is read itself."""

    map: str
    combine: str
    finalize: str
    compute: DType
    out_dtype: DType
    correction: float
    threads: int
    source: str
    options: tuple[str, ...]
    eager: Callable[[Array], Array]


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

    def reduce_rows(self, x: Array, reduction: RowReduction, shape: tuple[int, ...]) -> Array | None:
        """The deferred ``reduction`` of the contiguous ``x`` over its last axis (an array of
        ``shape``: the reduced one, kept or not), or None when the provider does not defer it (its rows
        are too long for a row kernel, its memory is shared): the caller runs its own kernels."""

    def row_examples(self, reductions: Sequence[RowReduction]) -> list[tuple[str, str]]:
        """Row kernels of every kind over ``reductions`` (at least two; their ``source`` and
        ``options`` are the programs'), for the compile check: (kernel name, whole program)."""


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
    global _blocks
    with _blocks_lock:
        _local.depth += 1
        _blocks += 1
        _update()
    try:
        yield
    finally:
        with _blocks_lock:
            _local.depth -= 1
            _blocks -= 1
            _update()
