"""The benchmark cases: one table of rows, each runnable alone by name.

A row names its inputs (shapes and dtypes, filled with fresh random data on the
host and uploaded to each library), an untimed per-library ``setup`` (extra
buffers), the timed op per library (``"*"`` is the default, written against the
array-API subset all three share; a library that lacks the op gets an ``NA``
with the reason), and its work: the fewest bytes the op must move through
device memory (each input read once, each output written once) or its
floating-point operations. Work sets the rate (GB/s or TFLOP/s) and the ceiling
it is compared with: the copy bandwidth for bytes, the vendor GEMM rate of the
dtype for flops.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from .first_calls import FAMILIES, FROM_START, VENDOR_FAMILIES

__all__ = ["Input", "Work", "NA", "NotAvailable", "MISSING", "describe", "Case", "IN_PROCESS", "CASES", "BY_NAME", "KINDS", "select", "ceilings_for"]

ITEMSIZE = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8, "int64": 8}

#: How a case is measured: device events around the op; a host wall-clock loop; the wall-clock
#: time of a whole workload (its result on the host); a child process (import, first call with a
#: cold or a warm kernel cache).
KINDS = ("device", "host", "workload", "import", "first_call_cold", "first_call_warm", "from_start")
#: The kinds measured in this process, on the library loaded here (the others start children).
IN_PROCESS = ("device", "host", "workload")


class NotAvailable(Exception):
    """A library, dtype or op that is not there (reported as "n/a", never a failure)."""


#: What "not there" looks like: our own marker, a family not yet on the GPU, a function no plugin provides
#: (rocm_array's PluginUnavailableError is an AttributeError), a library without the function.
MISSING = (NotAvailable, NotImplementedError, AttributeError)


def describe(e: BaseException) -> str:
    """The reason shown for an exception (NotAvailable carries its own words)."""
    return str(e) if isinstance(e, NotAvailable) else f"{type(e).__name__}: {e}"


class NA(str):
    """In a case's ``ops``: why this library has no such op."""


@dataclass(frozen=True)
class Input:
    """One input array: filled with uniform random numbers in [0, 1) (``fill="uniform"``), a
    symmetric, diagonally dominant (so positive definite) matrix (``fill="spd"``), or class labels
    0 to 3 (``fill="classes"``, an integer dtype)."""

    shape: tuple[int, ...]
    dtype: str = "float32"
    fill: str = "uniform"

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * ITEMSIZE[self.dtype]


@dataclass(frozen=True)
class Work:
    """What one call must do: bytes through device memory, or floating-point operations."""

    bytes: int = 0
    flops: int = 0
    dtype: str = ""  # the GEMM ceiling that ``flops`` is compared with
    write_only: bool = False  # ``bytes`` are all written (a fill, a draw): compared with a fill's rate

    @property
    def ceiling(self) -> str | None:
        """The key of the ceiling this work is compared with (``copy``, ``write`` or ``gemm:<dtype>``)."""
        if self.flops:
            return f"gemm:{self.dtype}"
        if self.bytes:
            return "write" if self.write_only else "copy"
        return None


Op = Callable[..., Any]


@dataclass(frozen=True)
class Case:
    name: str
    kind: str = "device"
    inputs: tuple[Input, ...] = ()
    ops: Mapping[str, Op | NA] = field(default_factory=dict)
    setup: Op | None = None  # (lib, *arrays) -> arrays passed to the op; not timed
    work: Work = Work()
    ceiling: bool = False  # the peers' best rate on this case is the ceiling for its work
    note: str = ""
    family: str = "add"  # first-call cases: the op family (benchmarks/first_calls.py)
    processes: int = 0  # fresh processes per measurement (0: the settings' default)

    def op(self, lib: str) -> Op:
        """The timed op for ``lib``; NotAvailable when the library has none."""
        op = self.ops.get(lib, self.ops.get("*"))
        if op is None or isinstance(op, NA):
            raise NotAvailable(op or f"no {self.name} op for {lib}")
        return op


def _rw(*inputs: Input, out: int = 0) -> int:
    """Bytes of reading each input once and writing ``out`` bytes."""
    return sum(i.nbytes for i in inputs) + out


def _softmax_cupy(lib: Any, x: Any) -> Any:
    import cupyx.scipy.special

    return cupyx.scipy.special.softmax(x, axis=-1)


def _copy_into_rocm(lib: Any, src: Any, dst: Any) -> Any:
    from rocm_array import memory

    return memory.copy_into(dst, src)


