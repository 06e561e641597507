"""Deferred elementwise results on GPUs, computed by fused kernels (the switch: ``rocm_array.fusion``).

With fusion on, an elementwise function whose array operands are contiguous GPU arrays of the
result's shape returns an Array whose buffer is a ``Pending``: the operation and its operands,
checked by the front as usual but not computed. An elementwise function of such arrays extends the
expression (its tree, ``fused.Node``, is built from the parts only when it is computed). The
expression becomes data when its address is first read (``Pending.ptr``), which every other use
does: a reduction or any other kernel, indexing, a copy, a device transfer, DLPack, printing, a
Python scalar, an in-place write. It then runs as one generated kernel (``fused.py``) into the
result's buffer. Another plugin's kernel may compute the expression instead (a reduction does): it
finds them in the core, which ``register`` gives them to (``Expressions``,
``rocm_array.fusion.expressions()``).

Compiling that kernel must not cost more than it saves: an expression of one operation runs its
eager kernel, and the first time an expression's shape is seen (and its kernel is not in the disk
cache) its operations run one by one, as without fusion, while its kernel compiles on a thread;
later expressions of that shape use it.

Semantics are the eager ones:
- the same bits (see fused.hip: each result rounded to its dtype, no contraction across operations);
- no result sees a later write: an in-place write to an array (``memory.before_write``) first
  computes the results that read it (a result that reads it through a deferred operand then reads
  that operand's memory), and memory shared through DLPack is never read lazily. A lane's lone
  result joins its operands' readers late (``buffer.UNSETTLED``; ``Pending.settle``), since most are
  computed at once: the write settles them first;
- an expression keeps the arrays it reads alive (at most ``MAX_READS`` reads), and its deferred
  operands, which hold memory only once computed; it holds at most ``MAX_NODES`` operations (past
  either, its largest deferred operand is computed and read as an array);
- a result has one memory, whichever thread asks first: an expression is computed under a lock, a
  lone operation without one (two threads may both launch it; the first launch kept stays:
  ``Pending.force``).
"""

from __future__ import annotations

import ctypes
import itertools
import math
import threading
import warnings
import weakref
from concurrent.futures import Future
from typing import Any, Callable, Iterator, Sequence, TYPE_CHECKING, cast

from rocm_array import fusion
from rocm_array.array import Array, contiguous_strides
from rocm_array.dtypes import DType
from rocm_array.launch import BLOCK
from rocm_array.operands import Scalar
from rocm_array.runtime.buffer import SHARED, UNSETTLED, DeviceBuffer, LazyBuffer, sweep
from rocm_array.runtime.compiler import CompileError
from rocm_array.runtime.layout import BLOCKS_PER_CU

from . import fused, rows
from .backs import UFUNC
from .fused import Broadcast, Node, broadcast

from .front_ufunc import Ufunc

if TYPE_CHECKING:
    from rocm_array.devices import Device
    from rocm_array.runtime.protocol import Runtime

__all__ = ["Pending", "Deferral", "RowPending", "defer", "defer_contiguous", "reduce_rows", "expression",
           "generated", "Expressions", "register", "MAX_NODES", "MAX_READS", "COMPILE_IN_BACKGROUND", "LONE_STREAK",
           "LONE_SAMPLE", "PRUNE"]

#: Operations in one expression. A kernel's registers grow with it; 24 holds the chains the
#: benchmarks run (a softmax's numerator, a polynomial) with room to spare.
MAX_NODES = 24
#: Array reads in one expression, an array read twice counted twice: a bound on the arrays it keeps
#: alive until it is computed, and on its kernel's argument (a pointer a read). Past the benchmarks'
#: chains (axpy_loop's 24 operations read 13); not a measured optimum.
MAX_READS = 16
#: Compile a new expression's kernel on a thread while its operations run eagerly (False: compile
#: at once and run it; the tests use that to run every generated kernel).
COMPILE_IN_BACKGROUND = True
#: A buffer's list of readers is pruned of computed ones when it reaches this length, and again at
#: each power of two past it (a bound on the list's growth in a loop; doubling keeps a list of many
#: live readers, ``[x + i for i in range(n)]``, linear, not quadratic; not a measured optimum).
PRUNE = 32

