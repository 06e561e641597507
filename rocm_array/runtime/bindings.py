"""What the two platform modules share about their bindings (platform neutral: imports none).

hip-python mirrors cuda-bindings: every call returns ``(status, *values)``, and
hiprtc's calls have NVRTC's names and shapes with another prefix. So the status
check, the per-thread device activation and the run-time compiler wrapper are
written once here, and each platform module configures them with its bindings.
"""

from __future__ import annotations

import functools
import threading
from typing import Any, Callable, cast

from .protocol import DriverError, DriverOutOfMemory

__all__ = ["text", "describe_status", "checker", "in_context", "BindingsRtc"]


def text(value: Any) -> str:
    """A C string from the bindings (bytes up to the first NUL, or anything printable)."""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).split(b"\0")[0].decode(errors="replace")
    return str(value)


def describe_status(status: Any, explain: Callable[[Any], Any] | None = None) -> str:
    """A status as text: its enum name, and the library's own sentence for it where there is one.

    ``explain`` is a ``*GetErrorString`` binding. Its result is ``(text,)`` in some hip-python
    versions and ``(status, text)`` in others, so the last element is the text. It runs only on
    an error path, so a failure of its own (a library that cannot be loaded) costs the sentence,
    never the error being reported.
    """
    name = getattr(status, "name", None) or str(status)
    if explain is None:
        return name
    try:
        result = explain(status)
        sentence = text(result[-1] if isinstance(result, tuple) else result)
    except Exception:  # noqa: BLE001 - the status's name is still reported
        return name
    return name if not sentence or sentence in ("None", name) else f"{name} ({sentence})"


def checker(success: Any, out_of_memory: Any,
            explain: Callable[[Any], Any] | None = None) -> Callable[[tuple[Any, ...], str], Any]:
    """A function that returns a call's values, or raises naming the call and its status."""

    def check(result: tuple[Any, ...], call: str) -> Any:
        status, *values = result
        if status != success:
            cls = DriverOutOfMemory if out_of_memory is not None and status == out_of_memory else DriverError
            raise cls(f"{call} failed: {describe_status(status, explain)}")
        return values[0] if len(values) == 1 else tuple(values)

    return check


class Current(threading.local):
    """What a platform's drivers made current on each thread (a context, a device index), None on a
    thread where they made nothing current. The class default makes each read a plain attribute
    read, where ``getattr(local, name, None)`` is a builtin call: about 550 of the instructions
    every launch spends checking it (callgrind, CPython 3.11)."""

    made: Any = None


def in_context(method: Callable[..., Any]) -> Callable[..., Any]:
    """Make the driver's device current on the calling thread first (finalizers run anywhere)."""

    @functools.wraps(method)
    def call(self: Any, *args: Any) -> Any:
        self.activate()
        return method(self, *args)

    return call


class BindingsRtc:
    """NVRTC or hiprtc through its Python bindings; a platform module sets the class attributes."""

    name: str  # the call prefix too: "nvrtc", "hiprtc"
    granular = True  # an in-process library: a small program compiles in a fraction of a second
    api: Any  # the bindings module
    success: Any  # the status of a successful call
    code_kind: str  # "CUBIN" (nvrtcGetCUBIN) or "Code" (hiprtcGetCode)
    check: Callable[[tuple[Any, ...], str], Any]  # a staticmethod: see ``checker``
    # a staticmethod: the target's compiler options (or ``target_options`` overridden, where they
    # depend on the compiler's version: NVRTC's)
    options: Callable[[str, int], list[str]]

    @staticmethod
    def spell(expr: str) -> str:
        """A name expression as this compiler looks it up."""
        return expr

    @staticmethod
    def handle(prog: Any) -> Any:
        """What ``DestroyProgram`` takes for ``prog``: NVRTC's bindings take the program, hiprtc's a
        pointer to it (``hiprtcProgram*``)."""
        return prog

    @staticmethod
    def buffer(size: int) -> Any:
        """A writable buffer the bindings fill (a log, the code)."""
        return bytearray(size)

    def _call(self, fn: str, *args: Any) -> Any:
        return self.check(getattr(self.api, self.name + fn)(*args), self.name + fn)

    def version(self) -> str:
        major, minor = self._call("Version")
        return f"{major}.{minor}"

    def target_options(self, arch: str, wave_size: int) -> list[str]:
        return self.options(arch, wave_size)

    def create(self, source: str, filename: str, headers: dict[str, str]) -> Any:
        return self._call("CreateProgram", source.encode(), filename.encode(), len(headers),
                          [h.encode() for h in headers.values()], [n.encode() for n in headers])

    def add_name(self, prog: Any, expr: str) -> None:
        self._call("AddNameExpression", prog, self.spell(expr).encode())

    def compile(self, prog: Any, options: list[str]) -> bool:
        (status,) = getattr(self.api, self.name + "CompileProgram")(prog, len(options), [o.encode() for o in options])
        return cast("bool", status == self.success)

    def log(self, prog: Any) -> str:
        buf = self.buffer(self._call("GetProgramLogSize", prog))
        self._call("GetProgramLog", prog, buf)
        return text(buf)

    def lowered(self, prog: Any, expr: str) -> str:
        return text(self._call("GetLoweredName", prog, self.spell(expr).encode()))

    def code(self, prog: Any) -> bytes:
        buf = self.buffer(self._call(f"Get{self.code_kind}Size", prog))
        self._call(f"Get{self.code_kind}", prog, buf)
        return bytes(buf)

    def destroy(self, prog: Any) -> None:
        self._call("DestroyProgram", self.handle(prog))