def _fill_rocm(lib: Any, x: Any) -> Any:
    from rocm_array import memory

    return memory.fill(x, 1.0)


# -- fusion (#22): expressions in plain calls; rocm_array defers them and runs each as one kernel --
def _chain(L: Any, x: Any) -> Any:
    return L.ns.exp(-x * x) * 0.5 + L.ns.sin(x)


def _chain_sum(L: Any, x: Any) -> Any:
    return L.ns.sum(_chain(L, x))


def _softmax_plain(L: Any, x: Any) -> Any:
    """A softmax in each library's plain calls (no fused softmax function)."""
    if L.name == "torch":
        e = L.ns.exp(x - L.ns.amax(x, dim=-1, keepdim=True))
        return e / L.ns.sum(e, dim=-1, keepdim=True)
    e = L.ns.exp(x - L.ns.max(x, axis=-1, keepdims=True))
    return e / L.ns.sum(e, axis=-1, keepdims=True)


#: The layer norm's epsilon (PyTorch's default for nn.LayerNorm).
LAYERNORM_EPS = 1e-5


def _layernorm_plain(L: Any, x: Any) -> Any:
    """A layer norm over the last axis in each library's plain calls (mean, var, sqrt; no fused
    layer-norm function, no scale or shift). PyTorch's var divides by n only with ``correction=0``."""
    if L.name == "torch":
        mean = L.ns.mean(x, dim=-1, keepdim=True)
        var = L.ns.var(x, dim=-1, keepdim=True, correction=0)
    else:
        mean = L.ns.mean(x, axis=-1, keepdims=True)
        var = L.ns.var(x, axis=-1, keepdims=True)
    return (x - mean) / L.ns.sqrt(var + LAYERNORM_EPS)


def _axpy_loop(L: Any, x: Any, y: Any) -> Any:
    """1000 small operations: y = x * 0.5 + y, 500 times, and the result on the host."""
    for _ in range(500):
        y = x * 0.5 + y
    return L.to_host(y)


def _jacobi_loop(L: Any, u: Any) -> Any:
    """200 Jacobi sweeps of Laplace's equation on a grid, as array code writes them (each sweep: four
    shifted slices of the grid, none contiguous, their sum and its quarter written into the interior),
    and the grid on the host. The sweeps run on a copy: the input stays as it was."""
    u = u * 1.0
    for _ in range(200):
        u[1:-1, 1:-1] = (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]) * 0.25
    return L.to_host(u)


def _eager(f: Op) -> Op:
    """``f`` on rocm_array with fusion off: each elementwise call launches its own kernel."""
    def run(L: Any, *arrays: Any) -> Any:
        with L.ns.fusion.eager():
            return f(L, *arrays)

    return run


_COMPILED: dict[Any, Any] = {}


def _compiled(f: Op) -> Op:
    """``f`` compiled by the peer's own fuser: torch.compile, or cupy.fuse (made at the first call)."""
    def run(L: Any, *arrays: Any) -> Any:
        g = _COMPILED.get((L.name, f))
        if g is None:
            def fused_op(*a: Any) -> Any:  # (cupy.fuse names its kernel after the function: not <lambda>)
                return f(L, *a)

            g = _COMPILED[(L.name, f)] = (L.ns.compile if L.name == "torch" else L.ns.fuse)(fused_op)
        return g(*arrays)

    return run


#: The scikit-learn workloads (array_api_dispatch=True), each a fit and its result: (X, y) -> array.
SKLEARN: dict[str, Callable[[Any, Any], Any]] = {
    "pca_eigh": lambda X, y: _pca(svd_solver="covariance_eigh").fit_transform(X),
    "lda": lambda X, y: _lda().fit(X, y).predict_proba(X),
    "pca_randomized": lambda X, y: _pca(svd_solver="randomized", random_state=0).fit_transform(X),
}


def _pca(**kwargs: Any) -> Any:
    from sklearn.decomposition import PCA

    return PCA(16, **kwargs)


def _lda() -> Any:
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    return LinearDiscriminantAnalysis()


def _sklearn(name: str) -> Op:
    def run(L: Any, X: Any, y: Any) -> Any:
        import sklearn

        with sklearn.config_context(array_api_dispatch=True):
            return L.to_host(SKLEARN[name](X, y))

    return run


