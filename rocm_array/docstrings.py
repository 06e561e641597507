"""Docstrings made from the fields of table rows (the elementwise, reduction and scan functions).

A row class sets ``__doc__ = RowDoc(__doc__, render)``: the class keeps its own docstring, and each
row (``xp.add``, ``xp.sum``) gets one rendered from its fields, in the NumPy style the reference
site reads (Sphinx napoleon). A new row is documented by its fields and its one-line ``doc``; its
example comes from the plugin's ``examples`` module, which ``python -m rocm_array generate`` writes
by running the example on ``cpu`` (CI checks that it is current and runs it as a doctest).
"""

from __future__ import annotations

import re
import textwrap
from typing import Any, Callable, Generic, Sequence, TypeVar, overload

from .dtypes import ALL, CATEGORIES

__all__ = ["RowDoc", "Routine", "render", "admitted", "backs_note", "PARAMETERS", "DEFAULT_DEVICE", "parameters"]

Row = TypeVar("Row")
F = TypeVar("F", bound=Callable[..., Any])

#: Parameter paragraphs written once: name -> (the NumPy-style head, the text before the default).
#: A docstring line ``{name}`` (indented as the other parameters) becomes the paragraph with the
#: default ``parameters`` gives it.
PARAMETERS = {
    "dtype": ("dtype : DType, optional", "The result dtype (a NumPy dtype or scalar type names ours)."),
    "device": ("device : device or str, optional",
               'Where the result lives: ``"cpu"``, ``"gpu"``, ``"gpu:N"`` or a device object.'),
}
#: The default device, in the words of the ``device`` paragraph.
DEFAULT_DEVICE = "the default device (``ROCM_ARRAY_DEVICE``, else the first GPU, else cpu)"
_SLOT = re.compile(r"^( *)\{(\w+)\}$", re.M)


def parameters(**defaults: str) -> Callable[[F], F]:
    """Decorate a function whose docstring has ``{name}`` lines of ``PARAMETERS``: each becomes that
    paragraph, ending ``Default: <defaults[name]>.``; a slot without a default, or a default without
    a slot, is an error at import."""
    def fill(f: F) -> F:
        used: set[str] = set()

        def paragraph(m: re.Match[str]) -> str:
            indent, name = m.group(1), m.group(2)
            head, text = PARAMETERS[name]
            used.add(name)
            body = textwrap.fill(f"{text} Default: {defaults[name]}.", 100, initial_indent=indent + "    ",
                                 subsequent_indent=indent + "    ")
            return f"{indent}{head}\n{body}"

        f.__doc__ = _SLOT.sub(paragraph, f.__doc__ or "")
        if used != set(defaults):
            raise ValueError(f"{f.__name__}: defaults for {sorted(set(defaults) - used)} without a slot")
        return f
    return fill


class RowDoc(Generic[Row]):
    """``__doc__`` of a row class: the class's docstring on the class, a rendered one on a row."""

    def __init__(self, class_doc: str | None, make: Callable[[Row], str]) -> None:
        self.class_doc, self.make = class_doc, make

    @overload
    def __get__(self, row: None, owner: type) -> str | None: ...
    @overload
    def __get__(self, row: Row, owner: type) -> str: ...

    def __get__(self, row: Row | None, owner: type) -> str | None:
        return self.class_doc if row is None else self.make(row)


class Routine:
    """A base of the row classes whose rows are the namespace's functions (ufuncs, reductions,
    scans): ``help(xp.sum)`` then shows the row as a function, its signature and its docstring,
    where it showed the row's repr (``sum = Reduction(name='sum', …``) as a header. pydoc documents
    method descriptors so; a row becomes one by a ``__get__`` that returns the row itself, so a row
    kept as a class attribute is never bound, as before."""

    __slots__ = ()

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        return self


def admitted(category: str) -> str:
    """The dtypes a category admits, in words: ``"a real floating dtype (float16, bfloat16, …)"``."""
    names = ", ".join(d.name for d in ALL if d in CATEGORIES[category])
    return "any dtype" if category == "any" else f"a {category} dtype ({names})"


def backs_note(numpy: Callable[..., Any], kernel: str) -> str:
    """The Notes line on who computes a row: NumPy (or rocm_array's wrapper of it) and the kernel."""
    module = getattr(numpy, "__module__", None) or "numpy"
    cpu = (f"NumPy's ``numpy.{numpy.__name__}``" if module.startswith("numpy") or module == "numpy"
           else f"rocm_array's wrapper ``{numpy.__name__}`` of NumPy in ``{module}``, where NumPy departs "
                "from the standard")
    return f"Devices: on ``cpu``, {cpu}; on a GPU, {kernel}, compiled at run time for the device."


def render(summary: str, extended: Sequence[str], params: Sequence[tuple[str, str]],
           returns: str, raises: Sequence[tuple[str, str]], notes: Sequence[str], example: str) -> str:
    """A NumPy-style docstring from its parts (each description one paragraph)."""
    def wrap(text: str, indent: str = "") -> list[str]:
        return textwrap.wrap(text, 96, initial_indent=indent, subsequent_indent=indent) or [""]

    out = [summary, ""]
    for paragraph in extended:
        out += [*wrap(paragraph), ""]
    out += ["Parameters", "----------"]
    for head, text in params:
        out += [head, *wrap(text, "    ")]
    out += ["", "Returns", "-------", "Array", *wrap(returns, "    "), "", "Raises", "------"]
    for exc, text in raises:
        out += [exc, *wrap(text, "    ")]
    out += ["", "Notes", "-----"]
    for i, paragraph in enumerate(notes):
        out += [*([""] if i else []), *wrap(paragraph)]
    if example:
        out += ["", "Examples", "--------", ">>> import rocm_array as xp", example]
    return "\n".join(out) + "\n"