_registry_lock = threading.Lock()

#: A lane whose deferred results were computed alone (never extended, never read by a reduction)
#: this many times in a row runs eagerly: a graph that is only ever one operation gains nothing
#: from deferral and pays for it. On an H100 a lone a + b of 16 float32 read at once took 11.97 us
#: deferred against 9.17 us eager (PyTorch 10.38). Past it, one call in LONE_SAMPLE still defers,
#: so that a lane whose results are extended again (a loop that starts building chains) resumes
#: deferring. Neither number is a measured optimum: 16 lets a few lone uses pass (a setup step)
#: before a loop, and one deferral in 64 costs about 0.05 us a call.
LONE_STREAK = 16
LONE_SAMPLE = 64


class Deferral:
    """How one lane (``gpu_lanes.lane``: a function on operands of fixed kinds) defers its results, made
    once a lane: the lane's constants, and what its lone deferred results became (see LONE_STREAK):
    ``streak``, how many in a row were computed alone (``Pending.force`` counts them); one that
    another operation extends (or a reduction reads as an expression) sets it back to 0. ``gate``:
    ``next(gate)`` says whether the lane's next operation defers though no operand is deferred:
    always, until the streak reaches LONE_STREAK; then one call in LONE_SAMPLE. (An iterator, read
    inline by the lane: a lone lane's operation then costs no call more than an eager one.) Races
    between threads only blur the count.

    The lane builds a lone deferred result itself (its fields in line, as ``Pending.fill`` sets
    them) and puts it in ``buffer.UNSETTLED``; ``extend`` defers one that extends a deferred
    operand."""

    __slots__ = ("fn", "dtype", "out_dtype", "device", "streak", "gate")

    def __init__(self, fn: Ufunc, dtype: DType, out_dtype: DType, device: Device) -> None:
        self.fn, self.dtype, self.out_dtype, self.device = fn, dtype, out_dtype, device
        self.streak = 0
        self.gate: Iterator[bool] = _ALWAYS

    def shut(self) -> None:
        """The lane's streak of results computed alone reached LONE_STREAK: it defers one call in
        LONE_SAMPLE from now on."""
        self.gate = itertools.cycle((False,) * (LONE_SAMPLE - 1) + (True,))

    def extended(self) -> None:
        """One of the lane's lone results was extended (or read by a reduction as an expression)."""
        self.streak = 0
        self.gate = _ALWAYS

    def extend(self, args: tuple[Array | Scalar, ...], x: Array, params: tuple[float, ...] = ()) -> Array | None:
        """The deferred result of the lane's function on ``args`` (contiguous arrays of x's shape on
        the lane's device, and Python scalars), one of which is a deferred result, when one still is
        (not computed since): the result extends it. Else None: compute it now. An operation with a
        deferred operand always extends it: a lane gone eager would otherwise force each chain it
        ends and never see one extended again."""
        for a in args:
            if type(a) is Array and type(a._buf) is Pending and a._buf._real is None:
                return defer_contiguous(self.fn, args, self.dtype, self.out_dtype, x._shape, x._strides,
                                        self.device, params)
        return None


#: A lane's gate while it defers every operation.
_ALWAYS = itertools.repeat(True)


