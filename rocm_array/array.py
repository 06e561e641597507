"""The Array type: a buffer, an offset, a shape, strides (in elements), a dtype and a device.

Views (slices, transposes, reshapes that fit the layout) share the buffer. Every
operator calls the function the plugins assembled into the namespace; an Array
itself computes nothing but its own metadata.
"""

from __future__ import annotations

import functools
import math
import operator
import os
import sys
from typing import Any, Callable, Iterator, TYPE_CHECKING, Union, cast

import numpy as np

from . import devices, memory
from .devices import Device
from .axes import flag
from .dtypes import SCALARS as _SCALARS, DType, from_numpy, python_scalar
from .namespace import TABLE
from .runtime.layout import contiguous_strides

__all__ = ["Array", "wrap_numpy", "contiguous_strides", "numpy_may_view", "expose_method"]

_SUPPORTED_VERSIONS = ("2023.12", "2024.12", "2025.12")
_Scalar = Union[bool, int, float, complex]  # what an operator takes beside an Array (NumPy scalars too)
_Operand = Union["Array", bool, int, float, complex]

#: Set to 1: cpu arrays refuse implicit conversion to NumPy as gpu arrays do (``__array__``), so a
#: run on the cpu checks that code keeps the GPU's rules.
STRICT_HOST_VAR = "ROCM_ARRAY_STRICT_HOST"
#: Set to 1: ``np.asarray`` of a gpu array copies it to the host instead of raising. For engines
#: that hand chunks to NumPy-only writers (Cubed writes its Zarr chunks through ``np.asarray``):
#: the user asks for each copy by setting it, so none is silent.
HOST_COPY_VAR = "ROCM_ARRAY_HOST_COPY"


