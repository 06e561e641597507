"""Device memory owned by Arrays: a buffer is freed when the last Array using it goes.

Arrays hold their buffer in ``Array._buf``; views share it, so the buffer's
lifetime is the longest of theirs. Freeing is stream-ordered: it waits for the
work already queued on the runtime's stream, never for the host.

Two kinds share ``Buffer``'s fields: ``DeviceBuffer``, memory that holds its values, and
``LazyBuffer``, the core's side of fusion: the buffer of a result computed when it is first read
(a plugin's deferred result, the elementwise plugin's ``Pending``). The core reads a lazy
buffer's values through ``ptr`` or ``force()``, and before memory is written in place it has the
results that read it (``readers``) computed first (``memory.before_write``): nothing else of a
plugin's deferral is known here.

A lazy buffer may join its operands' ``readers`` late: a plugin puts it in ``UNSETTLED`` instead, and
takes it out when it is computed. ``sweep()`` drops those nothing else holds, which an allocation that
finds the device full does first, and the plugin once it computed an expression that read some of
them. ``settle()`` sweeps, then registers the rest (``LazyBuffer.settle``): ``memory.before_write``
does it first, and the plugin at ``SETTLE_AT``. A result computed at once (``fusion.compute(a + b)``)
then never makes the weak reference and the list entries a registration costs: 2,134 of the 28,958
instructions of a deferred-then-computed ``a + b`` (tests/test_host_budget.py).
"""

from __future__ import annotations

import atexit
import sys
import threading
from typing import Any, Callable

__all__ = ["Buffer", "DeviceBuffer", "LazyBuffer", "SHARED", "UNSETTLED", "SETTLE_AT", "settle", "sweep"]

#: ``DeviceBuffer.readers`` of memory that another library may write at any time (DLPack).
SHARED = "shared"

_exiting = False


@atexit.register
def _exit() -> None:
    global _exiting
    _exiting = True


class Buffer:
    """What every buffer of a GPU array has: its size, its device, what keeps its memory alive, and
    ``readers``: the deferred results that read this memory (weak references to their
    ``LazyBuffer``, see ``memory.before_write``), or SHARED: memory another library may write
    (DLPack), which results are never deferred over."""

    __slots__ = ("nbytes", "device_index", "owner", "readers", "__weakref__")

    def __init__(self, nbytes: int, device_index: int, owner: Any = None) -> None:
        self.nbytes = nbytes
        self.device_index = device_index
        self.owner = owner
        self.readers: Any = None


class DeviceBuffer(Buffer):
    """``nbytes`` of device memory at address ``ptr`` on one device.

    ``release`` (a driver's ``free_async``, or a DLPack producer's deleter)
    runs once, when the buffer is garbage; ``owner`` keeps whatever the memory
    belongs to alive until then.
    """

    __slots__ = ("ptr", "_release")

    def __init__(self, ptr: int, nbytes: int, device_index: int,
                 release: Callable[[int], Any] | None, owner: Any = None) -> None:
        self.ptr = ptr
        self.nbytes = nbytes
        self.device_index = device_index
        self.owner = owner
        self.readers: Any = None  # (Buffer's fields set here: a buffer per result makes a call count)
        self._release = release

    def __del__(self) -> None:
        # __del__, not weakref.finalize: a buffer per elementwise result makes its cost count
        # (about 3 us against 0.6). At interpreter exit the process's memory goes with it, and the
        # driver may be gone first: nothing is released then. ``_exiting`` is False until the exit
        # handlers run, which is before the interpreter's finalization; once modules are torn down
        # their globals read None, ``_exiting`` too, and ``is False`` still says so (a Dask worker's
        # chunks freed then had raised in every worker's exit). A call of sys.is_finalizing had said
        # the same, for about 400 of the instructions of each result's release.
        if self._release is not None and _exiting is False:
            self._release(self.ptr)

    def __reduce__(self) -> Any:
        # A raw device address means nothing in another process: pickle the Array, which copies
        # its elements through the host.
        raise TypeError("a DeviceBuffer cannot be pickled (its device address is this process's); "
                        "pickle the rocm_array Array that views it")

    def __repr__(self) -> str:
        return f"DeviceBuffer(0x{self.ptr:x}, {self.nbytes} bytes, device {self.device_index})"


class LazyBuffer(Buffer):
    """The buffer of a result computed when first read: ``force()`` computes it (once, on any thread)
    and gives the DeviceBuffer that holds it; ``ptr`` is that buffer's address. A plugin that defers
    its results subclasses this (see the module's docstring)."""

    __slots__ = ()

    @property
    def ptr(self) -> int:
        return self.force().ptr

    def force(self) -> DeviceBuffer:
        raise NotImplementedError(f"{type(self).__name__} must define force(), which computes the result")

    def settle(self) -> None:
        """Register this result as a reader of the memory it reads, unless it is computed (``settle``
        calls it for each buffer taken from ``UNSETTLED``)."""
        raise NotImplementedError(f"{type(self).__name__} is in UNSETTLED, so it must define settle()")


#: Lazy buffers not yet among the ``readers`` of the memory they read, in the order they came (a dict
#: used as an ordered set: adding one and taking it out are single atomic operations, without a lock).
UNSETTLED: dict[LazyBuffer, None] = {}
#: The plugin settles ``UNSETTLED`` when it holds this many: a bound on the results, and the arrays
#: they read, that it keeps alive past their last use (a result dropped uncomputed stays there until
#: then, or until an expression is computed: ``sweep``). Not a measured optimum: small, since a
#: computed result leaves at once.
SETTLE_AT = 16
_settling = threading.Lock()


def sweep() -> None:
    """Drop the buffers of ``UNSETTLED`` that nothing else holds (no array views them, no other result
    reads them: a chain's inner results once the chain is computed), so that the arrays they read go
    now."""
    for lazy in list(UNSETTLED):
        if sys.getrefcount(lazy) <= 4:  # (UNSETTLED, the list, ``lazy`` and the call's argument)
            UNSETTLED.pop(lazy, None)


def settle() -> None:
    """Empty ``UNSETTLED``: drop the buffers nothing else holds (``sweep``), and register the others
    as readers of their memory. Under a lock, so that a ``memory.before_write`` on another thread
    returns only once each is registered."""
    with _settling:
        sweep()
        while UNSETTLED:
            try:
                lazy, _ = UNSETTLED.popitem()
            except KeyError:  # (taken out meanwhile: computed on another thread)
                break
            lazy.settle()
