"""Row kernels: an expression over reductions along the last axis, in one kernel that reads each row once.

With fusion on, a reduction over the last axis of a contiguous GPU array or deferred expression is
deferred too (``deferred.reduce_rows``, asked by the reduction plugin through the core:
``fusion.RowReduction``), for rows up to ``ROW_BYTES``. An expression whose operands include such a
result broadcast back along the axis (keepdims, shape (..., 1): a ``col`` Broadcast; one row:
``one``), or an expression of such results (``sqrt(var + eps)``), is then one generated kernel
(``rows.hip``): a block a row (or a group of its first waves a row, when short rows fill only
those), each thread folds each reduction (a "stage"; a stage's input may hold earlier ones: a
softmax's sum of exp(x - max)) over its elements with the reduction's own functors, and writes the
results once. A softmax, a layer norm and ``x - mean(x)`` read x from memory once instead of two or
three times: a thread holds its elements in registers up to ``CACHE_REGISTERS``, and past that
reads them again in each phase, from the caches.

A stage gives the eager reduction's bits: the reduction plugin defers only rows its own kernel
gives a block each (no row cut across blocks), and says how many threads (``RowReduction.threads``);
the kernel folds each thread's elements in that kernel's order (rows.hip). Anything else (rows of
another length, stages of inputs of other widths, an input array not on a 16-byte boundary) is not
a row kernel: the expression runs as before, each reduction by its own kernels when it is read.

Each computation walks its expression (``_Walk``) into a key, what its program's text is a function
of (the operations, dtypes, which operand is which array, stage or per-row value), and the
arguments; the text, its argument packing and the loaded kernel's launcher are made once a key
(``_program``, ``_READY``). This module generates and launches the kernels; ``deferred.py`` holds
the deferred results and tells this one what an array is (``Resolve``).
"""

from __future__ import annotations

import ctypes
import functools
import math
from typing import Any, Callable, NamedTuple, Sequence, Union

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

__all__ = ["ROW_BYTES", "CACHE_REGISTERS", "PATH", "KERNEL", "Stage", "Resolve", "evaluate", "examples"]

#: The longest row (bytes of a stage's input) a reduction is deferred for: 16384 4-byte or 8192
#: 8-byte elements, at most 16 vectors a thread of the reductions' block for such rows (256), the
#: loops over them unrolled where a thread holds elements in registers.
ROW_BYTES = 65536
#: The 32-bit registers a thread gives the row elements it holds: an array's, read once, then a
#: stage's input values, kept for later reads (in that order, while they fit). Past it an array is
#: read again in each phase (from L1 or L2: the row was just read) and an expression computed again.
#: On an H200 (8192x8192 float32) a softmax holding x and exp(x - max), 64 registers of elements, took
#: 123 registers, two blocks an SM (24% of warps active) and 286 us, against torch.compile's 187 us
#: from a kernel that holds nothing and reads the row twice. 16 holds one float32 array of rows up to
#: 4096 (4 vectors of 4 a thread) and every array of shorter rows; 8192-float32 rows are read again
#: (on sm_90 the softmax then takes 64 registers, the layer norm 72). On an H200, us at 16 / 32 (ours,
#: host-timed batches; at 16 torch.compile took 166, 147 and 151): 8192x8192 softmax 245 / 321,
#: layer norm 399 / 397, x - mean 180 / 176; 4096x1024 134 / 138, 166 / 161, 82 / 75; 65536x256
#: 181 / 157, 206 / 247, 87 / 108. (Before this budget, holding everything: 8192x8192 278, 429, 156.)
CACHE_REGISTERS = 16
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