class Pending(LazyBuffer):
    """The buffer of a deferred result (the core's ``LazyBuffer``): reads of ``ptr`` compute it
    (once, on any thread).

    It holds its operation's parts (``fn``, dtypes, operands, shape, parameters), not an expression
    tree: a deferred operation costs little more than an eager one (tests/test_host_budget.py). The
    tree (``node``) is built when the result is computed, or read by another kernel, from the parts
    and from those of each deferred operand that is still not computed then (an operand computed
    meanwhile is read as an array: what it holds was computed from the values it was given). So a
    write in place of an array needs to compute only the results that read it directly (its
    ``readers``): one that reads it through a deferred operand reads that operand's memory once it
    is computed. ``count`` and ``reads`` bound the tree: its operations and its array reads, counted
    as it was deferred (MAX_NODES, MAX_READS).

    A lone operation (no deferred operand) also keeps its lane's launch (``eager(*eager_args)``,
    which gives the result's memory): computing it alone is that launch, and its lane learns from
    ``lone`` (its ``Deferral``) whether deferring pays. Its lane puts it in ``buffer.UNSETTLED``, not
    in its operands' readers: computing it takes it out, and a write in place registers it first
    (``settle``).

    ``Pending()`` makes one with no fields set (object's __init__: no frame), which ``fill`` sets; its
    lane sets the same fields in line (``gpu_lanes._TEMPLATE``, a frame less), so a field added to
    ``fill`` is added there too (tests/test_fusion.py compares the two). (A lane's ``new(Pending)``,
    object.__new__, cost about 300 instructions more than ``Pending()``: its call builds argument
    tuples.)"""

    __slots__ = ("_parts", "count", "reads", "eager", "eager_args", "lone", "device", "_real")

    __init__ = object.__init__

    def fill(self, device: Device, nbytes: int, parts: tuple[Any, ...] | None, count: int, reads: int,
             eager: Callable[..., DeviceBuffer] | None = None, eager_args: tuple[Any, ...] = (),
             lone: Deferral | None = None) -> None:
        """Set every field of a new Pending (``Pending()``)."""
        self._parts = parts  # (fn, dtype, out_dtype, operands, shape, params)
        self.count = count
        self.reads = reads
        self.eager = eager
        self.eager_args = eager_args
        self.lone = lone
        self.device = device
        self.nbytes = nbytes
        self.device_index = device.index
        self.owner = None
        self.readers: Any = None  # (results deferred over this one)
        self._real: DeviceBuffer | None = None

    @property
    def node(self) -> Node | None:
        """The expression, while it is not computed: built from the parts at each ask (under the lock
        that computing takes), each deferred operand's as it is then. A lone operation's lane learns
        that it was extended, or read by a reduction."""
        if self._parts is None:
            return None
        with _compute_lock:
            parts = self._parts
            if parts is None:
                return None
            fn, dtype, out_dtype, args, shape, params = parts
            node = Node(fn, dtype, out_dtype, tuple([_node_of(a) or a if type(a) is Array else a for a in args]),
                        shape, params)
            self.extended()
            if _unsettle(self, _ABSENT) is None:  # (a reduction reads it as an expression: see settle)
                self.settle()
        return node

    def extended(self) -> None:
        """Another operation extends this result (or a reduction reads it as an expression): it is no
        longer a lone result, and its lane's streak of those restarts (LONE_STREAK)."""
        lone = self.lone
        if lone is not None:
            lone.extended()
            self.lone = None

    @property
    def ptr(self) -> int:
        real = self._real
        return (real if real is not None else self.force()).ptr

    def settle(self) -> None:
        """``LazyBuffer.settle``: a lane's lone result, taken from ``buffer.UNSETTLED``, joins its
        operands' readers, unless it is computed. One that another operation extends stays there
        until that operation's expression is computed, which then drops it if nothing else holds it
        (``buffer.sweep``, from ``force``). One whose tree is built (a reduction reads it as an
        expression) is settled then (``node``): nothing computes it after that, and in UNSETTLED it
        would keep the arrays it reads until ``buffer.SETTLE_AT``."""
        parts = self._parts  # (read once: another thread may compute it)
        if parts is not None:
            _register(self, parts[3])

    def force(self) -> DeviceBuffer:
        """The result's memory, computed now if it is not yet.

        A lane's lone result is computed without the compute lock (about 900 of a deferred
        ``a + b``'s instructions): its launch is queued first, then kept unless another thread's
        was kept meanwhile, and only then does it leave ``UNSETTLED``. So a write in place on
        another thread either settles it first and computes it itself (its own launch queued
        before the write, and kept), or comes after its launch. Each step between two calls is
        one unbroken run of bytecode: no other thread runs in it (CPython's interpreter lock)."""
        real = self._real
        if real is not None:
            return real
        eager, args = self.eager, self.eager_args  # (both, or neither: the thread that computed it clears them)
        if eager is not None:
            real = eager(*args)
            if self._real is None:
                self._real = real
            _unsettle(self, None)  # (it need not join any readers now)
            lone = self.lone
            if lone is not None:  # (a lane's result, computed alone: its streak, in line)
                lone.streak += 1
                if lone.streak >= LONE_STREAK and lone.gate is _ALWAYS:
                    lone.shut()
            self._parts = self.eager = self.lone = None  # the arrays it read may go
            self.eager_args = ()
            return self._real
        _compute_acquire()  # (a with-statement costs about 900 instructions more)
        try:
            if self._real is None:
                real = _fused(self)
                if real is None:
                    node = self.node
                    assert node is not None
                    real = _evaluate(node, self.device)
                self._real = real
                self._parts = self.lone = None  # the arrays and results it read may go,
                if UNSETTLED:
                    sweep()  # and its inner lone results with them (see settle)
        finally:
            _compute_release()
        return self._real

    def __reduce__(self) -> Any:
        raise TypeError("a deferred result's buffer cannot be pickled; pickle the rocm_array Array that views it")

    def __repr__(self) -> str:
        state = "computed" if self._real is not None else "deferred"
        return f"Pending({state}, {self.nbytes} bytes, device {self.device_index})"


