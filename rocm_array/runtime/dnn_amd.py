"""MIOpen through its C API (ctypes over ``libMIOpen.so``), as ROCm documents it.

Convolutions are ``miopenConvolutionForward`` (``miopenTranspose`` mode for the
transposed ones, with MIOpen's transposed output padding), the algorithm found by
``miopenFindConvolutionForwardAlgorithm`` once per shape and cached; pooling is
``miopenPoolingForward``. Workspaces come from the runtime's allocator; the work runs
on the runtime's stream. ``Descriptors`` builds what those calls are given and needs
no device, so it is checked against the real library without a GPU.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Iterator

from .dnn import Dnn, Pair, Tensor, Unsupported

if TYPE_CHECKING:
    from .gpu import GpuRuntime

__all__ = ["MIOpen", "Descriptors", "open_library"]

_P = ctypes.c_void_p
_TYPES = {"float16": 0, "float32": 1, "bfloat16": 5, "float64": 6}  # miopenDataType_t
_CONVOLUTION, _TRANSPOSE = 0, 1  # miopenConvolutionMode_t
_POOL_MODES = {"max": 0, "avg_exclude_pad": 1, "avg_include_pad": 2}  # miopenPoolingMode_t
#: Algorithms miopenFind*Algorithm times and returns (the fastest first): as many as MIOpen's own
#: examples ask for; not measured (no AMD GPU here).
_FIND_RESULTS = 4


class _AlgoPerf(ctypes.Structure):
    """miopenConvAlgoPerf_t: a union of the algorithm enums (an int), the time, the workspace."""

    _fields_ = [("algo", ctypes.c_int), ("time", ctypes.c_float), ("memory", ctypes.c_size_t)]


class Descriptors:
    """libMIOpen and the descriptors of a problem. Nothing here needs a device (``miopenCreate``
    does), so the descriptors the calls are given can be checked on any machine with MIOpen.
    Each descriptor is a context manager: destroyed on exit, also when setting it up fails."""

    def __init__(self) -> None:
        self.lib = ctypes.CDLL(ctypes.util.find_library("MIOpen") or "libMIOpen.so.1")
        self.lib.miopenGetErrorString.restype = ctypes.c_char_p

    def call(self, fn: str, *args: Any) -> None:
        """``fn(*args)``; Unsupported naming the call and MIOpen's status when it fails."""
        status = getattr(self.lib, fn)(*args)
        if status:
            raise Unsupported(f"{fn} failed: {self.lib.miopenGetErrorString(status).decode()}")

    @contextmanager
    def _made(self, kind: str) -> Iterator[_P]:
        desc = _P()
        self.call(f"miopenCreate{kind}Descriptor", ctypes.byref(desc))
        try:
            yield desc
        finally:
            getattr(self.lib, f"miopenDestroy{kind}Descriptor")(desc)

    @contextmanager
    def tensor(self, a: Tensor) -> Iterator[_P]:
        """``a``'s dtype, shape and strides (in elements)."""
        if a.dtype.name not in _TYPES:
            raise Unsupported(f"MIOpen has no {a.dtype.name} tensors")
        with self._made("Tensor") as desc:
            ints = ctypes.c_int * a.ndim
            self.call("miopenSetTensorDescriptor", desc, _TYPES[a.dtype.name], a.ndim, ints(*a.shape),
                      ints(*a.strides))
            yield desc

    @contextmanager
    def convolution(self, y: Tensor, x: Tensor, w: Tensor, stride: Pair, padding: Pair, dilation: Pair,
                    groups: int, transposed: bool) -> Iterator[_P]:
        """The 2-D convolution ``MIOpen.convolution`` runs (its arguments, the same meaning)."""
        with self._made("Convolution") as desc:
            two = ctypes.c_int * 2
            self.call("miopenInitConvolutionNdDescriptor", desc, 2, two(*padding), two(*stride), two(*dilation),
                      _TRANSPOSE if transposed else _CONVOLUTION)
            self.call("miopenSetConvolutionGroupCount", desc, groups)
            if transposed:  # the output size y has beyond the plain transposed convolution's
                base = [(i - 1) * s - 2 * p + d * (k - 1) + 1
                        for i, s, p, d, k in zip(x.shape[2:], stride, padding, dilation, w.shape[2:])]
                self.call("miopenSetTransposeConvNdOutputPadding", desc, 2,
                          two(*(o - b for o, b in zip(y.shape[2:], base))))
            yield desc

    @contextmanager
    def pooling(self, window: Pair, stride: Pair, padding: Pair, mode: str) -> Iterator[_P]:
        """2-D pooling; ``mode`` as ``MIOpen.pooling`` takes it."""
        with self._made("Pooling") as desc:
            self.call("miopenSet2dPoolingDescriptor", desc, _POOL_MODES[mode], *window, *padding, *stride)
            yield desc