def _generator(lib: Any) -> tuple[Any]:
    """Each library's generator, seeded: torch's CUDA Philox, CuPy's legacy RandomState (cuRAND), ours."""
    if lib.name == "torch":
        return (lib.ns.Generator(device="cuda").manual_seed(0),)
    if lib.name == "cupy":
        return (lib.ns.random.RandomState(0),)
    return (lib.ns.random.default_rng(0),)


def _draw(kind: str, n: int) -> dict[str, Op]:
    """``kind`` ("uniform" or "normal") float32 draws of n values per library."""
    torch_f = "rand" if kind == "uniform" else "randn"
    cupy_f = "random_sample" if kind == "uniform" else "standard_normal"
    ours = "random" if kind == "uniform" else "standard_normal"
    return {"torch": lambda L, g: getattr(L.ns, torch_f)(n, generator=g, device="cuda", dtype=L.ns.float32),
            "cupy": lambda L, g: getattr(g, cupy_f)(n, dtype=L.ns.float32),
            "rocm_array": lambda L, g: getattr(g, ours)(n, dtype=L.ns.float32)}


N28 = 1 << 28
SQ = 16384
VEC = Input((N28,))
MAT = Input((SQ, SQ))
ROW = Input((SQ,))
KEYS = Input((1 << 26,))
KEYS64 = Input((1 << 24,), "float64")
V26 = Input((1 << 26,))
GEMM_N = 8192
BATCH = (512, 64, 64)
IMAGE = (32, 64, 56, 56)
FILTERS = (128, 64, 3, 3)
CONV_FLOPS = 2 * IMAGE[0] * FILTERS[0] * IMAGE[2] * IMAGE[3] * IMAGE[1] * FILTERS[2] * FILTERS[3]
LA_N = 4096
SPD = Input((LA_N, LA_N), "float64", "spd")
RHS = Input((LA_N, 1), "float64")
TINY = Input((16,))
SOFTMAX = Input((8192, 8192))
SMALL = Input((4096,))
GRID = Input((128, 128))
SK_X, SK_Y = Input((200_000, 256)), Input((200_000,), "int64", "classes")

