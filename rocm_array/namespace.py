"""The assembled function table that Arrays and the shim call through.

Filled once, at import, by ``assembly.assemble``. Keys are the public names
(``"add"``, ``"linalg.solve"``, ``"nn.conv2d"``) and the Array methods plugins
provide (``"Array.__getitem__"``, ``"Array.__setitem__"``, ``"Array._inplace"``).
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, Any, Callable

from .dtypes import BY_NAME

if TYPE_CHECKING:
    from .plugin_manager import PluginStatus


class PluginUnavailableError(AttributeError):
    """A function whose plugin is blocked, failed to load, or is not installed."""


class PluginConflictError(PluginUnavailableError):
    """Two plugins provide one name and no priority decides between them: the name is left out."""


class FunctionTable(dict[str, Callable[..., Any]]):
    """name -> implementation; a missing name raises an error that says which plugin has it."""

    #: Why a name is missing when no plugin is known to provide it.
    NO_PROVIDER = "no installed plugin provides it"

    def __init__(self) -> None:
        super().__init__()
        self.missing: dict[str, str] = {}  # name -> why it is unavailable
        self.conflicts: dict[str, str] = {}  # name -> the plugins that both provide it, and the fix
        self.default_reason = self.NO_PROVIDER
        self.plugins: list[PluginStatus] = []  # what the assembly that filled this table found

    def __missing__(self, name: str) -> Callable[..., Any]:
        if name in self.conflicts:
            raise PluginConflictError(f"rocm_array.{name} is unavailable: {self.conflicts[name]}")
        if name not in self.missing and self.default_reason == self.NO_PROVIDER:
            hint = self.hint(name)
            if hint:
                raise PluginUnavailableError(f"rocm_array has no {name}: {hint}")
        why = self.missing.get(name, self.default_reason)
        raise PluginUnavailableError(f"rocm_array.{name} is unavailable: {why}")

    def hint(self, name: str) -> str:
        """What a name no plugin provides is likely meant to be: the standard's name for a NumPy
        name (``NUMPY_NAMES``), else a close spelling of a name the namespace has ("" if none)."""
        prefix, _, leaf = name.rpartition(".")
        standard = NUMPY_NAMES.get(leaf)
        if standard is not None:
            return f"did you mean {standard}? ({leaf} is NumPy's name; the standard's is {standard})"
        here = [k for k in self if k.rpartition(".")[0] == prefix] + ([] if prefix else [*BY_NAME, *self.missing])
        close = difflib.get_close_matches(name, here, 1, 0.75)
        return f"did you mean {close[0]}?" if close else ""


#: NumPy's names whose function or dtype the standard (and so rocm_array) names otherwise.
NUMPY_NAMES = {
    "float": "float64", "double": "float64", "float_": "float64", "single": "float32", "half": "float16",
    "int": "int64", "int_": "int64", "complex": "complex128", "cdouble": "complex128", "csingle": "complex64",
    "bool_": "bool", "concatenate": "concat", "transpose": "permute_dims", "power": "pow", "absolute": "abs",
    "arccos": "acos", "arcsin": "asin", "arctan": "atan", "arctan2": "atan2", "arccosh": "acosh",
    "arcsinh": "asinh", "arctanh": "atanh", "invert": "bitwise_invert", "left_shift": "bitwise_left_shift",
    "right_shift": "bitwise_right_shift", "cumsum": "cumulative_sum", "cumprod": "cumulative_prod",
    "amax": "max", "amin": "min", "array": "asarray", "ndarray": "Array", "unique": "unique_values",
}


TABLE = FunctionTable()


def by_name(name: str) -> Callable[..., Any]:
    """The namespace's function ``name``: how a table row pickles (by name, as functions do; its
    caches hold this process's runtimes and kernels). Unpickling imports this module, and so the
    package first, which assembles TABLE."""
    return TABLE[name]
