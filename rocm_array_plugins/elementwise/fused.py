"""The kernel of a fused elementwise expression: ``rocm_array_kernels/elementwise/elementwise.hip`` and
``fused.hip``, completed by a generated struct ``RaFused`` (see fused.hip for what it holds).

The struct's text is a function of the expression's shape alone: the operations (the rows'
functors and their dtypes), where each Python scalar sits, and the dtype of each array read
(every array is contiguous and of the result's shape). It is also the key of the compiled
kernel, so a loop that builds the same expression compiles it once. Array values and scalar
values are the kernel's arguments.
"""

from __future__ import annotations

import ctypes
import functools
import math
import struct as pystruct
from dataclasses import dataclass
from typing import Any, Callable, Sequence, Union, cast

from rocm_array import dtypes, memory
from rocm_array.array import Array, contiguous_strides
from rocm_array.devices import cpu
from rocm_array.dtypes import ALL, BY_NAME, DType, compute_dtype
from rocm_array.hookspecs import KernelSource
from rocm_array.launch import BLOCK, Family, address
from rocm_array.runtime.compiler import kernel_source
from rocm_array.runtime.layout import ctype_of, scalar_value, vector_width

from rocm_array.operands import Scalar

from .front_ufunc import Ufunc

__all__ = ["Node", "Operand", "Broadcast", "broadcast", "Kernel", "kernel", "PATH", "KERNEL", "prelude", "arguments",
           "packed_scalar", "node", "examples", "kernel_sources", "FUSED", "operand", "operation", "packing",
           "READ", "ROUNDED", "rounded", "leaf_sig", "operation_sig", "aliases"]

#: What a generated program is named (logs) and the kernel it holds.
PATH = "elementwise/fused.hip"
KERNEL = "fused_contiguous<RaFused>"
#: The generated programs' family: their kernel's blocks are BLOCK threads (deferred.py launches them).
FUSED = Family(PATH, {"RA_BLOCK": BLOCK})


class Broadcast:
    """An array operand of another shape than the result's, read at other indices: its only
    element (layout ``one``), or along the result's trailing dimensions (``row``: element
    i % ``divisor``) or leading ones (``col``: element i / ``divisor``), its own row-major order."""

    __slots__ = ("array", "layout", "divisor")

    def __init__(self, array: Array, layout: str, divisor: int) -> None:
        self.array, self.layout, self.divisor = array, layout, divisor


def broadcast(a: Array, shape: tuple[int, ...]) -> Broadcast | None:
    """``a`` (broadcastable to ``shape``, of another shape) as a Broadcast operand, or None when it
    is not contiguous or its dimensions are neither all the leading nor all the trailing ones."""
    if a.size == 1:
        return Broadcast(a, "one", 0)
    if a._strides != contiguous_strides(a._shape):
        return None
    own = (1,) * (len(shape) - a.ndim) + a._shape
    for k in range(1, len(shape)):
        if own[k:] == shape[k:] and all(n == 1 for n in own[:k]):
            return Broadcast(a, "row", a.size)
        if own[:k] == shape[:k] and all(n == 1 for n in own[k:]):
            return Broadcast(a, "col", math.prod(shape[k:]))
    return None


