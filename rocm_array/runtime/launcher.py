"""``launcher``: one kernel with a fixed argument signature, for the launches whose host cost counts.

A general launch (``GpuRuntime.launch``) makes a ctypes value per argument and
an array of pointers to them on every call: about a microsecond of the few a
small op costs. A launcher lays its arguments out once, as the kernel declares
them (each at its C alignment, as a ctypes Structure would), with the pointer
array the driver reads already pointing into that block; a call packs the new
values into the block with one ``struct.pack_into`` and launches. The driver
copies the arguments before the launch call returns, so the block is reused by
the next call; each thread has its own block (cheaper than a lock: the bindings
let other threads run during the driver call).
"""

from __future__ import annotations

import ctypes
import functools
import struct
import threading
from typing import Any, Callable, Sequence

__all__ = ["Launcher", "launcher"]

#: struct codes (standard sizes, no padding) of the ctypes argument types that pack as numbers.
_CODES: dict[Any, str] = {
    ctypes.c_void_p: "Q", ctypes.c_bool: "?", ctypes.c_int8: "b", ctypes.c_uint8: "B",
    ctypes.c_int16: "h", ctypes.c_uint16: "H", ctypes.c_int32: "i", ctypes.c_uint32: "I",
    ctypes.c_int64: "q", ctypes.c_uint64: "Q", ctypes.c_float: "f", ctypes.c_double: "d",
}


#: A launch: ``launch(grid, values)``, one value per kernel argument: an int (a device address for
#: ``c_void_p``; 0 is NULL) or float for the number types, and ``bytes`` of the argument's size for any
#: other type (a struct, a half or complex scalar). A tuple of values is the cheapest to pass.
Launcher = Callable[[tuple[int, int, int], Sequence[Any]], None]


@functools.lru_cache(maxsize=None)
def _layout(argtypes: tuple[Any, ...]) -> tuple[Callable[..., None], int, tuple[int, ...]]:
    """The packing of arguments of ``argtypes`` (each at its C alignment, as a ctypes Structure lays them
    out), the block's size and each argument's offset: made once for a signature (a plan made and not
    kept, as a reduction's of a cast operand, would otherwise make a Structure type at each call)."""
    layout = type("Arguments", (ctypes.Structure,), {"_fields_": [(f"a{i}", t) for i, t in enumerate(argtypes)]})
    offsets = tuple(getattr(layout, f"a{i}").offset for i in range(len(argtypes)))
    fmt, end = "=", 0
    for offset, t in zip(offsets, argtypes):
        fmt += "x" * (offset - end) + _CODES.get(t, f"{ctypes.sizeof(t)}s")
        end = offset + ctypes.sizeof(t)
    return struct.Struct(fmt).pack_into, max(ctypes.sizeof(layout), 1), offsets


def launcher(driver: Any, function: Any, argtypes: Sequence[Any], block: tuple[int, int, int],
             shared: int = 0) -> Launcher:
    """The launch of ``function`` with arguments of ``argtypes`` (ctypes types) on ``driver``'s stream.

    A closure, not an object with ``__call__``: CPython calls a function without the lookup and the
    argument tuple a ``__call__`` costs (about 600 instructions a call, callgrind)."""
    pack, size, offsets = _layout(tuple(argtypes))
    send, local = driver.sender(function, block, shared), threading.local()

    def new_block() -> tuple[Any, int, Any]:
        """This thread's packing of arguments into its block (``pack_into`` bound to the block and
        offset 0: a call with a tuple of values passes it on as it is, where ``pack(args, 0,
        *values)`` built a new one, about 800 instructions a launch), the address of its pointer
        array, and the two arrays."""
        args = ctypes.create_string_buffer(size)
        base = ctypes.addressof(args)
        params = (ctypes.c_void_p * max(len(offsets), 1))(*(base + o for o in offsets))
        block = local.block = (functools.partial(pack, args, 0), ctypes.addressof(params), (args, params))
        return block

    def launch(grid: tuple[int, int, int], values: Sequence[Any]) -> None:
        try:
            packer, address, _ = local.block
        except AttributeError:
            packer, address, _ = new_block()
        packer(*values)
        send(grid, address)

    return launch
