"""Stand-ins for the GPU bindings that hold every call to what the installed binding declares.

The platform modules (``runtime/amd.py``, ``nvidia.py``, ``blas_*``, ``fft_*``) are imported
with each bindings module replaced by a ``Spy`` of the real one. A spy hands out the real
module's attributes, so a name the installed version lacks fails at once. Calling a function
does not reach the library (there is no GPU here). Instead, the call is checked against what
the binding says of that function:

- the parameters of its signature;
- every argument declared with a C integer type is an int;
- (hip-python) every argument passes the adapter or enum check the binding applies to it;
- the call returns as many values as the binding returns.

The return values come from the test's ``answers`` (a per-function table), or are a
placeholder handle. So a mismatch in a name, an argument, a type or the shape of a result
fails here, for the version installed, without a GPU.

Three binding styles are read:

- hip-python: C types in the docstring's first line, adapters in its ``Args``, and the
  returned tuple from the function's ``return`` in the ``.pyx`` source shipped beside the module.
- cuda-bindings: C types in the first line, and the ``Returns`` section of the docstring.
- nvmath-python: C types and the return annotation in the first line. Its functions
  raise on failure and return the value itself.
"""

from __future__ import annotations

import enum
import functools
import importlib
import inspect
import re
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

__all__ = ["Contract", "Spy", "CallRecord", "HANDLE"]

#: What a call that returns a handle or a pointer gets by default: an address-like int.
HANDLE = 0x1000
_C_INTEGERS = {"int", "long", "unsigned", "short", "char", "size_t", "ssize_t", "intptr_t", "uintptr_t",
               "int32_t", "int64_t", "uint32_t", "uint64_t", "long long", "unsigned int", "unsigned long",
               "unsigned long long", "signed char", "unsigned char", "bint"}
_FIRST_LINE = re.compile(r"^\s*(\w+)\((.*)\)\s*(?:->\s*(.+?))?\s*$")
# hip-python's Args entries: ``name (`~.TYPE`/`~.object`):`` (6.x, 7.x) or with ``:py:obj:`` (10).
_HIP_ARG = re.compile(r"^\s+(\w+) \((?::py:obj:)?`~\.([\w.]+)`")


def _first_line(fn: Any) -> tuple[list[tuple[str, str]], str | None]:
    """(C type, name) of each parameter and the return annotation, from the Cython signature line."""
    match = _FIRST_LINE.match((fn.__doc__ or "").split("\n", 1)[0])
    if match is None:
        return [], None
    params = []
    for part in _split_top(match.group(2)):
        part = part.split("=")[0].split(":")[0].strip()  # a default, or a Python annotation
        *ctype, name = part.replace("*", " * ").split()
        params.append((" ".join(ctype), name))  # "char *" is a pointer, never in _C_INTEGERS
    return params, match.group(3)


def _split_top(text: str) -> list[str]:
    """The comma-separated items of ``text`` at bracket depth 0."""
    items, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    return [s for s in (i.strip() for i in items) if s]


@functools.lru_cache(maxsize=None)
def _pyx_returns(path: str) -> dict[str, int]:
    """Each ``def``'s returned tuple length, from a hip-python ``.pyx`` source."""
    found: dict[str, int] = {}
    name = None
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.startswith("def "):
            name = line[4:line.index("(")]
        elif line.startswith(("cdef ", "class ", "@")):
            name = None
        elif name and line.startswith("    return (") and line.rstrip().endswith(")"):
            found[name] = len(_split_top(line.strip()[len("return ("):-1]))
    return found


def _numpydoc_returns(doc: str) -> int | None:
    """How many values a cuda-bindings function returns: the entries of its ``Returns`` section
    (lines at the section's own indentation, up to the next section's dashes)."""
    lines = doc.splitlines()
    for i, line in enumerate(lines[:-1]):
        if line.strip() == "Returns" and lines[i + 1].strip().startswith("---"):
            indent = len(line) - len(line.lstrip())
            body = lines[i + 2:]
            ends = [j for j in range(len(body) - 1) if body[j + 1].strip().startswith("---")]
            body = body[:ends[0]] if ends else body
            return sum(1 for b in body if b.strip() and len(b) - len(b.lstrip()) == indent)
    return None


@dataclass
class Contract:
    """What the installed binding declares of one function."""

    name: str
    signature: inspect.Signature
    integers: frozenset[str]  # parameters declared with a C integer type
    returns: int | None  # length of the returned tuple; None: one value, not a tuple
    adapters: dict[str, Callable[[Any], None]] = field(default_factory=dict)  # parameter -> check

    def check(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"{self.name}{self.signature} called with {len(args)} arguments: {exc}") from None
        for param, value in bound.arguments.items():
            if param in self.integers and not (isinstance(value, int) and not isinstance(value, bool)):
                raise TypeError(f"{self.name}: argument {param!r} is declared as a C integer, got {value!r}")
            adapter = self.adapters.get(param)
            if adapter is not None:
                try:
                    adapter(value)
                except Exception as exc:  # the binding's own conversion refuses it
                    raise TypeError(f"{self.name}: argument {param!r} = {value!r} is refused by the "
                                    f"binding's conversion: {type(exc).__name__}: {exc}") from None