class Node:
    """One elementwise operation of an expression: row ``fn`` on ``args`` (arrays of ``shape``,
    Broadcast arrays, Python scalars, or other nodes) and ``params`` (a ``ParamUfunc``'s parameter
    values) computed in ``dtype``, giving ``out_dtype``; ``count``, its operations.

    What its kernel needs is found by one walk of the tree, the first time it is asked (a node is
    built when its expression is computed, and only the whole expression's kernel is asked for):
    ``sig``, the expression's shape (the key of its generated kernel: operations, dtypes, where
    scalars sit, each array's layout); ``arrays``, ``divisors`` and ``scalars``, the kernel's
    arguments in order (an array read twice is passed twice, a shared operation computed where it
    is used: reads of one address come from the cache, and operations are cheap beside memory);
    ``leaves``, the distinct arrays it reads, by (buffer, offset, dtype).

    With ``out_dtype``, ``source`` and ``computed`` it is the core's ``fusion.Expression``: what
    another plugin's kernel (a reduction's) computes in place of reading the result.
    """

    __slots__ = ("fn", "dtype", "out_dtype", "args", "shape", "params", "count", "_walked", "_key")
    count: int

    def __init__(self, fn: Ufunc, dtype: DType, out_dtype: DType, args: tuple[Operand, ...],
                 shape: tuple[int, ...], params: tuple[float, ...] = ()) -> None:
        self.fn, self.dtype, self.out_dtype, self.args, self.shape = fn, dtype, out_dtype, args, shape
        self.params = params
        count = 1
        for a in args:
            if type(a) is Node:
                count += a.count
        self.count = count
        self._walked: tuple[Any, tuple[Array, ...], tuple[int, ...], tuple[Any, ...],
                            dict[tuple[int, int, DType], Array]] | None = None
        self._key: tuple[Any, tuple[int, ...] | None] | None = None

    def _walk(self) -> tuple[Any, tuple[Array, ...], tuple[int, ...], tuple[Any, ...],
                             dict[tuple[int, int, DType], Array]]:
        """(sig, arrays, divisors, scalars, leaves), found once by one walk of the tree."""
        walked = self._walked
        if walked is None:
            arrays: list[Array] = []
            divisors: list[int] = []
            scalars: list[Any] = []

            def visit(n: Node) -> tuple[Any, ...]:
                sigs = [visit(a) if isinstance(a, Node) else leaf_sig(a, n.dtype, arrays, divisors, scalars)
                        for a in n.args]
                return operation_sig(n.fn, n.dtype, n.out_dtype, n.params, sigs, scalars)

            sig = visit(self)
            leaves = {(id(a._buf), a._offset, a._dtype): a for a in arrays}
            walked = self._walked = (sig, tuple(arrays), tuple(divisors), tuple(scalars), leaves)
        return walked

    @property
    def sig(self) -> Any:
        return self._walk()[0]

    @property
    def arrays(self) -> tuple[Array, ...]:
        return self._walk()[1]

    @property
    def divisors(self) -> tuple[int, ...]:
        return self._walk()[2]

    @property
    def scalars(self) -> tuple[Any, ...]:
        return self._walk()[3]

    @property
    def leaves(self) -> dict[tuple[int, int, DType], Array]:
        return self._walk()[4]

    @property
    def key(self) -> tuple[Any, tuple[int, ...] | None]:
        """Its generated kernel's key: ``sig``, and which array reads are one (``kernel``'s
        ``alias``: array k reads what array alias[k] reads; None when no two do)."""
        key = self._key
        if key is None:
            sig, arrays, _, _, _ = self._walk()
            key = self._key = (sig, aliases(arrays))
        return key

    def source(self) -> str:
        """The text of its generated struct ``RaFused``."""
        return kernel(*self.key).source

    def computed(self) -> bytes:
        """The bytes of ``RaComputed<RaFused>`` over this expression (fused.hip): its values as a run
        that a reduction reads, from element 0."""
        _, arrays, divisors, scalars, _ = self._walk()
        return (arguments(kernel(*self.key), 0, arrays, divisors, scalars)
                + pystruct.pack("=q", 0))  # (RaFused's size is a multiple of 8: its pointers')


Operand = Union[Node, Array, Broadcast, Scalar]


def aliases(arrays: Sequence[Array]) -> tuple[int, ...] | None:
    """``kernel``'s ``alias`` of an expression's array reads: array k reads what array alias[k]
    reads (its first read of that memory, offset and dtype); None when no two read one."""
    first: dict[tuple[int, int, DType], int] = {}
    alias = tuple([first.setdefault((id(a._buf), a._offset, a._dtype), k) for k, a in enumerate(arrays)])
    return alias if len(first) < len(alias) else None


_SCALAR = ("s",)
_PARAM = ("p",)
_ARRAY = {d.name: ("a", d.name) for d in ALL}


def leaf_sig(a: Array | Broadcast | Scalar, dtype: DType, arrays: list[Array], divisors: list[int],
             scalars: list[Any]) -> Any:
    """A ``Node.sig``'s part for an operand that is no node, of an operation computed in ``dtype``:
    an array of the expression's shape, a Broadcast array, a Python scalar (passed in the compute
    dtype, as the eager kernels take it); its kernel arguments appended to the walk's lists."""
    if type(a) is Array:
        arrays.append(a)
        return _ARRAY[a._dtype.name]
    if type(a) is Broadcast:
        b = a.array
        arrays.append(b)
        if a.layout != "one":
            divisors.append(a.divisor)
        return (a.layout, b._dtype.name)
    scalars.append(packed_scalar(dtype, cast(Scalar, a).value))
    return _SCALAR