class MIOpen:
    """The ``Dnn`` protocol on one AMD device."""

    name = "MIOpen"

    def __init__(self, rt: GpuRuntime) -> None:
        self._d = Descriptors()
        self._rt = rt
        rt.driver.activate()
        self._handle = _P()
        self._d.call("miopenCreate", ctypes.byref(self._handle))
        self._d.call("miopenSetStream", self._handle, _P(rt.driver.stream))
        self._plans: dict[tuple[Any, ...], tuple[int, int] | None] = {}

    def convolution(self, y: Tensor, x: Tensor, w: Tensor, stride: Pair, padding: Pair, dilation: Pair,
                    groups: int, transposed: bool) -> None:
        rt, d = self._rt, self._d
        with d.tensor(x) as xd, d.tensor(w) as wd, d.tensor(y) as yd, \
                d.convolution(y, x, w, stride, padding, dilation, groups, transposed) as cd:
            px, pw, py = (_P(a.ptr) for a in (x, w, y))
            key = ("conv", transposed, x.shape, w.shape, y.shape, x.dtype.name, stride, padding, dilation, groups)
            if key not in self._plans:
                self._plans[key] = self._find(xd, px, wd, pw, cd, yd, py)
            plan = self._plans[key]
            if plan is None:
                raise Unsupported(f"MIOpen found no algorithm for {key}")
            algo, size = plan
            ws = rt.allocate(size) if size else None
            one, zero = ctypes.c_float(1.0), ctypes.c_float(0.0)  # MIOpen reads alpha and beta as float
            d.call("miopenConvolutionForward", self._handle, ctypes.byref(one), xd, px, wd, pw, cd, algo,
                   ctypes.byref(zero), yd, py, _P(ws.ptr if ws else None), ctypes.c_size_t(size))

    def _find(self, xd: _P, px: _P, wd: _P, pw: _P, cd: _P, yd: _P, py: _P) -> tuple[int, int] | None:
        """The fastest algorithm and its workspace for one problem (searched once, on these buffers)."""
        size = ctypes.c_size_t()
        try:
            self._d.call("miopenConvolutionForwardGetWorkSpaceSize", self._handle, wd, xd, cd, yd,
                         ctypes.byref(size))
            ws = self._rt.allocate(size.value) if size.value else None
            found = ctypes.c_int()
            perf = (_AlgoPerf * _FIND_RESULTS)()
            self._d.call("miopenFindConvolutionForwardAlgorithm", self._handle, xd, px, wd, pw, cd, yd, py,
                         _FIND_RESULTS, ctypes.byref(found), perf, _P(ws.ptr if ws else None), size, False)
        except Unsupported:
            return None
        if found.value < 1:
            return None
        best = min(perf[:found.value], key=lambda p: p.time)
        return best.algo, int(best.memory)

    def pooling(self, y: Tensor, x: Tensor, window: Pair, stride: Pair, padding: Pair, mode: str) -> None:
        d = self._d
        with d.tensor(x) as xd, d.tensor(y) as yd, d.pooling(window, stride, padding, mode) as pd:
            one, zero = ctypes.c_float(1.0), ctypes.c_float(0.0)
            d.call("miopenPoolingForward", self._handle, pd, ctypes.byref(one), xd, _P(x.ptr),
                   ctypes.byref(zero), yd, _P(y.ptr), False, None, ctypes.c_size_t(0))


def open_library(rt: GpuRuntime) -> Dnn:  # (mypy checks MIOpen against the protocol)
    return MIOpen(rt)
