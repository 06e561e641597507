"""The gpu back's lanes (``backs.LANES``): an elementwise row on operands of fixed kinds, resolved once.

A lane is the call a repeated ``a + b`` makes: the front's work (promotion, broadcasting, the
kernel's choice) was done by the first call of its operand kinds, and the lane only checks that
its operands are of those kinds, allocates the result and launches the row's contiguous kernel,
or defers the result (``deferred.Deferral``). Its whole cost is host work, counted in
instructions by tests/test_host_budget.py: a Python call costs about 600 of an ``a + b``'s 19,000,
so a lane's code is one frame that checks, defers or launches, and calls nothing of its own but
``now`` (a deferred result's launch), the runtime's calls and, for a result over a deferred
operand, ``Deferral.extend``.

Each form of operands (``FORMS``: an array, two arrays, a Python scalar on either side, an array
and a ParamUfunc's parameters) is a row of text put into one template (``_TEMPLATE``) and compiled
once; a lane is that code run with its constants (``lane``), as ``dataclasses`` makes its methods.
Written out by hand, the forms repeated the same dozen lines five times; a generic form taking its
operands as a tuple cost an argument tuple and a call more on every ``a + b``.
"""

from __future__ import annotations

import functools
import linecache
import math
import textwrap
from typing import Any, Callable, NamedTuple, cast

from rocm_array.array import Array
from rocm_array.devices import Device
from rocm_array.dtypes import DType
from rocm_array.fusion import active, state
from rocm_array.operands import Scalar, check_bounds
from rocm_array.runtime.buffer import SETTLE_AT, SHARED, UNSETTLED, settle
from rocm_array.runtime.compiler import python_code
from rocm_array.runtime.layout import ROW_MAJOR, scalar_value

from . import backs
from .deferred import Deferral, Pending
from .front_ufunc import ParamUfunc, Ufunc
from .gpu import ZERO_BYTES, contiguous_kernel, pair


class Form(NamedTuple):
    """One form of a lane's operands, as Python text over the template's names (``_TEMPLATE``).

    ``params``: the lane's parameters; ``x``: the array operand whose shape the result takes;
    ``check``: that the operands are of the lane's kinds (``row_major(x)`` last: see ``_TEMPLATE``);
    ``args``: the kernel's arguments between the result's address and the count; ``arrays``: the
    array operands; ``operands``: the operands a deferred result keeps; ``extra``: a deferred
    result's parameters."""

    params: str
    x: str
    check: str
    args: str
    arrays: tuple[str, ...]
    operands: str
    extra: str = "()"


_ARRAY = "type({0}) is Array and {0}._dtype is dtype and {0}._device._runtime is runtime"
_AT = "{0}._buf.ptr + {0}._offset * size"

#: The forms, by the scalar's position (0: none) for the rows of two operands, ``unary`` and
#: ``params`` for the others (a ParamUfunc's lane: x and the parameters' tuple, ``ParamUfunc.last``).
FORMS = {
    "unary": Form("x", "x", _ARRAY.format("x"), _AT.format("x"), ("x",), "(x,)"),
    "params": Form("x, params", "x", _ARRAY.format("x"), f"{_AT.format('x')}, *pair(params)", ("x",), "(x,)",
                   "params"),
    0: Form("x1, x2", "x1", f"{_ARRAY.format('x1')} and type(x2) is Array and x2._dtype is dtype and "
                            "x2._device is x1._device and x2._shape == x1._shape and x2._strides == x1._strides",
            f"{_AT.format('x1')}, {_AT.format('x2')}, zero", ("x1", "x2"), "(x1, x2)"),
    1: Form("v, x", "x", f"type(v) is kind and {_ARRAY.format('x')}", f"0, {_AT.format('x')}, value(v)",
            ("x",), "(Scalar(v, dtype, device, name), x)"),
    2: Form("x, v", "x", f"type(v) is kind and {_ARRAY.format('x')}", f"{_AT.format('x')}, 0, value(v)",
            ("x",), "(x, Scalar(v, dtype, device, name))"),
}

# ``now`` computes a new result of ``n`` elements with the lane's kernel and gives its memory
# (``_LAUNCH``, which the eager end of ``lane`` runs in line: a call less); reading the operands'
# addresses computes a deferred operand, which a lone deferred result has none of. A lone deferred
# result keeps the ``n`` its lane counted for its size, which ``now`` would count again.
# ``lane`` checks its operands (a row calls its last lane for any: ``Ufunc.hot``) and hands others to
# the row's ``_dispatch``. With fusion on, a result over a deferred operand extends it
# (``Deferral.extend``), and any other is deferred alone (a ``Pending`` holding ``now`` and its
# operands, built in line as ``Pending.fill`` would: the calls cost about 3,000 of its instructions),
# unless an operand's memory is shared through DLPack or the lane's gate is shut (its results were
# lately computed alone: ``Deferral``). Else the result is computed now. A lone result goes into
# ``buffer.UNSETTLED``, not into its operands' readers (``Pending.settle``): its weak reference and
# the lists' entries cost about 3,000 instructions, and most lone results are computed at once.
# ``known``: the shape and strides of the last operand found row-major; an operand holding the same
# two tuples is too, without the lookup (about 700 instructions): results pass their operands' on.
# Array's and Pending's fields are stored in line: an __init__ frame cost about 800 instructions.
_LAUNCH = """
    buf = allocate(n * out_size)
    if n:
        blocks = -(-n // per_block)  # (gpu.contiguous_kernel's grid, in line)
        launcher((blocks if blocks < most else most, 1, 1), (buf.ptr, {args}, n))"""