def operation_sig(fn: Ufunc, dtype: DType, out_dtype: DType, params: tuple[float, ...], sigs: list[Any],
                  scalars: list[Any]) -> tuple[Any, ...]:
    """A ``Node.sig`` of an operation whose operands' parts are ``sigs``: its parameters (members
    after the operands' scalars, in the compute dtype, as RaParams holds them) appended to ``scalars``."""
    if params:
        held = compute_dtype(dtype)
        sigs.extend([_PARAM] * len(params))
        scalars.extend([packed_scalar(held, p) for p in params])
    return (fn.functor, fn.arity, dtype.name, out_dtype.name, tuple(sigs))


#: How a Broadcast array of each layout is read at element i (q: its divisor).
READ = {"one": "p{k}[0]", "row": "p{k}[i % q{k}]", "col": "p{k}[i / q{k}]"}


@dataclass(frozen=True)
class Kernel:
    """The generated struct of an expression shape: its text, its ctypes layout (the kernel's
    first argument) and ``pack``, which makes that argument's bytes of (out, each array's
    address, each divisor, each scalar, the fence 0), and its elements per vector access."""

    source: str
    struct: type[ctypes.Structure]
    pack: Callable[..., bytes]
    width: int
    out_dtype: DType


@functools.lru_cache(maxsize=4096)
def kernel(sig: Any, alias: tuple[int, ...] | None = None) -> Kernel:
    """The generated struct of the expression shape ``sig`` (a ``Node.sig``). ``alias`` (``Node.key``)
    names the array operands that read one array: each such read of the whole array is loaded
    once (``x * x + sin(x)`` reads x once, not three times; on an H100 the three loads of
    fused_chain_sum were 25 million load instructions where torch.compile's kernel issued 2 million)."""
    arrays: list[tuple[DType, str]] = []  # each array's dtype and layout
    loaded: set[int] = set()  # the arrays read at i that the code names (an alias names its first)
    scalars: list[DType] = []
    lines: list[str] = []

    def visit(sig: Any, fenced: bool = True) -> str:
        functor, arity, dtype_name, out_name, args = sig
        dtype, out = BY_NAME[dtype_name], BY_NAME[out_name]
        inner = rounded(functor, dtype, out) is None  # (the operands of a rounded operation need no fence)
        texts, params = [], []
        for a in args:
            if a is _SCALAR:
                scalars.append(dtype)
                texts.append(f"s{len(scalars) - 1}")
                continue
            if a is _PARAM:
                scalars.append(compute_dtype(dtype))
                params.append(f"s{len(scalars) - 1}")
                continue
            if len(a) == 2:  # an array: (layout, dtype)
                k = len(arrays)
                arrays.append((BY_NAME[a[1]], a[0]))
                if a[0] == "a":
                    j = alias[k] if alias is not None and arrays[alias[k]][1] == "a" else k
                    loaded.add(j)
                    k = j
                text, kind = f"a{k}", a[1]
            else:
                text, kind = visit(a, inner), a[3]
            texts.append(operand(text, BY_NAME[kind], dtype))
        local = f"t{len(lines)}"
        lines.append(f"    const {out.c_type} {local} = {operation(functor, arity, dtype, out, texts, params, fenced)};")
        return local

    result = visit(sig)
    out_dtype = BY_NAME[sig[3]]
    out_t = out_dtype.c_type
    same = sorted(loaded)  # read at i: loaded as vectors, each array once
    spread = [k for k, (_, layout) in enumerate(arrays) if layout in ("row", "col")]
    widest = max([out_dtype.itemsize, *(arrays[k][0].itemsize for k in same)])
    width = vector_width(widest)
    types = [d.c_type for d, _ in arrays]
    vec = {k: f"ra_vec<{types[k]}, {width}>" for k in same}
    members = "\n".join([f"  {out_t}* RA_RESTRICT out;",
                         *(f"  const {t}* RA_RESTRICT p{k};" for k, t in enumerate(types)),
                         *(f"  ra_index_t q{k};" for k in spread),
                         *(f"  {d.c_type} s{k};" for k, d in enumerate(scalars)),
                         "  unsigned int fence;"])
    reads = "\n".join(f"    const {types[k]} a{k} = {READ[layout].format(k=k)};"
                       for k, (_, layout) in enumerate(arrays) if layout != "a")
    aligned = " && ".join([f"ra_aligned(out, {width} * sizeof({out_t}))",
                           *(f"ra_aligned(p{k}, {width} * sizeof({types[k]}))" for k in same)])
    body = "\n".join(lines)
    params = ", ".join(["ra_index_t i", *(f"{types[k]} a{k}" for k in same)])
    source = f"""
struct RaFused {{
  typedef {out_t} out_type;
  static constexpr int width = {width};
  struct Loads {{ {" ".join(f"{vec[k]} a{k};" for k in same)} }};
{members}
  RA_DEVICE {out_t} value({params}) const {{
{reads}
{body}
    return {result};
  }}
  RA_DEVICE bool aligned() const {{ return {aligned}; }}
  RA_DEVICE Loads load(ra_index_t i) const {{ return {{{", ".join(f"((const {vec[k]}*)p{k})[i]" for k in same)}}}; }}
  RA_DEVICE ra_vec<{out_t}, {width}> values(ra_index_t i, const Loads& x) const {{
    ra_vec<{out_t}, {width}> y;
#pragma unroll
    for (int k = 0; k < {width}; ++k) y.v[k] = value({", ".join(["i * width + k", *(f"x.a{k}.v[k]" for k in same)])});
    return y;
  }}
  RA_DEVICE void store(ra_index_t i, const Loads& x) const {{ ((ra_vec<{out_t}, {width}>*)out)[i] = values(i, x); }}
  RA_DEVICE {out_t} at(ra_index_t i) const {{ return value({", ".join(["i", *(f"p{k}[i]" for k in same)])}); }}
}};
"""
    types_ = ([ctypes.c_void_p] * (1 + len(arrays)) + [ctypes.c_int64] * len(spread)
              + [ctype_of(d) for d in scalars] + [ctypes.c_uint])
    struct, pack = packing("RaFused", tuple(types_))
    return Kernel(source, struct, pack, width, out_dtype)