#: One expression is computed at a time (a lock per result would cost each deferred operation one; a lone
#: operation takes none: ``Pending.force``).
_compute_lock = threading.RLock()
_compute_acquire, _compute_release = _compute_lock.acquire, _compute_lock.release
_unsettle = UNSETTLED.pop
_ABSENT = object()  # (``_unsettle``'s answer for a buffer not in UNSETTLED; one that is gives None)


def defer(fn: Ufunc, arrays: list[Array | Scalar], dtype: DType, out_dtype: DType,
          shape: tuple[int, ...], params: tuple[float, ...] = ()) -> Array | None:
    """The deferred result of ``fn`` on ``arrays`` (the front's operands) and ``params`` (a
    ``ParamUfunc``'s), or None when they do not qualify: an array of another shape or layout, or
    memory shared through DLPack."""
    strides = contiguous_strides(shape)
    device = None
    operands: list[Array | Broadcast | Scalar] = []
    for a in arrays:
        if not isinstance(a, Scalar):
            if a._shape != shape or a._strides != strides:
                b = broadcast(a, shape)
                if b is None:
                    return None
                operands.append(b)
                continue
            device = a._device
        operands.append(a)
    if device is None:  # (an array of the result's shape sets where the result lives)
        return None
    return defer_contiguous(fn, operands, dtype, out_dtype, shape, strides, device, params=params)


def defer_contiguous(fn: Ufunc, arrays: Sequence[Array | Broadcast | Scalar], dtype: DType, out_dtype: DType,
                     shape: tuple[int, ...], strides: tuple[int, ...], device: Device,
                     params: tuple[float, ...] = ()) -> Array | None:
    """``defer`` for operands known to be contiguous arrays of ``shape`` on ``device``, Broadcast
    arrays and Python scalars."""
    sizes = _sizes(arrays)
    if sizes is None or 0 in shape:
        return None
    count, reads = sizes
    while count >= MAX_NODES or reads > MAX_READS:
        # Past the limits: the largest deferred operand is computed, and read as an array.
        extended = [a._buf for a in arrays if type(a) is Array and _extends(a)]
        if not extended:
            return None
        max(extended, key=lambda p: p.count).force()
        count, reads = cast("tuple[int, int]", _sizes(arrays))
    parts = (fn, dtype, out_dtype, tuple(arrays), shape, params)
    pending = Pending()
    pending.fill(device, math.prod(shape) * out_dtype.itemsize, parts, count + 1, reads)
    _register(pending, arrays)
    return Array(pending, shape, strides, 0, out_dtype, device)


def _extends(a: Array) -> bool:
    """Whether an operation on ``a`` extends its expression: a deferred result not computed yet,
    which ``a`` views whole and in order (a part of it is read as an array: computed first)."""
    buf = a._buf
    parts = buf._parts if type(buf) is Pending else None  # (read once: another thread may compute it)
    if parts is None or a._offset:
        return False
    shape: tuple[int, ...] = parts[4]
    return a._shape == shape or math.prod(a._shape) == math.prod(shape)