CASES: tuple[Case, ...] = (
    Case("copy", inputs=(VEC,), setup=lambda L, s: (s, L.ns.empty_like(s)),
         ops={"torch": lambda L, s, d: d.copy_(s),
              "cupy": lambda L, s, d: d.data.copy_from_device_async(s.data, s.nbytes),
              "rocm_array": _copy_into_rocm},
         work=Work(bytes=2 * VEC.nbytes), ceiling=True,
         note="device-to-device copy into a preallocated buffer; bytes read + written"),
    Case("copy_image", inputs=(Input(IMAGE),), setup=lambda L, s: (s, L.ns.empty_like(s)),
         ops={"torch": lambda L, s, d: d.copy_(s),
              "cupy": lambda L, s, d: d.data.copy_from_device_async(s.data, s.nbytes),
              "rocm_array": _copy_into_rocm},
         work=Work(bytes=2 * Input(IMAGE).nbytes),
         note="the copy of a 32x64x56x56 float32 (25.7 MB): what a byte-bound op of max_pool2d's size can reach"),
    Case("fill", inputs=(VEC,), ops={"torch": lambda L, x: x.fill_(1.0), "cupy": lambda L, x: x.fill(1.0),
                                     "rocm_array": _fill_rocm},
         work=Work(bytes=VEC.nbytes, write_only=True), ceiling=True,
         note="every element of 2^28 float32 set to 1.0: the write bandwidth draws are compared with"),
    *(Case(f"random_{kind}", setup=_generator, ops=_draw(kind, N28), work=Work(bytes=VEC.nbytes, write_only=True),
           note=f"2^28 float32 {kind} values, a new array per call (torch.{'rand' if kind == 'uniform' else 'randn'}, "
                f"CuPy's RandomState, default_rng); bytes: the output, written once")
      for kind in ("uniform", "normal")),
    Case("sum_image", inputs=(Input(IMAGE),), ops={"*": lambda L, x: L.ns.sum(x)}, work=Work(bytes=Input(IMAGE).nbytes),
         note="a sum of max_pool2d's input (25.7 MB): a mid-size reduction, one read"),
    Case("add", inputs=(VEC, VEC), ops={"*": lambda L, a, b: a + b}, work=Work(bytes=_rw(VEC, VEC, out=VEC.nbytes))),
    Case("multiply", inputs=(VEC, VEC), ops={"*": lambda L, a, b: a * b},
         work=Work(bytes=_rw(VEC, VEC, out=VEC.nbytes))),
    Case("add_broadcast", inputs=(MAT, ROW), ops={"*": lambda L, a, b: a + b},
         work=Work(bytes=_rw(MAT, ROW, out=MAT.nbytes)), note="(16384, 16384) + (16384,)"),
    Case("add_transposed", inputs=(MAT, MAT), ops={"*": lambda L, a, b: a.T + b},
         work=Work(bytes=_rw(MAT, MAT, out=MAT.nbytes)), note="a.T + b, 16384x16384"),
    Case("chain5", inputs=(VEC, VEC), ops={"*": lambda L, a, b: (((a * b + a) * 0.5) - b) * a},
         work=Work(bytes=_rw(VEC, VEC, out=VEC.nbytes)),
         note="(((a*b + a)*0.5) - b)*a: five ops; bytes counted as if fused (2 reads, 1 write)"),
    Case("copy_transposed", inputs=(MAT,), ops={"*": lambda L, a: L.ns.reshape(a.T, (-1,))},
         work=Work(bytes=2 * MAT.nbytes), note="reshape(a.T, (-1,)): a transposing copy"),
    Case("sum", inputs=(VEC,), ops={"*": lambda L, a: L.ns.sum(a)}, work=Work(bytes=VEC.nbytes)),
    Case("sum_axis0", inputs=(MAT,), ops={"*": lambda L, a: L.ns.sum(a, axis=0)},
         work=Work(bytes=_rw(MAT, out=ROW.nbytes))),
    Case("sum_axis1", inputs=(MAT,), ops={"*": lambda L, a: L.ns.sum(a, axis=1)},
         work=Work(bytes=_rw(MAT, out=ROW.nbytes))),
    Case("sort", inputs=(KEYS,), ops={"*": lambda L, a: L.ns.sort(a), "torch": lambda L, a: L.ns.sort(a).values},
         work=Work(bytes=_rw(KEYS, out=KEYS.nbytes)), note="bytes: one read and one write (a lower bound)"),
    Case("argsort", inputs=(KEYS,), ops={"*": lambda L, a: L.ns.argsort(a)},
         work=Work(bytes=_rw(KEYS, out=KEYS.size * 8)), note="int64 indices; bytes: one read, one write"),
    Case("cumulative_sum", inputs=(KEYS,),
         ops={"rocm_array": lambda L, a: L.ns.cumulative_sum(a), "cupy": lambda L, a: L.ns.cumsum(a),
              "torch": lambda L, a: L.ns.cumsum(a, 0)},
         work=Work(bytes=_rw(KEYS, out=KEYS.nbytes)), note="2^26 float32; bytes: one read and one write"),
    Case("cumulative_sum_float64", inputs=(KEYS64,),
         ops={"rocm_array": lambda L, a: L.ns.cumulative_sum(a), "cupy": lambda L, a: L.ns.cumsum(a),
              "torch": lambda L, a: L.ns.cumsum(a, 0)},
         work=Work(bytes=_rw(KEYS64, out=KEYS64.nbytes)), note="2^24 float64 (#37's second scan target)"),
    *(Case(f"matmul_{dt}", inputs=(Input((GEMM_N, GEMM_N), dt),) * 2, ops={"*": lambda L, a, b: a @ b},
           work=Work(flops=2 * GEMM_N**3, dtype=dt), ceiling=True,
           note="8192^3" + (", TF32 off" if dt == "float32" else ""))
      for dt in ("float32", "float16", "bfloat16", "float64")),
    Case("bmm_float32", inputs=(Input(BATCH),) * 2, ops={"*": lambda L, a, b: a @ b},
         work=Work(flops=2 * BATCH[0] * BATCH[1] ** 3, dtype="float32"), note="512 x (64x64 @ 64x64)"),
    *(Case(f"conv2d_{dt}", inputs=(Input(IMAGE, dt), Input(FILTERS, dt)),
           ops={"torch": lambda L, x, w: L.ns.nn.functional.conv2d(x, w, padding=1),
                "rocm_array": lambda L, x, w: L.ns.nn.conv2d(x, w, padding=1),
                "cupy": NA("CuPy has no conv2d")},
           work=Work(flops=CONV_FLOPS, dtype=dt),
           note="32x64x56x56, 128 3x3 filters, pad 1" + ("; TF32 off" if dt == "float32" else ""))
      for dt in ("float32", "float16")),
    Case("max_pool2d", inputs=(Input(IMAGE),),
         ops={"torch": lambda L, x: L.ns.nn.functional.max_pool2d(x, 2),
              "rocm_array": lambda L, x: L.ns.nn.max_pool2d(x, 2),
              "cupy": lambda L, x: x.reshape(32, 64, 28, 2, 28, 2).max(axis=(3, 5))},
         work=Work(bytes=Input(IMAGE).nbytes * 5 // 4),
         note="2x2 on 32x64x56x56 (CuPy: reshape + max)"),
    Case("softmax", inputs=(SOFTMAX,),
         ops={"torch": lambda L, x: L.ns.softmax(x, dim=-1),
              "rocm_array": lambda L, x: L.ns.nn.softmax(x, axis=-1),
              "cupy": _softmax_cupy},
         work=Work(bytes=2 * SOFTMAX.nbytes), note="last axis of 8192x8192"),
    Case("fused_chain", inputs=(VEC,), ops={"*": _chain},
         work=Work(bytes=_rw(VEC, out=VEC.nbytes)),
         note="exp(-x*x)*0.5 + sin(x) on 2^28 float32, plain calls (rocm_array fuses them); bytes as if fused"),
    Case("fused_chain_compiled", inputs=(VEC,), ops={"*": _compiled(_chain), "rocm_array": _chain},
         work=Work(bytes=_rw(VEC, out=VEC.nbytes)), note="the chain through torch.compile and cupy.fuse"),
    Case("fused_chain_sum", inputs=(VEC,), ops={"*": _chain_sum},
         work=Work(bytes=VEC.nbytes), note="sum(exp(-x*x)*0.5 + sin(x)): the chain ending in a sum; one read"),
    Case("fused_chain_sum_compiled", inputs=(VEC,), ops={"*": _compiled(_chain_sum), "rocm_array": _chain_sum},
         work=Work(bytes=VEC.nbytes), note="the chain ending in a sum through torch.compile and cupy.fuse"),
    Case("softmax_plain", inputs=(SOFTMAX,), ops={"*": _softmax_plain},
         work=Work(bytes=2 * SOFTMAX.nbytes), note="a softmax in plain calls (max, exp, sum, divide), 8192x8192"),
    Case("softmax_plain_compiled", inputs=(SOFTMAX,),
         ops={"torch": _compiled(_softmax_plain), "cupy": NA("cupy.fuse has no keepdims reductions"),
              "rocm_array": _softmax_plain},
         work=Work(bytes=2 * SOFTMAX.nbytes), note="the plain-call softmax through torch.compile"),
    Case("layernorm_plain", inputs=(SOFTMAX,), ops={"*": _layernorm_plain},
         work=Work(bytes=2 * SOFTMAX.nbytes),
         note="(x - mean(x)) / sqrt(var(x) + 1e-5) over the last axis of 8192x8192 in plain calls; "
              "bytes as if fused (one read, one write)"),
    Case("layernorm_plain_compiled", inputs=(SOFTMAX,),
         ops={"torch": _compiled(_layernorm_plain), "cupy": NA("cupy.fuse has no keepdims reductions"),
              "rocm_array": _layernorm_plain},
         work=Work(bytes=2 * SOFTMAX.nbytes), note="the plain-call layer norm through torch.compile"),
    # -- nn's activations: rows of the elementwise table (#36), so an activation of an expression fuses --
    Case("silu", inputs=(V26,),
         ops={"torch": lambda L, x: L.ns.nn.functional.silu(x), "rocm_array": lambda L, x: L.ns.nn.silu(x),
              "cupy": NA("CuPy has no silu")},
         work=Work(bytes=_rw(V26, out=V26.nbytes)), note="2^26 float32"),
    Case("silu_of_scaled", inputs=(V26,),
         ops={"torch": lambda L, x: L.ns.nn.functional.silu(x * 2), "rocm_array": lambda L, x: L.ns.nn.silu(x * 2),
              "cupy": NA("CuPy has no silu")},
         work=Work(bytes=_rw(V26, out=V26.nbytes)),
         note="silu(x * 2) on 2^26 float32 (rocm_array fuses the two); bytes as if fused"),
    Case("elu", inputs=(V26,),
         ops={"torch": lambda L, x: L.ns.nn.functional.elu(x, alpha=0.5),
              "rocm_array": lambda L, x: L.ns.nn.elu(x, alpha=0.5), "cupy": NA("CuPy has no elu")},
         work=Work(bytes=_rw(V26, out=V26.nbytes)), note="alpha 0.5 (a row with a parameter) on 2^26 float32"),
    *(Case(name, kind="workload", inputs=(SMALL, SMALL), ops={"*": _axpy_loop, **extra},
           note=f"y = x*0.5 + y 500 times on 4096 float32 and y on the host (1000 small ops){tail}")
      for name, extra, tail in (("axpy_loop", {}, ": the host cost per op (rocm_array: deferred and fused)"),
                                ("axpy_loop_eager", {"rocm_array": _eager(_axpy_loop)},
                                 ", rocm_array with fusion off: each op its own kernel"))),
    Case("jacobi_loop", kind="workload", inputs=(GRID,), ops={"*": _jacobi_loop},
         note="200 Jacobi sweeps on 128x128 float32 (5 small ops a sweep over slices that are not contiguous) and "
              "the grid on the host"),
    Case("solve_float64", inputs=(SPD, RHS), ops={"*": lambda L, a, b: L.ns.linalg.solve(a, b)},
         work=Work(flops=2 * LA_N**3 // 3 + 2 * LA_N**2, dtype="float64"), note="4096x4096, one right-hand side"),
    Case("cholesky_float64", inputs=(SPD,), ops={"*": lambda L, a: L.ns.linalg.cholesky(a)},
         work=Work(flops=LA_N**3 // 3, dtype="float64"), note="4096x4096"),
    *(Case(f"sklearn_{name}", kind="workload", inputs=(SK_X, SK_Y), ops={"*": _sklearn(name)},
           note=f"scikit-learn {note} on 200000x256 float32 on the GPU (array_api_dispatch=True): the fit and "
                f"its result on the host, wall clock, median of three after a first call")
      for name, note in (("pca_eigh", "PCA(16, svd_solver='covariance_eigh').fit_transform"),
                         ("lda", "LinearDiscriminantAnalysis().fit(X, y).predict_proba(X), 4 classes"),
                         ("pca_randomized", "PCA(16, svd_solver='randomized').fit_transform"))),
    Case("tiny_add", kind="host", inputs=(TINY, TINY), ops={"*": lambda L, a, b: a + b},
         note="host cost per call of a + b on 16 elements (loop of 20,000)"),
    Case("import", kind="import", note="import time in a fresh process"),
    Case("first_call_cold", kind="first_call_cold",
         note="first a + b (2^20 float32) in a fresh process with an empty kernel cache"),
    Case("first_call_warm", kind="first_call_warm",
         note="first a + b (2^20 float32) in a fresh process with the disk kernel cache filled"),
    # First contact: one op per family, cold (an empty kernel cache) and warm, a fresh process each;
    # the vendor families' warm calls, the median of three processes (one sample moved by 20-40 ms
    # between runs on an H200: matmul 120 and 98.9 ms, conv2d 105 and 80.1 ms).
    *(Case(f"first_{family}_{state}", kind=f"first_call_{state}", family=family,
           processes=3 if state == "warm" and family in VENDOR_FAMILIES else 1)
      for family in FAMILIES if family not in FROM_START for state in ("cold", "warm")),
    # From the start of a fresh process to the result on the host: the import (PyTorch's too), the
    # GPU's opening, the upload and the first call, kernel cache warm; the median of three processes,
    # each with no other process alive (benchmarks/processes.py).
    *(Case(f"{family}_from_start", kind="from_start", family=family,
           note=f"{family}: a fresh process's import, upload and first call, its result on the host")
      for family in FROM_START),
)

BY_NAME: dict[str, Case] = {c.name: c for c in CASES}


def select(names: str | None) -> list[Case]:
    """The cases named in a comma-separated list (all when ``names`` is empty); ValueError for unknown names."""
    if not names:
        return list(CASES)
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    unknown = [n for n in wanted if n not in BY_NAME]
    if unknown:
        raise ValueError(f"unknown case(s) {', '.join(unknown)}; known: {', '.join(BY_NAME)}")
    return [BY_NAME[n] for n in wanted]


def ceilings_for(cases: list[Case]) -> list[Case]:
    """The ceiling-setting cases that ``cases`` are compared with, in table order."""
    keys = {c.work.ceiling for c in cases}
    return [c for c in CASES if c.ceiling and c.work.ceiling in keys]