def _hip_adapter(module: types.ModuleType, declared: str) -> Callable[[Any], None] | None:
    """The check hip-python applies to an argument declared as ``declared``."""
    if declared in ("int", "float", "object", "bool"):
        return None
    if "." in declared:  # an adapter class by its full path: hip._util.types.Pointer, rocm.bindings...
        mod, _, cls = declared.rpartition(".")
        adapter = getattr(importlib.import_module(mod), cls)
        return adapter.fromObj
    base = getattr(module, f"_{declared}__Base", None)  # hip-python's enums check against their base
    if base is not None:
        def is_enum(value: Any) -> None:
            if not isinstance(value, base):
                raise TypeError(f"not a {declared} (a {type(value).__name__})")
        return is_enum
    cls = getattr(module, declared, None)
    if cls is None:  # enums and structs shared by every hip-python module live in its ``hip`` module
        shared = importlib.import_module(module.__name__.rpartition(".")[0] + ".hip")
        cls = getattr(shared, declared, None)
    if isinstance(cls, type) and issubclass(cls, enum.Enum):
        def is_member(value: Any) -> None:
            if not isinstance(value, cls):
                raise TypeError(f"not a {declared} (a {type(value).__name__})")
        return is_member
    return getattr(cls, "fromObj", None)


def contract(style: str, module: types.ModuleType, name: str, fn: Any) -> Contract:
    """Read one function's contract in ``style`` ("hip-python", "cuda-bindings" or "nvmath")."""
    typed, annotation = _first_line(fn)
    integers = frozenset(n for t, n in typed if t in _C_INTEGERS)
    adapters: dict[str, Callable[[Any], None]] = {}
    returns: int | None
    if style == "hip-python":
        for line in (fn.__doc__ or "").splitlines():
            m = _HIP_ARG.match(line)
            if m and m.group(1) not in integers:
                adapter = _hip_adapter(module, m.group(2))
                if adapter is not None:
                    adapters[m.group(1)] = adapter
        pyx = Path(module.__file__).with_name(module.__name__.rpartition(".")[2] + ".pyx")
        returns = _pyx_returns(str(pyx)).get(name)
        if returns is None:
            raise LookupError(f"{name}: no return statement found in {pyx}")
    elif style == "cuda-bindings":
        returns = _numpydoc_returns(fn.__doc__ or "")
        if returns is None:
            raise LookupError(f"{name}: its docstring has no Returns section")
    elif style == "nvmath":
        returns = None
        if annotation == "tuple":
            returns = -1  # a tuple of a length the docstring does not give: the test's answer decides
    else:
        raise ValueError(style)
    return Contract(name, inspect.signature(fn), integers, returns, adapters)


@dataclass
class CallRecord:
    """Every call the spies passed, by function name, in order."""

    calls: list[tuple[str, tuple[Any, ...]]] = field(default_factory=list)

    def names(self) -> list[str]:
        return [n for n, _ in self.calls]


class Spy(types.ModuleType):
    """A bindings module whose functions check their calls instead of running them."""

    def __init__(self, real: types.ModuleType, style: str, answers: dict[str, Any], record: CallRecord,
                 success: Any = 0) -> None:
        super().__init__(real.__name__)
        self._real, self._style, self._answers, self._record, self._success = real, style, answers, record, success
        self._wrapped: dict[str, Any] = {}

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        value = getattr(self._real, name)  # a name the installed binding lacks fails here
        if not callable(value) or isinstance(value, type):
            return value
        if name not in self._wrapped:
            self._wrapped[name] = self._wrap(name, value)
        return self._wrapped[name]

    def _wrap(self, name: str, fn: Any) -> Any:
        c = contract(self._style, self._real, name, fn)
        answers, record, success, style = self._answers, self._record, self._success, self._style

        def call(*args: Any, **kwargs: Any) -> Any:
            c.check(args, kwargs)
            record.calls.append((name, args))
            answer = answers.get(name, HANDLE)
            answer = answer(*args) if callable(answer) and not isinstance(answer, type) else answer
            if c.returns is None:  # nvmath: the value itself
                return answer
            if c.returns == -1:
                if name not in answers:
                    raise LookupError(f"{name} returns a tuple: give the test an answer for it")
                return answer
            values = answer if isinstance(answer, tuple) else (answer,)
            if style == "hip-python" or style == "cuda-bindings":
                values = (success, *values)[:c.returns]
                values += (HANDLE,) * (c.returns - len(values))
            return values

        call.__name__ = name
        call.__signature__ = c.signature  # type: ignore[attr-defined]  # what inspect then reports, as for the real one
        return call