# A walk's key (what ``_program`` renders) is made of tuples:
# - members, the struct's, in order: ("p", dtype) an array's address, ("q",) a divisor, ("s", dtype) a
#   scalar, ("d",) a reduction's parameter; member k is named p{k}, q{k-1} (its array's), s{k}, d{k};
# - values, each ending with its dtype (None: a scalar, in its operation's dtype already):
#   ("c", n, dtype) an element of the row of array n (``loads``), ("k", j, dtype) the input values of
#   stage j, ("v", j, dtype) the row's value of statement j, ("m", k, layout, dtype) array member k
#   read (layout "a": at index i; else as fused.READ), ("s", k, None) scalar member k,
#   ("o", functor, arity, dtype, values, params, out_dtype) an operation (params: scalar members);
# - statements, in order: ("u", value, dtype) a per-row value, ("r", reduction, dtype, value, keep,
#   d) a stage: ``reduction`` (compute, out, map, combine, finalize) of ``value`` (of ``dtype``), its
#   input values offered to later reads when ``keep``, ``d`` its parameter's member.
Key = tuple[Any, ...]


class _Walk:
    """An expression over rows of ``length`` (``rows`` of them) as one row program: ``key`` and the
    arguments (``values``, the members' in order; the result's address None) found by walking it."""

    def __init__(self, rows: int, length: int, resolve: Resolve) -> None:
        self.rows, self.length, self.resolve = rows, length, resolve
        self.members: list[tuple[Any, ...]] = []
        self.values: list[Any] = []
        self.arrays: dict[tuple[int, int, DType], int] = {}  # a row-shaped array -> its index in loads
        self.loads: list[tuple[DType, int]] = []  # each row-shaped array's dtype and member
        self.found: dict[int, int] = {}  # id(stage or per-row expression) -> its statement
        self.kept: dict[int, int] = {}  # id(a stage's input expression) -> the stage's statement
        self.statements: list[tuple[Any, ...]] = []
        self.stages: list[Stage] = []
        self.width = 0

    def member(self, kind: tuple[Any, ...], value: Any) -> int:
        self.members.append(kind)
        self.values.append(value)
        return len(self.members) - 1

    # -- an element of the row ----------------------------------------------------------------------
    def element(self, a: Node | Array | Broadcast) -> tuple[Any, ...]:
        if type(a) is Node:
            j = self.kept.get(id(a))
            return ("k", j, a.out_dtype) if j is not None else self.operation(a, self.element)
        if type(a) is Broadcast:
            b = a.array
            if (a.layout == "col" and a.divisor == self.length) or (a.layout == "one" and self.rows == 1):
                value = self.per_row(b)
                if value is not None:
                    return value
            return self.read(b, a.layout, a.divisor)
        assert type(a) is Array
        if self.length == 1:  # (rows of one element: a reduction's result kept has the rows' shape)
            value = self.per_row(a)
            if value is not None:
                return value
        key = (id(a._buf), a._offset, a._dtype)
        n = self.arrays.get(key)
        if n is None:
            n = self.arrays[key] = len(self.loads)
            self.loads.append((a._dtype, self.member(("p", a._dtype), a)))
        return ("c", n, a._dtype)

    def read(self, b: Array, layout: str, divisor: int) -> tuple[Any, ...]:
        """A Broadcast array (or, layout ``a``, one of the expression's shape) read at index i."""
        k = self.member(("p", b._dtype), b)
        if layout not in ("a", "one"):
            self.member(("q",), divisor)
        return ("m", k, layout, b._dtype)

    def operation(self, n: Node, visit: Callable[[Any], tuple[Any, ...]]) -> tuple[Any, ...]:
        args = tuple(("s", self.member(("s", n.dtype), packed_scalar(n.dtype, a.value)), None)
                     if isinstance(a, Scalar) else visit(a) for a in n.args)  # (scalars in the compute dtype)
        held = compute_dtype(n.dtype)
        params = tuple(self.member(("s", held), packed_scalar(held, v)) for v in n.params)
        return ("o", n.fn.functor, n.fn.arity, n.dtype, args, params, n.out_dtype)

    def discover(self, a: Any) -> None:
        """The stages (and per-row expressions) under ``a`` found, before its elements are: they then
        read the values a stage kept of its input (a softmax's exp(x - max), for its sum and quotient)."""
        if type(a) is Node:
            for b in a.args:
                self.discover(b)
        elif type(a) is Broadcast and ((a.layout == "col" and a.divisor == self.length)
                                       or (a.layout == "one" and self.rows == 1)):
            self.per_row(a.array)
        elif type(a) is Array and self.length == 1:
            self.per_row(a)

    # -- a value of the row (i: the row's index) ------------------------------------------------------
    def per_row(self, b: Array) -> tuple[Any, ...] | None:
        """The row's value of ``b`` (one element a row) when it is a stage of these rows or a deferred
        expression of such values, computed once a row; else None (``b`` is read)."""
        found = self.resolve(b)
        if found is None:
            return None
        j = self.found.get(id(found))
        if j is None:
            if isinstance(found, Stage):
                if found.rows != self.rows or found.length != self.length:
                    return None
                j = self.stage(found)
            elif math.prod(found.shape) == self.rows:
                value = self.operation(found, self.row_value)
                j = len(self.statements)
                self.statements.append(("u", value, found.out_dtype))
            else:
                return None
            self.found[id(found)] = j
        return ("v", j, b._dtype)

    def row_value(self, a: Node | Array | Broadcast) -> tuple[Any, ...]:
        if type(a) is Node:
            return self.operation(a, self.row_value)
        if type(a) is Broadcast:
            return self.read(a.array, a.layout, a.divisor)
        assert type(a) is Array
        value = self.per_row(a)
        return value if value is not None else self.read(a, "a", 0)

    def stage(self, st: Stage) -> int:
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
        value = self.element(st.input)
        keep = type(st.input) is Node and id(st.input) not in self.kept
        d = self.member(("d",), red.correction)
        j = len(self.statements)
        self.statements.append(("r", (red.compute, red.out_dtype, red.map, red.combine, red.finalize), st.dtype,
                                value, keep, d))
        if keep:
            self.kept[id(st.input)] = j
        return j

    def walk(self, node: Node) -> tuple[Key, int]:
        """``node``'s key, and the threads of its blocks."""
        self.member(("p", node.out_dtype), None)
        self.discover(node)
        value = self.element(node)
        if not self.stages:
            raise _Unfused
        threads = self.stages[0].reduction.threads
        vectors = -(-self.length // (self.width * threads))
        most = 1 << (vectors - 1).bit_length()  # (a power of two: fewer kernels)
        return (self.width, most, tuple(self.members), tuple(self.loads), tuple(self.statements), value,
                node.out_dtype), threads


class _Program(NamedTuple):
    """A key's struct ``RaRows``: its text, its ctypes layout and the packing of its members' values."""

    source: str
    struct: type[ctypes.Structure]
    pack: Callable[..., bytes]


def _declared(member: tuple[Any, ...]) -> tuple[str, Any]:
    """A member's C++ type and ctypes type (see ``Key``)."""
    if member[0] == "p":
        return f"const {member[1].c_type}* RA_RESTRICT", ctypes.c_void_p
    if member[0] == "s":
        return member[1].c_type, ctype_of(member[1])
    return ("ra_index_t", ctypes.c_int64) if member[0] == "q" else ("double", ctypes.c_double)


@functools.lru_cache(maxsize=1024)
def _program(key: Key) -> _Program:
    """The struct of ``key`` (``_Walk.walk``): the row arrays, then the stages' kept values, held in
    registers in that order while they fit ``CACHE_REGISTERS`` (a thread's M vectors of each); the
    others read, or computed, again in each phase."""
    width, most, members, loads, statements, result, out_dtype = key
    held: list[int] = []  # (the registers of each)

    def fits(dtype: DType) -> bool:
        cost = -(-most * width * dtype.itemsize // 4)
        if sum(held) + cost > CACHE_REGISTERS:
            return False
        held.append(cost)
        return True

    cached = {n for n, (dtype, _) in enumerate(loads) if fits(dtype)}
    kept = {j for j, st in enumerate(statements) if st[0] == "r" and st[4] and fits(st[2])}
    M = most if cached or kept else 0  # (nothing held: loops, not unrolled)

    def text(v: tuple[Any, ...], lines: list[str]) -> str:
        kind = v[0]
        if kind == "c":
            return f"c{v[1]}.get(m, k)"
        if kind == "k":
            return f"e{v[1]}.get(m, k)" if v[1] in kept else text(statements[v[1]][3], lines)
        if kind == "v":
            return f"v{v[1]}"
        if kind == "m":
            return f"p{v[1]}[i]" if v[2] == "a" else fused.READ[v[2]].format(k=v[1])
        if kind == "s":
            return f"s{v[1]}"
        _, functor, arity, dtype, args, params, out = v
        texts = [text(a, lines) if a[-1] is None else operand(text(a, lines), a[-1], dtype) for a in args]
        local = f"t{len(lines)}"
        lines.append(f"const {out.c_type} {local} = "
                     f"{operation(functor, arity, dtype, out, texts, [f's{k}' for k in params])};")
        return local

    def function(v: tuple[Any, ...], t: str, put: str = "") -> str:
        """A lambda of the element at (m, k), r in the row, of value ``v`` (of C++ type ``t``)."""
        lines: list[str] = []
        value = text(v, lines)
        return (f"[&](int m, int k, ra_index_t r) -> {t} {{\n      const ra_index_t i = base + r; (void)i; (void)m; "
                f"(void)k;\n" + "".join(f"      {line}\n" for line in lines)
                + f"      return {put.format(value) if put else value};\n    }}")

    body = []
    for n, (dtype, k) in enumerate(loads):
        t = dtype.c_type
        body.append(f"    RaRowCache<{t}, V, M> c{n};\n    c{n}.load(p{k} + base, s);" if n in cached
                    else f"    RaRowStream<{t}, V, M> c{n}(p{k} + base, s);")
    streamed = "".join(f" c{n}.fetch(place);" for n in range(len(loads)) if n not in cached)
    body.append(f"    auto fetch = [&](RaRowPlace place) {{{streamed} (void)place; }};")
    for j, st in enumerate(statements):
        if st[0] == "u":
            lines: list[str] = []
            value, t = text(st[1], lines), st[2].c_type
            body.append(f"    const {t} v{j} = [&]() -> {t} {{\n      const ra_index_t i = row; (void)i;\n"
                        + "".join(f"      {line}\n" for line in lines) + f"      return {value};\n    }}();")
            continue
        _, (compute, out, map_, combine, finalize), dtype, value, _, d = st
        if j in kept:
            body.append(f"    RaRowCache<{dtype.c_type}, V, M> e{j};")
        put = f"e{j}.put(m, k, {{}})" if j in kept else ""
        body.append(f"    const {out.c_type} v{j} = ra_row_reduce<{compute.c_type}, {out.c_type}, {map_}, {combine}, "
                    f"{finalize}, V, M>(s, g, fetch, {function(value, dtype.c_type, put)}, d{d});")
    types = [_declared(m) for m in members]
    declared = [f"  {c_type} {m[0]}{k - 1 if m[0] == 'q' else k};\n"
                for k, (m, (c_type, _)) in enumerate(zip(members, types))]
    declared[0] = f"  {out_dtype.c_type}* RA_RESTRICT p0;\n"  # (the result)
    t = out_dtype.c_type
    source = f"""
struct RaRows {{
  static constexpr int V = {width}, M = {M};
{"".join(declared)}  unsigned int fence;
  RA_DEVICE void row(ra_index_t row, ra_index_t len, int t, int g, int nt) const {{
    const ra_index_t base = row * len;
    const RaRowSpan<V, M> s(base, len, t, nt);
{chr(10).join(body)}
    ra_row_store<{t}, V, M>(p0 + base, s, fetch, {function(result, t)});
  }}
}};
"""
    struct, pack = fused.packing("RaRows", (*(ctype for _, ctype in types), ctypes.c_uint))
    return _Program(source, struct, pack)


@functools.lru_cache(maxsize=4)
def _prelude(source: str) -> str:
    """What a row kernel compiles before its struct: the expressions' prelude, the reductions' program
    (``source``: their functors, the block reduction) and rows.hip."""
    return fused.prelude() + "\n" + source + "\n" + kernel_source(PATH)


#: (runtime, key, the reductions' options, block) -> the launcher of the key's loaded kernel, and its
#: struct's packing: the path of every computation after the first of an expression's shape.
_READY: dict[tuple[Any, ...], tuple[Any, Callable[..., bytes]]] = {}


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
    walk = _Walk(rows, length, resolve)
    try:
        key, threads = walk.walk(node)
    except _Unfused:
        return None
    rt = device.runtime
    red = walk.stages[0].reduction
    group = _group(length, walk.width, threads, rt.properties.wave_size)
    per = threads // group
    found = (rt, key, red.options, per * group)
    ready = _READY.get(found)
    if ready is None:
        program = _program(key)
        function = generated(device, PATH, KERNEL, red.options, _prelude(red.source), program.source)
        if function is None:
            return None
        ready = _READY[found] = (
            rt.launcher(function, [program.struct, ctypes.c_int64, ctypes.c_int64, ctypes.c_int32, ctypes.c_int32],
                        (per * group, 1, 1)), program.pack)
    launch, pack = ready
    buf = rt.allocate(rows * length * node.out_dtype.itemsize)
    values = walk.values
    values[0] = buf.ptr
    launch((min(-(-rows // per), MAX_GRID_X), 1, 1),
           (pack(*[address(v) if type(v) is Array else v for v in values], 0), rows, length, group, threads))
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
    of one, a row Broadcast of another dtype) of the last two, each in rows that a thread holds in
    registers and in rows it reads again, and ``x - r`` in short rows (a head and a tail, one vector a
    thread) of each."""
    from .table import BY_NAME as f

    rows = 8
    found: dict[int, Stage | Node] = {}  # (what the deferred results of a computation would resolve to)

    def leaf(dtype: DType, shape: tuple[int, ...]) -> Array:
        return memory.empty(shape, dtype, cpu)

    def op(name: str, *args: Any) -> Node:  # (the front sees a Broadcast as an array of the result's shape)
        shape = next(a.shape if type(a) is Node else a._shape for a in args if type(a) in (Node, Array))
        n = make_node(f[name], *(leaf(a.array._dtype, shape) if type(a) is Broadcast else a for a in args))
        return Node(n.fn, n.dtype, n.out_dtype, tuple(a if type(a) is Broadcast else b for a, b in zip(args, n.args)),
                    n.shape)

    def reduced(red: fusion.RowReduction, input: Node | Array, n: int) -> Array:
        out = leaf(red.out_dtype, (rows, 1))
        found[id(out)] = Stage(red, input, input.out_dtype if isinstance(input, Node) else input._dtype, rows, n)
        return out

    def program(node: Node, n: int) -> tuple[str, str]:
        key, _ = _Walk(rows, n, lambda a: found.get(id(a))).walk(node)
        return KERNEL, _prelude(reductions[0].source) + _program(key).source

    first, second, *_, mean, var = reductions
    programs = []
    for length in (1024, 4096):
        x = leaf(first.out_dtype, (rows, length))
        e = op("exp", op("subtract", x, Broadcast(reduced(first, x, length), "col", length)))
        programs.append(program(op("divide", e, Broadcast(reduced(second, e, length), "col", length)), length))
        z = leaf(mean.out_dtype, (rows, length))
        std = leaf(var.out_dtype, (rows, 1))
        found[id(std)] = make_node(f["sqrt"], make_node(f["add"], reduced(var, z, length), 1e-5))
        centered = op("subtract", z, Broadcast(reduced(mean, z, length), "col", length))
        gamma = Broadcast(leaf(dtypes.float16, (length,)), "row", length)
        programs.append(program(op("multiply", op("divide", centered, Broadcast(std, "col", length)), gamma), length))
    for red in reductions:
        w = leaf(red.out_dtype, (rows, 100))
        programs.append(program(op("subtract", w, Broadcast(reduced(red, w, 100), "col", 100)), 100))
    return programs
