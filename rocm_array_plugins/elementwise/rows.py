"""Row kernels: an expression over reductions along the last axis, in one kernel that reads each row once.

With fusion on, a reduction over the last axis of a contiguous GPU array or deferred expression is
deferred too (``deferred.reduce_rows``, asked by the reduction plugin through the core:
``fusion.RowReduction``), when a block can hold a row in registers (``ROW_BYTES``). An expression
whose operands include such a result broadcast back along the axis (keepdims, shape (..., 1): a
``col`` Broadcast; one row: ``one``), or an expression of such results (``sqrt(var + eps)``), is then
one generated kernel (``rows.hip``): a block a row (or a group of its first waves a row, when short
rows fill only those), each thread loads its elements of the row's arrays once, folds each
reduction (a "stage"; a stage's input may hold earlier ones: a softmax's sum of exp(x - max)) with
the reduction's own functors, and writes the results once. A softmax, a layer norm and
``x - mean(x)`` read x once instead of two or three times.

A stage gives the eager reduction's bits: the reduction plugin defers only rows its own kernel
gives a block each (no row cut across blocks), and says how many threads (``RowReduction.threads``);
the kernel folds each thread's elements in that kernel's order (rows.hip). Anything else (rows of
another length, stages of inputs of other widths, an input array not on a 16-byte boundary, rows
too long for the registers) is not a row kernel: the expression runs as before, each reduction by
its own kernels when it is read.

This module generates and launches the kernels; ``deferred.py`` holds the deferred results and
tells this one what an array is (``Resolve``).
"""

from __future__ import annotations

import ctypes
import functools
import math
from typing import Any, Callable, Sequence, Union

from rocm_array import dtypes, fusion, memory
from rocm_array.array import Array
from rocm_array.devices import Device, cpu
from rocm_array.dtypes import DType, compute_dtype
from rocm_array.launch import address
from rocm_array.operands import Scalar
from rocm_array.runtime.buffer import DeviceBuffer
from rocm_array.runtime.compiler import kernel_source
from rocm_array.runtime.layout import MAX_GRID_X, ctype_of, vector_width

from . import fused
from .fused import Broadcast, Node, node as make_node, operand, operation, packed_scalar

__all__ = ["ROW_BYTES", "PATH", "KERNEL", "Stage", "Resolve", "evaluate", "examples"]

#: The longest row (bytes of a stage's input) a reduction is deferred for: 16384 4-byte or 8192
#: 8-byte elements. A block of 256 threads (the reductions' block for such rows) then holds it in 64
#: registers a thread, and an H100's 255 a thread leave room for a second array and the stages.
ROW_BYTES = 65536
#: The bytes of a row's arrays that one kernel holds in registers at most (two arrays of the longest
#: rows); an expression reading more runs as before.
_CACHED_BYTES = 2 * ROW_BYTES
PATH = "elementwise/rows.hip"
KERNEL = "fused_rows<RaRows>"


class Stage:
    """A deferred reduction over the last axis: ``reduction`` of ``input`` (an expression, or an
    array, of dtype ``dtype``: ``rows`` rows of ``length``)."""

    __slots__ = ("reduction", "input", "dtype", "rows", "length")

    def __init__(self, reduction: fusion.RowReduction, input: Node | Array, dtype: DType, rows: int,
                 length: int) -> None:
        self.reduction, self.input, self.dtype, self.rows, self.length = reduction, input, dtype, rows, length


#: What an array is, for a row kernel: a stage not computed yet, the expression of a deferred result
#: viewed whole, or None (an array: its memory is read).
Resolve = Callable[[Array], Union[Stage, Node, None]]


class _Unfused(Exception):
    """The expression is not one row kernel (see the module's docstring)."""


