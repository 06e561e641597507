"""MIOpen through its C API (ctypes over ``libMIOpen.so``), as ROCm documents it.

Convolutions are ``miopenConvolutionForward`` (``miopenTranspose`` mode for the
transposed ones, with MIOpen's transposed output padding), the algorithm found by
``miopenFindConvolutionForwardAlgorithm`` once per shape and cached; pooling is
``miopenPoolingForward``. Workspaces come from the runtime's allocator; the work runs
on the runtime's stream.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from typing import TYPE_CHECKING, Any

from .dnn import Pair, Tensor, Unsupported

if TYPE_CHECKING:
    from .gpu import GpuRuntime

__all__ = ["MIOpen", "open_library"]

_P = ctypes.c_void_p
_TYPES = {"float16": 0, "float32": 1, "bfloat16": 5, "float64": 6}  # miopenDataType_t
_CONVOLUTION, _TRANSPOSE = 0, 1  # miopenConvolutionMode_t
_POOL_MODES = {"max": 0, "avg_exclude_pad": 1, "avg_include_pad": 2}  # miopenPoolingMode_t
_FIND_RESULTS = 4


class _AlgoPerf(ctypes.Structure):
    """miopenConvAlgoPerf_t: a union of the algorithm enums (an int), the time, the workspace."""

    _fields_ = [("algo", ctypes.c_int), ("time", ctypes.c_float), ("memory", ctypes.c_size_t)]


class MIOpen:
    """The ``Dnn`` protocol on one AMD device."""

    name = "MIOpen"

    def __init__(self, rt: GpuRuntime) -> None:
        path = ctypes.util.find_library("MIOpen") or "libMIOpen.so.1"
        self._lib = ctypes.CDLL(path)
        self._lib.miopenGetErrorString.restype = ctypes.c_char_p
        self._rt = rt
        rt.driver.activate()
        self._handle = _P()
        self._call("miopenCreate", ctypes.byref(self._handle))
        self._call("miopenSetStream", self._handle, _P(rt.driver.stream))
        self._plans: dict[tuple[Any, ...], tuple[int, int] | None] = {}

    def _call(self, fn: str, *args: Any) -> None:
        status = getattr(self._lib, fn)(*args)
        if status:
            raise Unsupported(f"{fn} failed: {self._lib.miopenGetErrorString(status).decode()}")

    def _tensor(self, a: Tensor) -> _P:
        if a.dtype.name not in _TYPES:
            raise Unsupported(f"MIOpen has no {a.dtype.name} tensors")
        desc = _P()
        self._call("miopenCreateTensorDescriptor", ctypes.byref(desc))
        dims = (ctypes.c_int * a.ndim)(*a.shape)
        strides = (ctypes.c_int * a.ndim)(*a.strides)
        self._call("miopenSetTensorDescriptor", desc, _TYPES[a.dtype.name], a.ndim, dims, strides)
        return desc

    def _free(self, *descs: tuple[str, _P]) -> None:
        for fn, d in descs:
            getattr(self._lib, fn)(d)

    def convolution(self, y: Tensor, x: Tensor, w: Tensor, stride: Pair, padding: Pair, dilation: Pair,
                    groups: int, transposed: bool) -> None:
        rt, lib = self._rt, self._lib
        xd, wd, yd, cd = self._tensor(x), self._tensor(w), self._tensor(y), _P()
        try:
            self._call("miopenCreateConvolutionDescriptor", ctypes.byref(cd))
            two = ctypes.c_int * 2
            self._call("miopenInitConvolutionNdDescriptor", cd, 2, two(*padding), two(*stride), two(*dilation),
                       _TRANSPOSE if transposed else _CONVOLUTION)
            self._call("miopenSetConvolutionGroupCount", cd, groups)
            if transposed:  # the output size y has beyond the plain transposed convolution's
                base = [(i - 1) * s - 2 * p + d * (k - 1) + 1
                        for i, s, p, d, k in zip(x.shape[2:], stride, padding, dilation, w.shape[2:])]
                self._call("miopenSetTransposeConvNdOutputPadding", cd, 2,
                           two(*(o - b for o, b in zip(y.shape[2:], base))))
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
            self._call("miopenConvolutionForward", self._handle, ctypes.byref(one), xd, px, wd, pw, cd, algo,
                       ctypes.byref(zero), yd, py, _P(ws.ptr if ws else None), ctypes.c_size_t(size))
        finally:
            lib.miopenDestroyConvolutionDescriptor(cd)
            self._free(*(("miopenDestroyTensorDescriptor", d) for d in (xd, wd, yd)))

    def _find(self, xd: _P, px: _P, wd: _P, pw: _P, cd: _P, yd: _P, py: _P) -> tuple[int, int] | None:
        """The fastest algorithm and its workspace for one problem (searched once, on these buffers)."""
        size = ctypes.c_size_t()
        try:
            self._call("miopenConvolutionForwardGetWorkSpaceSize", self._handle, wd, xd, cd, yd, ctypes.byref(size))
            ws = self._rt.allocate(size.value) if size.value else None
            found = ctypes.c_int()
            perf = (_AlgoPerf * _FIND_RESULTS)()
            self._call("miopenFindConvolutionForwardAlgorithm", self._handle, xd, px, wd, pw, cd, yd, py,
                       _FIND_RESULTS, ctypes.byref(found), perf, _P(ws.ptr if ws else None), size, False)
        except Unsupported:
            return None
        if found.value < 1:
            return None
        best = min(perf[:found.value], key=lambda p: p.time)
        return best.algo, int(best.memory)

    def pooling(self, y: Tensor, x: Tensor, window: Pair, stride: Pair, padding: Pair, mode: str) -> None:
        rt, lib = self._rt, self._lib
        xd, yd, pd = self._tensor(x), self._tensor(y), _P()
        try:
            self._call("miopenCreatePoolingDescriptor", ctypes.byref(pd))
            self._call("miopenSet2dPoolingDescriptor", pd, _POOL_MODES[mode], *window, *padding, *stride)
            one, zero = ctypes.c_float(1.0), ctypes.c_float(0.0)
            self._call("miopenPoolingForward", self._handle, pd, ctypes.byref(one), xd, _P(x.ptr),
                       ctypes.byref(zero), yd, _P(y.ptr), False, None, ctypes.c_size_t(0))
        finally:
            lib.miopenDestroyPoolingDescriptor(pd)
            self._free(*(("miopenDestroyTensorDescriptor", d) for d in (xd, yd)))


def open_library(rt: GpuRuntime) -> MIOpen:
    return MIOpen(rt)