def packing(name: str, types: tuple[Any, ...]) -> tuple[type[ctypes.Structure], Callable[..., bytes]]:
    """The ctypes struct ``name`` of members of ``types`` (a generated struct's layout) and the function
    that packs their values (numbers, or the bytes of 16-bit floats and complex values) as its bytes."""
    struct = type(name, (ctypes.Structure,), {"_fields_": [(f"m{k}", t) for k, t in enumerate(types)]})
    fmt, end = "=", 0
    for k, t in enumerate(types):  # the members at their C offsets, as ctypes lays them out
        offset = getattr(struct, f"m{k}").offset
        fmt += "x" * (offset - end) + _CODES.get(t, f"{ctypes.sizeof(t)}s")
        end = offset + ctypes.sizeof(t)
    fmt += "x" * (ctypes.sizeof(struct) - end)
    return struct, pystruct.Struct(fmt).pack


def operand(text: str, kind: DType, dtype: DType) -> str:
    """The C++ text of an operand of dtype ``kind`` taken by an operation computed in ``dtype``: an
    operand of another dtype is cast as the eager path's copy casts it."""
    return text if kind is dtype else f"ra_cast<{dtype.c_type}>({text})"


#: The float operations a generated kernel rounds once (fused.hip's ra_add_rn...): the eager bits,
#: and never contracted with a neighbour.
ROUNDED = {"add_op": "ra_add_rn", "sub_op": "ra_sub_rn", "mul_op": "ra_mul_rn"}
_ROUNDED_DTYPES = (dtypes.float32, dtypes.float64)


def rounded(functor: str, dtype: DType, out: DType) -> str | None:
    """The rounded-once function that computes ``functor`` in ``dtype``, or None."""
    return ROUNDED.get(functor) if out is dtype and dtype in _ROUNDED_DTYPES else None


def operation(functor: str, arity: int, dtype: DType, out: DType, texts: list[str], params: list[str],
              fenced: bool = True) -> str:
    """The C++ expression of one operation of a generated kernel on ``texts`` (its operands, in
    ``dtype``) and ``params`` (a ``ParamUfunc``'s). Its result passes through ``ra_fence`` (see
    fused.hip) unless it is rounded once (``rounded``), or ``fenced`` is False: its one consumer
    is rounded once, and takes a product as it is."""
    name = rounded(functor, dtype, out)
    if name is not None:
        return f"{name}({', '.join(texts)})"
    wrap = "RaParams" if params else "RaUnary" if arity == 1 else "RaBinary"
    held = "{" + ", ".join(params) + "}" if params else "()"
    call = f"{wrap}<{functor}, {dtype.c_type}, {out.c_type}>{held}({', '.join(texts)})"
    return f"ra_fence({call}, fence)" if fenced else call