class _Program:
    """The generated struct ``RaRows`` of an expression over rows of ``length`` (``rows`` of them), as
    it is built: its members (out first) and the statements of its ``row``."""

    def __init__(self, rows: int, length: int, resolve: Resolve) -> None:
        self.rows, self.length, self.resolve = rows, length, resolve
        self.members: list[tuple[str, str, Any, Any]] = []  # (C++ type, name, ctypes type, value)
        self.caches: dict[tuple[int, int, DType], str] = {}  # a row-shaped array -> its registers
        self.loads: list[str] = []
        self.values: dict[int, str] = {}  # id(stage or per-row expression) -> its value's name
        self.kept: dict[int, str] = {}  # id(a stage's input expression) -> its elements' registers
        self.lines: list[str] = []
        self.stages: list[Stage] = []
        self.width = 0

    def member(self, c_type: str, prefix: str, ctype: Any, value: Any, index: int | None = None) -> str:
        name = f"{prefix}{len(self.members) if index is None else index}"
        self.members.append((c_type, name, ctype, value))
        return name

    # -- an element of the row (i: its index in the expression, r: in the row, m and k: its place) --
    def element(self, a: Node | Array | Broadcast, lines: list[str]) -> tuple[str, DType]:
        if type(a) is Node:
            return self.kept.get(id(a)) or self.operation(a, lines, self.element), a.out_dtype
        if type(a) is Broadcast:
            b = a.array
            if (a.layout == "col" and a.divisor == self.length) or (a.layout == "one" and self.rows == 1):
                value = self.per_row(b)
                if value is not None:
                    return value, b._dtype
            return self.read(b, a.layout, a.divisor), b._dtype
        assert type(a) is Array
        if self.length == 1:  # (rows of one element: a reduction's result kept has the rows' shape)
            value = self.per_row(a)
            if value is not None:
                return value, a._dtype
        return self.cached(a), a._dtype

    def cached(self, a: Array) -> str:
        """The registers of the row-shaped ``a`` (loaded once, before the stages)."""
        key = (id(a._buf), a._offset, a._dtype)
        name = self.caches.get(key)
        if name is None:
            p = self.member(f"const {a._dtype.c_type}* RA_RESTRICT", "p", ctypes.c_void_p, a)
            name = self.caches[key] = f"c{len(self.caches)}"
            self.loads.append(f"    RaRowCache<{a._dtype.c_type}, V, M> {name};\n    {name}.load({p} + base, s);")
        return f"{name}.get(m, k)"

    def read(self, b: Array, layout: str, divisor: int) -> str:
        """A Broadcast array (or, layout ``a``, one of the expression's shape) read at index i."""
        p = self.member(f"const {b._dtype.c_type}* RA_RESTRICT", "p", ctypes.c_void_p, b)
        if layout == "a":
            return f"{p}[i]"
        if layout != "one":
            self.member("ra_index_t", "q", ctypes.c_int64, divisor, int(p[1:]))
        return fused.READ[layout].format(k=p[1:])

    def operation(self, n: Node, lines: list[str], visit: Callable[[Any, list[str]], tuple[str, DType]]) -> str:
        texts: list[str] = []
        for a in n.args:
            if isinstance(a, Scalar):  # (in the compute dtype, as the eager kernels take it)
                texts.append(self.member(n.dtype.c_type, "s", ctype_of(n.dtype), packed_scalar(n.dtype, a.value)))
            else:
                text, kind = visit(a, lines)
                texts.append(operand(text, kind, n.dtype))
        held = compute_dtype(n.dtype)
        params = [self.member(held.c_type, "s", ctype_of(held), packed_scalar(held, v)) for v in n.params]
        local = f"t{len(lines)}"
        lines.append(f"const {n.out_dtype.c_type} {local} = "
                     f"{operation(n.fn.functor, n.fn.arity, n.dtype, n.out_dtype, texts, params)};")
        return local

    def discover(self, a: Any) -> None:
        """The stages (and per-row expressions) under ``a`` emitted, before its elements' code: that
        code then reads the elements a stage kept of its input (a softmax's exp(x - max), computed
        once for its sum and its quotient)."""
        if type(a) is Node:
            for b in a.args:
                self.discover(b)
        elif type(a) is Broadcast and ((a.layout == "col" and a.divisor == self.length)
                                       or (a.layout == "one" and self.rows == 1)):
            self.per_row(a.array)
        elif type(a) is Array and self.length == 1:
            self.per_row(a)

    # -- a value of the row (i: the row's index) --------------------------------------------------
    def per_row(self, b: Array) -> str | None:
        """The name of the row's value of ``b`` (one element a row) when it is a stage of these rows or
        a deferred expression of such values, computed once a row; else None (``b`` is read)."""
        found = self.resolve(b)
        if found is None:
            return None
        name = self.values.get(id(found))
        if name is not None:
            return name
        if isinstance(found, Stage):
            if found.rows != self.rows or found.length != self.length:
                return None
            name = self.stage(found)
        elif math.prod(found.shape) == self.rows:
            lines: list[str] = []
            text = self.operation(found, lines, self.row_value)
            name = f"u{len(self.values)}"
            t = found.out_dtype.c_type
            self.lines.append(f"    const {t} {name} = [&]() -> {t} {{\n      const ra_index_t i = row; (void)i;\n"
                              + "".join(f"      {line}\n" for line in lines) + f"      return {text};\n    }}();")
        else:
            return None
        self.values[id(found)] = name
        return name

    def row_value(self, a: Node | Array | Broadcast, lines: list[str]) -> tuple[str, DType]:
        if type(a) is Node:
            return self.operation(a, lines, self.row_value), a.out_dtype
        if type(a) is Broadcast:
            return self.read(a.array, a.layout, a.divisor), a.array._dtype
        assert type(a) is Array
        value = self.per_row(a)
        return (value if value is not None else self.read(a, "a", 0)), a._dtype

    def stage(self, st: Stage) -> str:
        red = st.reduction
        width = vector_width(st.dtype.itemsize)
        if self.stages and (width != self.width or red.threads != self.stages[0].reduction.threads
                            or red.options != self.stages[0].reduction.options):
            raise _Unfused  # (one element order for the whole kernel)
        if type(st.input) is Array and st.input._offset * st.dtype.itemsize % 16:
            # Its reduction's own vectors would start elsewhere in the rows (a buffer starts on a
            # 16-byte boundary at least: its offset says where the array does).
            raise _Unfused
        self.width = width
        self.stages.append(st)
        self.discover(st.input)
        lines: list[str] = []
        text, _ = self.element(st.input, lines)
        if type(st.input) is Node and id(st.input) not in self.kept:  # (its elements kept for later stages)
            kept = f"e{len(self.kept)}"
            self.lines.append(f"    RaRowCache<{st.dtype.c_type}, V, M> {kept};")
            text = f"{kept}.put(m, k, {text})"
            self.kept[id(st.input)] = f"{kept}.get(m, k)"
        correction = self.member("double", "d", ctypes.c_double, red.correction)
        name = f"r{len(self.values)}"
        t = red.out_dtype.c_type
        self.lines.append(
            f"    const {t} {name} = ra_row_reduce<{red.compute.c_type}, {t}, {red.map}, {red.combine}, "
            f"{red.finalize}, V, M>(s, g, [&](int m, int k, ra_index_t r) -> {st.dtype.c_type} {{\n"
            f"      const ra_index_t i = base + r; (void)i; (void)m; (void)k;\n"
            + "".join(f"      {line}\n" for line in lines) + f"      return {text};\n    }}, {correction});")
        return name

    def build(self, node: Node) -> tuple[str, int]:
        """The struct's text of ``node``'s rows, and the threads of its blocks."""
        out = self.member(f"{node.out_dtype.c_type}* RA_RESTRICT", "p", ctypes.c_void_p, None)
        self.discover(node)
        lines: list[str] = []
        text, _ = self.element(node, lines)
        if not self.stages:
            raise _Unfused
        threads = self.stages[0].reduction.threads
        vectors = -(-self.length // (self.width * threads))
        most = 1 << (vectors - 1).bit_length()  # (a power of two: fewer kernels)
        cached = sum(self.length * key[2].itemsize for key in self.caches)
        if cached > _CACHED_BYTES:
            raise _Unfused
        t = node.out_dtype.c_type
        members = "".join(f"  {c_type} {name};\n" for c_type, name, _, _ in self.members)
        source = f"""
struct RaRows {{
  static constexpr int V = {self.width}, M = {most};
{members}  unsigned int fence;
  RA_DEVICE void row(ra_index_t row, ra_index_t len, int t, int g, int nt) const {{
    const ra_index_t base = row * len;
    const RaRowSpan<V, M> s(base, len, t, nt);
{chr(10).join(self.loads)}
{chr(10).join(self.lines)}
    ra_row_store<{t}, V, M>({out} + base, s, [&](int m, int k, ra_index_t r) -> {t} {{
      const ra_index_t i = base + r; (void)i; (void)m; (void)k;
{"".join(f"      {line}{chr(10)}" for line in lines)}      return {text};
    }});
  }}
}};
"""
        return source, threads

    def arguments(self, out: int) -> bytes:
        """The bytes of the struct, its results going to ``out``."""
        types = tuple(ctype for _, _, ctype, _ in self.members) + (ctypes.c_uint,)
        values = [out if value is None else address(value) if isinstance(value, Array) else value
                  for _, _, _, value in self.members]
        return _packing(types)(*values, 0)


@functools.lru_cache(maxsize=256)
def _packing(types: tuple[Any, ...]) -> Callable[..., bytes]:
    return fused.packing("RaRows", types)[1]


@functools.lru_cache(maxsize=4)
def _prelude(source: str) -> str:
    """What a row kernel compiles before its struct: the expressions' prelude, the reductions' program
    (``source``: their functors, the block reduction) and rows.hip."""
    return fused.prelude() + "\n" + source + "\n" + kernel_source(PATH)


def evaluate(node: Node, device: Device, resolve: Resolve, generated: Callable[..., Any]) -> DeviceBuffer | None:
    """The memory of ``node``'s result computed by one row kernel, or None when it is not one (no
    stage among its operands, see the module's docstring) or its kernel is compiling (``generated``,
    deferred.py's: the caller computes it as before, each stage by its reduction's kernels)."""
    # (Only a deferred reduction among the leaves makes a row kernel: a computed operand that an
    # expression reads, as every chain past MAX_NODES has, must not cost this walk. axpy_loop spent
    # half its host time here.)
    if not node.shape or not any(isinstance(resolve(a), Stage) for a in node.leaves.values()):
        return None
    length = node.shape[-1]
    rows = math.prod(node.shape) // length if length else 0
    if rows == 0:
        return None
    program = _Program(rows, length, resolve)
    try:
        source, threads = program.build(node)
    except _Unfused:
        return None
    red = program.stages[0].reduction
    function = generated(device, PATH, KERNEL, red.options, _prelude(red.source), source)
    if function is None:
        return None
    rt = device.runtime
    group = _group(length, program.width, threads, rt.properties.wave_size)
    per = threads // group
    buf = rt.allocate(rows * length * node.out_dtype.itemsize)
    packed = program.arguments(buf.ptr)
    rt.launch(function, (min(-(-rows // per), MAX_GRID_X), 1, 1), (per * group, 1, 1),
              [(ctypes.c_char * len(packed)).from_buffer_copy(packed), ctypes.c_int64(rows), ctypes.c_int64(length),
               ctypes.c_int32(group), ctypes.c_int32(threads)])
    return buf


def _group(length: int, width: int, threads: int, wave: int) -> int:
    """The threads that fold a row: the reduction's block (``threads``), or, when the row's vectors
    fill only its first waves (rows a multiple of a vector: no head nor tail), those waves, a few rows
    a block (65536 rows of 256 float32 had used 64 threads of each block of 256)."""
    vectors = length // width
    if length % width or vectors >= threads:
        return threads
    group = -(-vectors // wave) * wave
    return group if threads // group > 1 else threads


def examples(reductions: Sequence[fusion.RowReduction]) -> list[tuple[str, str]]:
    """Row kernels of every kind, for the compile check: a softmax (a stage of an expression holding
    another) of the first two reductions, a layer norm (two stages of one array, a per-row expression
    of one, a row Broadcast of another dtype) of the last two, and ``x - r`` in short rows (a head and
    a tail, one vector a thread) of each."""
    from .table import BY_NAME as f

    rows, length = 8, 4096
    found: dict[int, Stage | Node] = {}  # (what the deferred results of a computation would resolve to)

    def leaf(dtype: DType, shape: tuple[int, ...] = (rows, length)) -> Array:
        return memory.empty(shape, dtype, cpu)

    def op(name: str, *args: Any) -> Node:  # (the front sees a Broadcast as an array of the result's shape)
        shape = next(a.shape if type(a) is Node else a._shape for a in args if type(a) in (Node, Array))
        n = make_node(f[name], *(leaf(a.array._dtype, shape) if type(a) is Broadcast else a for a in args))
        return Node(n.fn, n.dtype, n.out_dtype, tuple(a if type(a) is Broadcast else b for a, b in zip(args, n.args)),
                    n.shape)

    def reduced(red: fusion.RowReduction, input: Node | Array, n: int = length) -> Array:
        out = leaf(red.out_dtype, (rows, 1))
        found[id(out)] = Stage(red, input, input.out_dtype if isinstance(input, Node) else input._dtype, rows, n)
        return out

    def program(node: Node, n: int = length) -> tuple[str, str]:
        return KERNEL, _prelude(reductions[0].source) + _Program(rows, n, lambda a: found.get(id(a))).build(node)[0]

    first, second, *_, mean, var = reductions
    x = leaf(first.out_dtype)
    e = op("exp", op("subtract", x, Broadcast(reduced(first, x), "col", length)))
    programs = [program(op("divide", e, Broadcast(reduced(second, e), "col", length)))]
    z = leaf(mean.out_dtype)
    std = leaf(var.out_dtype, (rows, 1))
    found[id(std)] = make_node(f["sqrt"], make_node(f["add"], reduced(var, z), 1e-5))
    centered = op("subtract", z, Broadcast(reduced(mean, z), "col", length))
    gamma = Broadcast(leaf(dtypes.float16, (length,)), "row", length)
    programs.append(program(op("multiply", op("divide", centered, Broadcast(std, "col", length)), gamma)))
    for red in reductions:
        w = leaf(red.out_dtype, (rows, 100))
        programs.append(program(op("subtract", w, Broadcast(reduced(red, w, 100), "col", 100)), 100))
    return programs