def _sizes(arrays: Sequence[Array | Broadcast | Scalar]) -> tuple[int, int] | None:
    """The operations and array reads of the expressions that ``arrays`` extend, and theirs; None when
    one's memory is shared through DLPack (never read lazily, read directly or broadcast)."""
    count = reads = 0
    for a in arrays:
        if type(a) is Array:
            buf = a._buf
            if _extends(a):
                count += buf.count
                reads += buf.reads
                continue
            if buf.readers is SHARED:
                return None
        elif type(a) is Broadcast:
            if a.array._buf.readers is SHARED:
                return None
        else:
            continue
        reads += 1
    return count, reads


def _register(pending: Pending, operands: Sequence[Any]) -> None:
    """Record ``pending`` as a reader of the memory of each array among its ``operands`` (arrays,
    Broadcast arrays, scalars): ``memory.before_write`` computes it before any is written in place.
    An append to the buffer's list of readers while it has one and it needs no pruning
    (``_crowded``), else ``_add_reader``."""
    ref = weakref.ref(pending)
    for a in operands:
        if type(a) is Array:
            buf = a._buf
        elif type(a) is Broadcast:
            buf = a.array._buf
        else:
            continue
        readers = buf.readers
        if readers is None or _crowded(len(readers)):
            _add_reader(buf, ref)
        else:
            readers.append(ref)


def _crowded(n: int) -> bool:
    """Whether a list of ``n`` readers is pruned before its next one is added (``PRUNE``)."""
    return n >= PRUNE and not n & (n - 1)


def _add_reader(buf: Any, ref: weakref.ref[Pending]) -> None:
    """Add ``ref`` to ``buf``'s readers: the list made if it has none, pruned of computed readers
    when ``_crowded``. Under a lock: two threads must not both make the list, nor prune it at once.
    Appends need none (a list's append is atomic), and a prune rewrites only the part of the list
    it read, so a reader appended meanwhile stays."""
    with _registry_lock:
        readers = buf.readers
        if readers is None:
            buf.readers = [ref]
            return
        n = len(readers)
        if _crowded(n):
            readers[:n] = [r for r in readers[:n] if (p := r()) is not None and p._real is None]
        readers.append(ref)


# -- evaluation ----------------------------------------------------------------------------------
#: (runtime, path, kernel name, generated source past the path's prelude) -> the loaded kernel, or
#: the Future of its compile.
_KERNELS: dict[tuple[Any, str, str, str], Any] = {}
#: (runtime, expression shape and aliases: ``Node.key``) -> (its kernel's launcher, the Kernel, blocks
#: at most): the fast path.
_READY: dict[tuple[Any, Any], tuple[Any, fused.Kernel, int]] = {}
_kernels_lock = threading.Lock()