#: struct codes of the member types that pack as numbers (the others pack as their bytes).
_CODES: dict[Any, str] = {
    ctypes.c_void_p: "Q", ctypes.c_bool: "?", ctypes.c_int8: "b", ctypes.c_uint8: "B",
    ctypes.c_int16: "h", ctypes.c_uint16: "H", ctypes.c_int32: "i", ctypes.c_uint32: "I",
    ctypes.c_int64: "q", ctypes.c_uint64: "Q", ctypes.c_float: "f", ctypes.c_double: "d", ctypes.c_uint: "I",
}


def packed_scalar(dtype: DType, value: Any) -> Any:
    """``scalar_value`` as ``Kernel.pack`` takes it: a number, or the bytes of a 16-bit float or complex."""
    v = scalar_value(dtype, value)
    return v.value if type(v) in _CODES else bytes(v)


def arguments(k: Kernel, out: int, arrays: Sequence[Array], divisors: Sequence[int], scalars: Sequence[Any]) -> bytes:
    """The bytes of an expression's ``RaFused`` (``k``'s first argument): its result going to ``out``,
    its kernel's arguments in ``Node``'s order."""
    return k.pack(out, *[address(a) for a in arrays], *divisors, *scalars, 0)


@functools.cache  # (every fused computation passes it)
def prelude() -> str:
    """What every generated struct is appended to: the functors and wrappers, and the fused kernel."""
    return kernel_source("elementwise/elementwise.hip") + "\n" + kernel_source(PATH)


def node(fn: Ufunc, *operands: Operand | bool | int | float | complex, params: tuple[float, ...] = ()) -> Node:
    """The node of ``fn`` on ``operands`` (nodes, arrays, Python scalars) and ``params``, through
    ``fn``'s front: a node stands in as a cpu array of its result's dtype and shape."""
    stand = tuple(_stand_in(o) if isinstance(o, Node) else o for o in operands)
    arrays, dtype, out_dtype, shape = fn._front(stand)
    return Node(fn, dtype, out_dtype, tuple(o if isinstance(o, Node) else a for o, a in zip(operands, arrays)), shape,
                params)


def _stand_in(n: Node) -> Array:
    return memory.empty(n.shape, n.out_dtype, cpu)


def examples() -> list[Node]:
    """Expressions of every kind a generated kernel holds: scalars on either side, casts between
    dtypes, a shared operation, 16-bit floats, complex values with a real result, integers and
    booleans, the activations (the compile check builds each for every target)."""
    from .table import BY_NAME as f

    def leaf(dtype: DType) -> Array:
        return memory.empty((4,), dtype, cpu)

    x, y = leaf(dtypes.float32), leaf(dtypes.float32)
    chain = node(f["add"], node(f["multiply"], node(f["exp"], node(f["multiply"], node(f["negative"], x), x)), 0.5),
                 node(f["sin"], x))
    h = leaf(dtypes.float16)
    shared = node(f["multiply"], h, 2.0)
    half = node(f["logical_and"], node(f["greater"], node(f["add"], shared, shared), h), node(f["isfinite"], shared))
    z = leaf(dtypes.complex128)
    wide = node(f["abs"], node(f["subtract"], node(f["multiply"], z, 1j), leaf(dtypes.complex64)))
    i = leaf(dtypes.int8)
    ints = node(f["bitwise_xor"], node(f["add"], i, leaf(dtypes.int64)), node(f["bitwise_left_shift"], 3, i))
    b = leaf(dtypes.bfloat16)
    brain = node(f["divide"], node(f["sqrt"], b), node(f["add"], y, b))
    acts = node(f["elu"], node(f["add"], node(f["silu"], node(f["multiply"], y, 2.0)),
                                node(f["gelu"], node(f["relu"], node(f["gelu_tanh"], node(f["sigmoid"], h))))),
                params=(0.7,))
    params = node(f["powf"], node(f["affine"], b, params=(1.5, -0.25)), params=(3.0,))
    return [chain, half, wide, ints, brain, acts, params]


def kernel_sources() -> list[KernelSource]:
    """Generated programs for the compile check (see ``examples``)."""
    text = prelude()
    return [ks for n in examples() for ks in FUSED.sources([(KERNEL,)], text + kernel(*n.key).source)]