class Array:
    """An n-dimensional array on one device. Create arrays with the namespace's functions."""

    __slots__ = ("_buf", "_offset", "_shape", "_strides", "_dtype", "_device", "_npv", "__weakref__")
    #: What engines written for NumPy compare to pick whose function runs on mixed chunks (Dask's
    #: ``dot``/``tensordot`` dispatch on the chunk of highest priority); above NumPy's 0.0, as CuPy's.
    __array_priority__ = 1.0

    def __init__(
        self,
        buf: Any,
        shape: tuple[int, ...],
        strides: tuple[int, ...],
        offset: int,
        dtype: DType,
        device: Device,
    ) -> None:
        self._buf = buf
        self._shape = shape
        self._strides = strides
        self._offset = offset
        self._dtype = dtype
        self._device = device
        self._npv: np.ndarray | None = None

    # -- metadata -------------------------------------------------------------------
    @property
    def dtype(self) -> DType:
        """The data type of the elements."""
        return self._dtype

    @property
    def device(self) -> Device:
        """The device the elements are on (``cpu`` or ``gpu:N``)."""
        return self._device

    @property
    def shape(self) -> tuple[int, ...]:
        """The size of each dimension."""
        return self._shape

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self._shape)

    @property
    def size(self) -> int:
        """The number of elements."""
        return math.prod(self._shape)

    @property
    def nbytes(self) -> int:
        """The bytes of the elements (``size * dtype.itemsize``), as NumPy's ``nbytes``."""
        return math.prod(self._shape) * self._dtype.itemsize

    @property
    def base(self) -> Any:
        """None when the array's elements are the whole of its memory, else that memory (a device
        buffer, or on ``cpu`` a NumPy array): as NumPy's ``base``, what engines read to decide whether
        a slice keeps a larger chunk alive (Dask's P2P rechunk copies such slices)."""
        buf = self._buf
        whole = getattr(buf, "nbytes", None)
        return None if self._offset == 0 and self.is_contiguous and self.nbytes == whole else buf

    @property
    def strides(self) -> tuple[int, ...]:
        """Strides in elements (not bytes); may be zero or negative."""
        return self._strides

    @property
    def offset(self) -> int:
        """Index of the first element in the buffer, in elements."""
        return self._offset

    @property
    def is_contiguous(self) -> bool:
        """Row-major contiguous (size-1 dimensions may have any stride)."""
        step = 1
        for n, s in zip(reversed(self._shape), reversed(self._strides)):
            if n != 1 and s != step:
                return self.size == 0
            step *= n
        return True

    def _view(self, shape: tuple[int, ...], strides: tuple[int, ...], offset: int) -> Array:
        """Another Array over the same buffer."""
        return Array(self._buf, shape, strides, offset, self._dtype, self._device)

    @property
    def _np(self) -> np.ndarray:
        """The NumPy view of a cpu array's elements (shares memory)."""
        v = self._npv
        if v is None:
            if self._device.kind != "cpu":
                raise TypeError(f"array on {self._device} has no host view; use to_device('cpu')")
            item = self._dtype.itemsize
            offset = self._offset * item if self.size else 0
            v = np.ndarray(self._shape, self._dtype.numpy, buffer=self._buf, offset=offset,
                           strides=tuple(s * item for s in self._strides))
            self._npv = v
        return v

    @property
    def T(self) -> Array:
        """The transpose of a 2-D array, as a view."""
        if self.ndim != 2:
            raise ValueError(f"x.T requires a 2-D array, got {self.ndim}-D; use permute_dims or mT")
        return self._view(self._shape[::-1], self._strides[::-1], self._offset)

    @property
    def mT(self) -> Array:
        """Every matrix of the stack (the last two axes) transposed, as a view."""
        if self.ndim < 2:
            raise ValueError(f"x.mT requires at least 2 dimensions, got {self.ndim}")
        s, t = self._shape, self._strides
        return self._view((*s[:-2], s[-1], s[-2]), (*t[:-2], t[-1], t[-2]), self._offset)

    # -- namespace, devices, interchange ------------------------------------------------
    def __array_namespace__(self, /, *, api_version: str | None = None) -> Any:
        if api_version is not None and api_version not in _SUPPORTED_VERSIONS:
            raise ValueError(f"unsupported api_version {api_version!r}; supported: {_SUPPORTED_VERSIONS}")
        return sys.modules["rocm_array"]  # the package is imported whenever an Array exists

    def to_device(self, device: Device | str, /, *, stream: Any = None) -> Array:
        """The array on ``device`` (``"cpu"``, ``"gpu:0"`` or a Device): itself when it is there
        already, else a copy. ``stream`` is accepted for the standard and not used: copies are
        ordered after the work already queued on the array's device."""
        target = devices.parse(device, "to_device")
        if target == self._device:
            return self
        if target.kind == self._device.kind:  # gpu:0 to gpu:1: a peer copy where the platform allows it
            return memory.to_other(self, target)
        host = memory.to_host(self)
        if target.kind == "cpu":  # a GPU's download is a new array: the cpu array takes it, no second copy
            return wrap_numpy(host, self._dtype)
        return memory.from_host(host, self._dtype, target)

    def __dlpack_device__(self) -> tuple[int, int]:
        return memory.dlpack_device(self._device)

    def __dlpack__(self, /, *, stream: Any = None, max_version: tuple[int, int] | None = None,
                   dl_device: tuple[int, int] | None = None, copy: bool | None = None) -> Any:
        if stream is not None and (isinstance(stream, bool) or not isinstance(stream, int)):
            raise TypeError(f"__dlpack__(): stream must be an int (the consumer's stream, DLPack's numbering) "
                            f"or None, got {type(stream).__name__}")
        return memory.to_dlpack(self, stream, max_version, dl_device, flag(copy, "__dlpack__", "copy", none=True))

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        if not numpy_may_view(self):
            if os.environ.get(HOST_COPY_VAR) != "1":
                raise TypeError(
                    f"implicit conversion of an array on {self._device} to NumPy is not allowed; use "
                    f"np.from_dlpack(x.to_device('cpu')), or set {HOST_COPY_VAR}=1 to let NumPy copy it"
                    + (f" ({STRICT_HOST_VAR}=1 makes cpu arrays refuse it too)" if self._device.kind == "cpu" else ""))
            a, copy = memory.to_host(self), False  # a fresh host copy already, or the cpu view
        else:
            a = self._np
        if dtype is not None:
            a = a.astype(dtype, copy=bool(copy))
        return a.copy() if copy else a

    def __buffer__(self, flags: int, /) -> memoryview:
        # PEP 688 (Python 3.12): ``memoryview(x)`` and other buffer consumers (Dask's P2P rechunk sizes
        # its shards so), on ``__array__``'s rules: a cpu array's elements; a GPU array's only as a host
        # copy, and only under ROCM_ARRAY_HOST_COPY=1.
        return self.__array__().data

    # NEP 13 and 18: NumPy's functions and ufuncs called on Arrays run rocm_array's functions on the
    # Array's device, through the plugin that provides these two entries (NotImplemented without it:
    # NumPy then raises a TypeError, never converting the array).
    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        impl = TABLE.get("Array.__array_ufunc__")
        return NotImplemented if impl is None else impl(ufunc, method, inputs, kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        impl = TABLE.get("Array.__array_function__")
        return NotImplemented if impl is None else impl(self, func, types, args, kwargs)

    # -- copies and pickles ------------------------------------------------------------------
    def __copy__(self) -> Array:
        return memory.copy(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> Array:
        return memory.copy(self)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # The view's elements only (never the whole buffer), through the host; restored on the same
        # kind of device (see ``_unpickle``).
        host = np.ascontiguousarray(memory.to_host(self))
        return _unpickle, (host, self._dtype.name, self._device.kind, self._device.index)

    def _check_writable(self, name: str) -> None:
        """ValueError when the array is a broadcast view: a stride of 0 along an axis of more than
        one element, so one write would land on one element many times and change what it views."""
        if any(s == 0 and n > 1 for n, s in zip(self._shape, self._strides)):
            raise ValueError(f"{name}: the array is a broadcast view (from broadcast_to or broadcast_arrays) "
                             "and cannot be written to; write to a copy: xp.asarray(x, copy=True)")

    # -- Python scalars -------------------------------------------------------------------
    def _scalar(self, kinds: str, to: Callable[[Any], Any], what: str) -> Any:
        if self.ndim != 0:
            raise TypeError(f"only 0-D arrays convert to {what}; this one has shape {self._shape}")
        if self._dtype.kind not in kinds:
            raise TypeError(f"a {self._dtype.name} array does not convert to {what}")
        return to(memory.to_host(self).item())

    def __bool__(self) -> bool:
        return cast("bool", self._scalar("biufc", bool, "bool"))

    def __int__(self) -> int:
        return cast("int", self._scalar("biuf", int, "int"))

    def __float__(self) -> float:
        return cast("float", self._scalar("biuf", float, "float"))

    def __complex__(self) -> complex:
        return cast("complex", self._scalar("biufc", complex, "complex"))

    def __index__(self) -> int:
        return cast("int", self._scalar("iu", operator.index, "an index"))

    # -- sequence protocol ---------------------------------------------------------------
    def __len__(self) -> int:
        if not self._shape:
            raise TypeError("len() of a 0-D array")
        return self._shape[0]

    def __iter__(self) -> Iterator[Array]:
        if not self._shape:
            raise TypeError("iteration over a 0-D array")
        return (self[i] for i in range(self._shape[0]))

    def __getitem__(self, key: Any, /) -> Array:
        return cast("Array", TABLE["Array.__getitem__"](self, key))

    def __setitem__(self, key: Any, value: Any, /) -> None:
        TABLE["Array.__setitem__"](self, key, value)

    def __repr__(self) -> str:
        body = np.array2string(memory.to_host(self), separator=", ", prefix="Array(")
        return f"Array({body}, dtype={self._dtype.name}, device={self._device})"

    __str__ = __repr__

    if TYPE_CHECKING:  # the operators, set below from the tables, as type checkers see them
        def __add__(self, other: _Operand, /) -> Array: ...
        def __radd__(self, other: _Scalar, /) -> Array: ...
        def __iadd__(self, other: _Operand, /) -> Array: ...
        def __sub__(self, other: _Operand, /) -> Array: ...
        def __rsub__(self, other: _Scalar, /) -> Array: ...
        def __isub__(self, other: _Operand, /) -> Array: ...
        def __mul__(self, other: _Operand, /) -> Array: ...
        def __rmul__(self, other: _Scalar, /) -> Array: ...
        def __imul__(self, other: _Operand, /) -> Array: ...
        def __truediv__(self, other: _Operand, /) -> Array: ...
        def __rtruediv__(self, other: _Scalar, /) -> Array: ...
        def __itruediv__(self, other: _Operand, /) -> Array: ...
        def __floordiv__(self, other: _Operand, /) -> Array: ...
        def __rfloordiv__(self, other: _Scalar, /) -> Array: ...
        def __ifloordiv__(self, other: _Operand, /) -> Array: ...
        def __mod__(self, other: _Operand, /) -> Array: ...
        def __rmod__(self, other: _Scalar, /) -> Array: ...
        def __imod__(self, other: _Operand, /) -> Array: ...
        def __pow__(self, other: _Operand, /) -> Array: ...
        def __rpow__(self, other: _Scalar, /) -> Array: ...
        def __ipow__(self, other: _Operand, /) -> Array: ...
        def __matmul__(self, other: Array, /) -> Array: ...
        def __imatmul__(self, other: Array, /) -> Array: ...
        def __and__(self, other: _Operand, /) -> Array: ...
        def __rand__(self, other: _Scalar, /) -> Array: ...
        def __iand__(self, other: _Operand, /) -> Array: ...
        def __or__(self, other: _Operand, /) -> Array: ...
        def __ror__(self, other: _Scalar, /) -> Array: ...
        def __ior__(self, other: _Operand, /) -> Array: ...
        def __xor__(self, other: _Operand, /) -> Array: ...
        def __rxor__(self, other: _Scalar, /) -> Array: ...
        def __ixor__(self, other: _Operand, /) -> Array: ...
        def __lshift__(self, other: _Operand, /) -> Array: ...
        def __rlshift__(self, other: _Scalar, /) -> Array: ...
        def __ilshift__(self, other: _Operand, /) -> Array: ...
        def __rshift__(self, other: _Operand, /) -> Array: ...
        def __rrshift__(self, other: _Scalar, /) -> Array: ...
        def __irshift__(self, other: _Operand, /) -> Array: ...
        def __lt__(self, other: _Operand, /) -> Array: ...
        def __le__(self, other: _Operand, /) -> Array: ...
        def __gt__(self, other: _Operand, /) -> Array: ...
        def __ge__(self, other: _Operand, /) -> Array: ...
        def __eq__(self, other: _Operand, /) -> Array: ...  # type: ignore[override]
        def __ne__(self, other: _Operand, /) -> Array: ...  # type: ignore[override]
        def __neg__(self) -> Array: ...
        def __pos__(self) -> Array: ...
        def __abs__(self) -> Array: ...
        def __invert__(self) -> Array: ...


def numpy_may_view(x: Array) -> bool:
    """Whether NumPy may work on ``x``'s elements in place, unasked: a cpu array, unless
    ``ROCM_ARRAY_STRICT_HOST=1`` makes cpu arrays keep the GPU's rules (``__array__`` and NumPy's
    functions without a rocm_array implementation ask this)."""
    return x._device.kind == "cpu" and os.environ.get(STRICT_HOST_VAR) != "1"


def _unpickle(host: np.ndarray, dtype: str, kind: str, index: int) -> Array:
    """A pickled Array: on its device if this process has it, else on the first of its kind."""
    from .dtypes import BY_NAME
    same = [d for d in devices.available() if d.kind == kind]
    if not same:
        raise ValueError(f"cannot unpickle an array from {kind}:{index}: this process has no {kind} device "
                         f"(devices: {', '.join(map(str, devices.available()))})")
    device = next((d for d in same if d.index == index), same[0])
    return memory.from_host(host, BY_NAME[dtype], device)


_OPERANDS = (Array, *_SCALARS)


class _PluginMethod:
    """``x.<name>``: NumPy's array method ``name`` (``x.sum(axis=0)``, ``x.astype(...)``), which
    engines written for NumPy call on chunks, as the plugin with the NumPy protocols provides it
    (``"Array.<name>"`` in TABLE, read at each use: an AttributeError while no plugin provides it).

    A class attribute, where a ``__getattr__`` on Array would do: a class with ``__getattr__`` takes
    CPython's slow path for every attribute read of its instances, specialized or not (5,400 of the
    36,100 instructions of a computed ``a + b``, callgrind)."""

    __slots__ = ("_name", "_key")

    def __init__(self, name: str) -> None:
        self._name, self._key = name, f"Array.{name}"

    def __get__(self, obj: Array | None, cls: type | None = None) -> Any:
        impl = TABLE.get(self._key)
        if impl is None:
            raise AttributeError(f"'Array' object has no attribute {self._name!r}")
        return impl if obj is None else functools.partial(impl, obj)


def expose_method(name: str) -> None:
    """Make ``x.<name>`` call the table's ``"Array.<name>"`` (the shim does, for each such name a
    plugin provides); a name Array defines itself, or a private one, stays as it is."""
    if not name.startswith("_") and name not in Array.__dict__:
        setattr(Array, name, _PluginMethod(name))


def _operator(last: list[tuple[Any, Any]], impl: Any) -> list[Callable[..., Any]]:
    """What an operator calls for the table's function ``impl``, in a one-element list: ``impl.hot``
    where it has one, else ``[impl]``; kept in ``last`` as ``(impl, it)``, for as long as the table
    holds ``impl``.

    ``hot`` is a function's inline cache (the elementwise rows have one: ``Ufunc.hot``): the callable
    it would call next for operands like the last ones, which takes the operands as the function
    does and checks them itself. Calling it saves a call of the function's own (a method that
    called it cost about 860 instructions of an ``a + b``'s 21,500: tests/test_host_budget.py)."""
    hot = getattr(impl, "hot", None)
    cell = hot if hot is not None else [impl]
    last[0] = (impl, cell)
    return cast("list[Callable[..., Any]]", cell)


def _binary(fn: str) -> tuple[Callable[..., Any], Callable[..., Any], Callable[..., Any]]:
    last: list[tuple[Any, Any]] = [(None, None)]  # (TABLE[fn], what the operators call for it)

    # A NumPy scalar operand goes in as the Python scalar it holds (``python_scalar``).
    def forward(self: Array, other: Any, /) -> Any:
        if not isinstance(other, _OPERANDS):
            other = python_scalar(other)
            if not isinstance(other, _OPERANDS):
                return NotImplemented
        impl, pair = TABLE[fn], last[0]
        return (pair[1] if pair[0] is impl else _operator(last, impl))[0](self, other)

    def reflected(self: Array, other: Any, /) -> Any:
        if not isinstance(other, _SCALARS):
            other = python_scalar(other)
            if not isinstance(other, _SCALARS):
                return NotImplemented
        impl, pair = TABLE[fn], last[0]
        return (pair[1] if pair[0] is impl else _operator(last, impl))[0](other, self)

    def inplace(self: Array, other: Any, /) -> Any:
        if not isinstance(other, _OPERANDS):
            other = python_scalar(other)
            if not isinstance(other, _OPERANDS):
                return NotImplemented
        return TABLE["Array._inplace"](fn, self, other)

    return forward, reflected, inplace


def _unary(fn: str) -> Callable[[Array], Array]:
    last: list[tuple[Any, Any]] = [(None, None)]  # (TABLE[fn], what the operator calls for it)

    def method(self: Array, /) -> Array:
        impl, pair = TABLE[fn], last[0]
        return (pair[1] if pair[0] is impl else _operator(last, impl))[0](self)  # type: ignore[no-any-return]

    return method


# The operators and the namespace function each one calls.
_BINARY = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide",
    "floordiv": "floor_divide", "mod": "remainder", "pow": "pow", "matmul": "matmul",
    "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
    "lshift": "bitwise_left_shift", "rshift": "bitwise_right_shift",
}
_COMPARISON = {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
               "gt": "greater", "ge": "greater_equal"}
_UNARY = {"neg": "negative", "pos": "positive", "abs": "abs", "invert": "bitwise_invert"}

for _op, _fn in _BINARY.items():
    _f, _r, _i = _binary(_fn)
    for _name, _impl in ((f"__{_op}__", _f), (f"__r{_op}__", _r), (f"__i{_op}__", _i)):
        _impl.__name__ = _impl.__qualname__ = _name
        setattr(Array, _name, _impl)
for _op, _fn in _COMPARISON.items():
    _f = _binary(_fn)[0]
    _f.__name__ = _f.__qualname__ = f"__{_op}__"
    setattr(Array, f"__{_op}__", _f)
for _op, _fn in _UNARY.items():
    _u = _unary(_fn)
    _u.__name__ = _u.__qualname__ = f"__{_op}__"
    setattr(Array, f"__{_op}__", _u)
Array.__hash__ = None  # type: ignore[assignment]  # arrays compare elementwise


def wrap_numpy(a: np.ndarray, dtype: DType | None = None) -> Array:
    """A cpu Array sharing ``a``'s memory where the layout allows, else a copy.

    ``dtype`` (when given) must have ``a``'s storage type; it tells bfloat16 and
    NumPy's own types apart where that matters.
    """
    a = np.asarray(a)
    dt = from_numpy(a.dtype) if dtype is None else dtype
    if a.dtype != dt.numpy:
        a = a.astype(dt.numpy)
    item = a.itemsize
    if a.size == 0 or any(s % item for s in a.strides):
        a = np.ascontiguousarray(a)
        if a.size == 0:
            return Array(np.empty(0, a.dtype), a.shape, contiguous_strides(a.shape), 0, dt, devices.cpu)
    # Flip negative-stride axes so the data pointer is the lowest address the array touches.
    low = a
    if any(s < 0 for s in a.strides):
        low = a[tuple(slice(None, None, -1) if s < 0 else slice(None) for s in a.strides)]
    extent = 1 + sum((n - 1) * abs(s) // item for n, s in zip(a.shape, a.strides))
    base = np.lib.stride_tricks.as_strided(low, shape=(extent,), strides=(item,),
                                           writeable=a.flags.writeable)
    offset = (a.__array_interface__["data"][0] - low.__array_interface__["data"][0]) // item
    return Array(base, a.shape, tuple(s // item for s in a.strides), offset, dt, devices.cpu)