def _fused(p: Pending) -> DeviceBuffer | None:
    """The memory of ``p``'s result by its expression's generated kernel, found by one walk of the
    deferred results (``_walk``), no tree built: the path of a chain computed again and again. None
    when that kernel is not ready yet, or the expression is one operation or reads a deferred
    reduction: ``_evaluate`` then builds the tree (``Pending.node``) and finds the way."""
    arrays: list[Array] = []
    divisors: list[int] = []
    scalars: list[Any] = []
    sig = _walk(p, arrays, divisors, scalars, True)
    if sig is None or sig is _ONE:
        return None
    rt = p.device.runtime
    ready = _READY.get((rt, (sig, fused.aliases(arrays))))
    if ready is None:
        return None
    return _launch(ready, rt, p.nbytes // ready[1].out_dtype.itemsize, arrays, divisors, scalars)


def _launch(ready: tuple[Any, fused.Kernel, int], rt: Runtime, n: int, arrays: Sequence[Array], divisors: Sequence[int],
            scalars: Sequence[Any]) -> DeviceBuffer:
    """The memory of an expression's result of ``n`` elements by its generated kernel (``_READY``'s
    entry), given the kernel's arguments in ``Node``'s order."""
    launch, k, most = ready
    buf = rt.allocate(n * k.out_dtype.itemsize)
    blocks = -(-n // (BLOCK * 2 * k.width))  # (layout.grid_1d's rule, its cap kept: the hot path)
    launch((blocks if blocks < most else most, 1, 1), (fused.arguments(k, buf.ptr, arrays, divisors, scalars), n))
    return buf


#: ``_walk``'s answer for an expression of one operation (its own lane's kernel computes it).
_ONE: Any = object()


def _walk(p: Pending, arrays: list[Array], divisors: list[int], scalars: list[Any], top: bool = False) -> Any:
    """``Node.sig`` of ``p``'s expression as ``Pending.node`` would build it (each operand that views
    a deferred result whole, not computed yet, is that result's expression), its kernel's arguments
    put in ``arrays``, ``divisors`` and ``scalars`` in ``Node``'s order; ``_ONE`` for a single
    operation (``top``), None when it reads a deferred reduction. A result it passes through is
    ``extended``, as ``Pending.node`` says."""
    fn, dtype, out_dtype, args, shape, params = p._parts  # type: ignore[misc]
    sigs: list[Any] = []
    inner = False
    for a in args:
        if type(a) is Array:
            buf = a._buf
            if _extends(a):
                sig = _walk(buf, arrays, divisors, scalars)
                if sig is None:
                    return None
                sigs.append(sig)
                inner = True
                buf.extended()
                continue
            if type(buf) is RowPending and buf._real is None:
                return None
        elif type(a) is Broadcast and type(a.array._buf) is RowPending and a.array._buf._real is None:
            return None
        sigs.append(fused.leaf_sig(a, dtype, arrays, divisors, scalars))
    if top and not inner:
        return _ONE
    return fused.operation_sig(fn, dtype, out_dtype, params, sigs, scalars)


def _evaluate(node: Node, device: Device) -> DeviceBuffer:
    """The memory of ``node``'s result on ``device``: by its generated kernel when it is ready,
    else operation by operation (an expression of one operation always so); an expression over
    deferred reductions by its row kernel (rows.py) when it is one and ready."""
    computed = rows.evaluate(node, device, _resolve, generated)
    if computed is not None:
        return computed
    if node.count > 1:
        rt = device.runtime
        key = node.key
        ready = _READY.get((rt, key))
        if ready is None:
            k = fused.kernel(*key)
            function = generated(device, fused.PATH, fused.KERNEL, fused.FUSED.options_on(device),
                                 fused.prelude(), k.source)
            if function is not None:
                fused.FUSED.check(device, fused.KERNEL, (BLOCK, 1, 1))
                ready = _READY[(rt, key)] = (
                    rt.launcher(function, [k.struct, ctypes.c_int64], (BLOCK, 1, 1)), k,
                    rt.properties.compute_units * BLOCKS_PER_CU)
        if ready is not None:
            _, arrays, divisors, scalars, _ = node._walk()
            return _launch(ready, rt, math.prod(node.shape), arrays, divisors, scalars)
    return _eagerly(node, {})._buf  # type: ignore[no-any-return]


def generated(device: Device, path: str, name: str, options: tuple[str, ...], prelude: str, source: str) -> Any:
    """The loaded kernel ``name`` of the generated program ``prelude + source`` (``path`` names it,
    and has that one prelude), or None while it compiles on a thread (``COMPILE_IN_BACKGROUND``,
    when the disk cache lacks it) or when it failed to compile (said once: its operations then run
    one by one, with the same results). Kernels are found by ``source`` alone: the whole program
    (52 KB for a reduction) was built and hashed at every call, 8 us of a fused sum's 49."""
    rt = device.runtime
    key = (rt, path, name, source)
    compiler = rt.compiler
    with _kernels_lock:
        found = _KERNELS.get(key)
        try:
            if found is None:
                source = prelude + source
                if COMPILE_IN_BACKGROUND and not compiler.cached(path, [name], options, source):
                    _KERNELS[key] = compiler.compile_later(path, [name], options, source)
                    return None
                found = _KERNELS[key] = rt.load(compiler.compile(path, [name], options, source))[name]
            elif isinstance(found, Future):
                if not found.done():
                    return None
                found = _KERNELS[key] = rt.load(found.result())[name]
        except CompileError as e:
            _KERNELS[key] = _FAILED
            warnings.warn(f"fusion: a generated kernel ({name}) did not compile for {e.target}; its operations "
                          f"run one by one, with the same results. The compiler said:\n{e.log.strip()}",
                          fusion.FusionFallbackWarning, stacklevel=2)
            return None
    return None if found is _FAILED else found


#: In ``_KERNELS``: a generated kernel that did not compile (its expressions run eagerly).
_FAILED = object()


def expression(x: Array) -> Node | None:
    """The expression of the deferred ``x`` when ``x`` views all of it in order (contiguous, from its
    start) and it is not computed yet: what a reduction of ``x`` may compute in its own kernel."""
    return _node_of(x) if x._strides == contiguous_strides(x._shape) else None


def _node_of(x: Array) -> Node | None:
    """``expression`` of an ``x`` known to be contiguous: its deferred node, when ``x`` views it whole
    (``_extends``)."""
    return x._buf.node if _extends(x) else None


def _eagerly(node: Node, done: dict[int, Array]) -> Array:
    """``node``'s result as the eager kernels compute it (each shared operation once)."""
    found = done.get(id(node))
    if found is not None:
        return found
    operands: list[Array | Scalar] = [_reshaped(_eagerly(a, done), node.shape) if isinstance(a, Node)
                                      else a.array if isinstance(a, Broadcast) else a for a in node.args]
    with fusion.eager():
        out = cast("Array", UFUNC["gpu"](node.fn, operands, node.dtype, node.out_dtype, node.shape,
                                         params=node.params))
    done[id(node)] = out
    return out


def _reshaped(x: Array, shape: tuple[int, ...]) -> Array:
    """The contiguous ``x`` seen with ``shape``: an operand node may be a reshaped view of its
    result (``_node_of`` matches by element count), which a fused kernel reads flat alike."""
    return x if x._shape == shape else Array(x._buf, shape, contiguous_strides(shape), 0, x._dtype, x._device)


# -- deferred reductions over the last axis (rows.py) --------------------------------------------------
class RowPending(Pending):
    """The buffer of a deferred reduction over the last axis (``reduce_rows``): read itself, it is
    computed by the reduction's own kernels (``eager``); an expression over it computes it inside its
    row kernel (``stage``), leaving it deferred."""

    __slots__ = ("stage",)

    def __init__(self, stage: rows.Stage, device: Device, nbytes: int, eager: Callable[[], DeviceBuffer]) -> None:
        self.fill(device, nbytes, None, 1, 1, eager)
        self.stage: rows.Stage | None = stage

    def force(self) -> DeviceBuffer:
        real = super().force()
        self.stage = None  # (the arrays it read may go)
        return real


def reduce_rows(x: Array, reduction: fusion.RowReduction, shape: tuple[int, ...]) -> Array | None:
    """``fusion.Expressions.reduce_rows``: the deferred ``reduction`` of the contiguous ``x`` over its
    last axis, or None when its rows are longer than a row kernel holds (``rows.ROW_BYTES``) or its
    memory is shared through DLPack."""
    length = x._shape[-1]
    if length * x._dtype.itemsize > rows.ROW_BYTES or x._buf.readers is SHARED:
        return None
    node = _node_of(x)
    device = x._device
    stage = rows.Stage(reduction, node if node is not None else x, x._dtype, x.size // length, length)
    pending = RowPending(stage, device, stage.rows * reduction.out_dtype.itemsize, lambda: reduction.eager(x)._buf)
    _register(pending, list(node.leaves.values()) if node is not None else (x,))  # (the stage holds the tree)
    return Array(pending, shape, contiguous_strides(shape), 0, reduction.out_dtype, device)


def _resolve(a: Array) -> rows.Stage | Node | None:
    """``rows.Resolve``: the stage of a deferred reduction not computed yet, or the expression of a
    deferred result that ``a`` views whole."""
    buf = a._buf
    if type(buf) is RowPending:
        return buf.stage if buf._real is None else None
    return _node_of(a)


class Expressions:
    """``fusion.Expressions`` of this plugin's deferred results (their nodes), which ``register``
    gives the core: other plugins reach them there, never through this module."""

    expression = staticmethod(expression)
    generated = staticmethod(generated)
    prelude = staticmethod(fused.prelude)
    examples = staticmethod(fused.examples)
    reduce_rows = staticmethod(reduce_rows)
    row_examples = staticmethod(rows.examples)


def register() -> None:
    """Make this plugin the core's provider of deferred expressions (``fusion.expressions()``)."""
    fusion.register_expressions(Expressions())