_TEMPLATE = """
def row_major(x):
    global known
    if x._strides != ROW_MAJOR[x._shape]:
        return False
    known = (x._shape, x._strides)  # (one tuple: another thread sees both or neither)
    return True

def now({params}, n):{launch}
    return buf

def lane({params}):
    k = known
    if not ({check} and (k[0] is {x}._shape and k[1] is {x}._strides or row_major({x}))):
        return dispatch({params})
    buf = None
    if state.defer or state.defer is None and active():
        if {pending}:
            d = deferral.extend({operands}, {x}, {extra})
            if d is not None:
                return d
        elif next(deferral.gate) and {shareable} and (n := prod({x}._shape)):
            buf = Pending()
            buf._parts = (fn, dtype, out_dtype, {operands}, {x}._shape, {extra})
            buf.count = 1
            buf.reads = {reads}
            buf.eager = now
            buf.eager_args = ({params}, n)
            buf.lone = deferral
            buf.device = device
            buf._real = None
            buf.nbytes = n * out_size
            buf.device_index = index
            buf.owner = buf.readers = None
            unsettled[buf] = None
            if len(unsettled) >= settle_at:
                settle()
    if buf is None:{compute_here}
    r = new(Array)
    r._buf = buf
    r._shape = {x}._shape
    r._strides = {x}._strides
    r._offset = 0
    r._dtype = out_dtype
    r._device = device
    r._npv = None
    return r
"""


@functools.cache
def _code(form: Any) -> Any:
    """The form's code, compiled at its first lane, once a cache folder (``compiler.python_code``: a
    warm process reads it). Tracebacks name it ``<lane FORM>`` and show its lines (its text is put in
    ``linecache``, as ``dataclasses`` does for the methods it makes)."""
    f = FORMS[form]
    launch = _LAUNCH.format(args=f.args)
    source = _TEMPLATE.format(
        params=f.params, x=f.x, check=f.check, operands=f.operands, extra=f.extra, reads=len(f.arrays),
        launch=launch, compute_here=textwrap.indent(f"\n    n = prod({f.x}._shape){launch}", "    "),
        pending=" or ".join(f"type({a}._buf) is Pending" for a in f.arrays),
        shareable=" and ".join(f"{a}._buf.readers is not SHARED" for a in f.arrays))
    name = f"<lane {form}>"
    linecache.cache[name] = (len(source), None, source.splitlines(True), name)
    return python_code(source, name)


def lane(fn: Ufunc, device: Device, kinds: tuple[DType | type, ...], dtype: DType,
         out_dtype: DType) -> Callable[..., Array] | None:
    """``backs.LANES``: ``ufunc`` for operands of ``kinds`` that need no cast, resolved now: the
    result is new and contiguous, the operands are too, so the kernel is the contiguous one with the
    scalar's position (if any) known. None when an operand needs a cast (the general path)."""
    if any(k is not dtype for k in kinds if isinstance(k, DType)):
        return None
    s = next((i + 1 for i, k in enumerate(kinds) if not isinstance(k, DType)), 0)
    launcher, per_block, most = contiguous_kernel(device, fn, dtype, out_dtype, s)

    def value(v: Any) -> bytes:  # (a deferred result's Scalar checks v's bounds at once; value(v) an eager one's)
        check_bounds(v, dtype, fn.name)
        return bytes(scalar_value(dtype, v))

    names = {
        "Array": Array, "new": object.__new__, "Pending": Pending, "Scalar": Scalar, "ROW_MAJOR": ROW_MAJOR, "state": state,
        "active": active, "prod": math.prod, "pair": pair, "value": value, "known": (None, None),
        "allocate": device.runtime.allocate, "launcher": launcher, "per_block": per_block, "most": most,
        "size": dtype.itemsize, "out_size": out_dtype.itemsize, "dtype": dtype, "out_dtype": out_dtype,
        "device": device, "runtime": device._runtime, "kind": kinds[s - 1] if s else None, "name": fn.name,
        "zero": ZERO_BYTES[dtype.name], "deferral": Deferral(fn, dtype, out_dtype, device),
        "dispatch": fn._with_params if isinstance(fn, ParamUfunc) else fn._dispatch,
        "fn": fn, "index": device.index, "SHARED": SHARED, "unsettled": UNSETTLED, "settle_at": SETTLE_AT,
        "settle": settle,
    }
    exec(_code("params" if isinstance(fn, ParamUfunc) else "unary" if fn.arity == 1 else s), names)
    return cast("Callable[..., Array]", names["lane"])


def register() -> None:
    """Fill the ``gpu`` column of ``backs.LANES``."""
    backs.LANES["gpu"] = lane
