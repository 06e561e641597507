"""``Launcher``: one kernel with a fixed argument signature, for the launches whose host cost counts.

A general launch (``GpuRuntime.launch``) makes a ctypes value per argument and
an array of pointers to them on every call: about a microsecond of the few a
small op costs. A Launcher lays its arguments out once, as the kernel declares
them (each at its C alignment, as a ctypes Structure would), with the pointer
array the driver reads already pointing into that block; a call packs the new
values into the block with one ``struct.pack_into`` and launches. The driver
copies the arguments before the launch call returns, so the block is reused by
the next call; each thread has its own block (cheaper than a lock: the bindings
let other threads run during the driver call).
"""

from __future__ import annotations

import ctypes
import struct
import threading
from typing import Any, Sequence

__all__ = ["Launcher"]

#: struct codes (standard sizes, no padding) of the ctypes argument types that pack as numbers.
_CODES: dict[Any, str] = {
    ctypes.c_void_p: "Q", ctypes.c_bool: "?", ctypes.c_int8: "b", ctypes.c_uint8: "B",
    ctypes.c_int16: "h", ctypes.c_uint16: "H", ctypes.c_int32: "i", ctypes.c_uint32: "I",
    ctypes.c_int64: "q", ctypes.c_uint64: "Q", ctypes.c_float: "f", ctypes.c_double: "d",
}


class Launcher:
    """``function`` with arguments of ``argtypes`` (ctypes types), launched on ``driver``'s stream.

    A call takes the grid and a sequence of one value per argument: an int (a device
    address for ``c_void_p``; 0 is NULL) or float for the number types, and ``bytes`` of
    the argument's size for any other type (a struct, a half or complex scalar).
    """

    __slots__ = ("_send", "_pack", "_size", "_offsets", "_local")

    def __init__(self, driver: Any, function: Any, argtypes: Sequence[Any], block: tuple[int, int, int],
                 shared: int = 0) -> None:
        layout = type("Arguments", (ctypes.Structure,), {"_fields_": [(f"a{i}", t) for i, t in enumerate(argtypes)]})
        self._offsets = [getattr(layout, f"a{i}").offset for i in range(len(argtypes))]
        fmt, end = "=", 0
        for offset, t in zip(self._offsets, argtypes):
            fmt += "x" * (offset - end) + _CODES.get(t, f"{ctypes.sizeof(t)}s")
            end = offset + ctypes.sizeof(t)
        self._pack = struct.Struct(fmt).pack_into
        self._size = max(ctypes.sizeof(layout), 1)
        self._send = driver.sender(function, block, shared)
        self._local = threading.local()

    def _block(self) -> tuple[Any, int, Any]:
        """This thread's argument block, the address of its pointer array, and the array."""
        args = ctypes.create_string_buffer(self._size)
        base = ctypes.addressof(args)
        params = (ctypes.c_void_p * max(len(self._offsets), 1))(*(base + o for o in self._offsets))
        block = self._local.block = (args, ctypes.addressof(params), params)
        return block

    def __call__(self, grid: tuple[int, int, int], values: Sequence[Any]) -> None:
        try:
            args, address, _ = self._local.block
        except AttributeError:
            args, address, _ = self._block()
        self._pack(args, 0, *values)
        self._send(grid, address)
