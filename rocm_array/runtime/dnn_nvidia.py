"""cuDNN through NVIDIA's cudnn-frontend Python binding (``pip install nvidia-cudnn-frontend``).

Each convolution becomes a cuDNN graph (conv_fprop; conv_dgrad for the transposed
convolution) built once per shape and cached, with the
heuristics' plan; float32 convolutions exclude the tensor-core (TF32) engines, so
they compute in full float32. Work runs on the runtime's stream with a workspace
from the runtime's allocator.
"""

from __future__ import annotations

import ctypes
import os
from typing import TYPE_CHECKING, Any, Callable

from . import libfiles
from .dnn import Dnn, Pair, Tensor, Unsupported

if TYPE_CHECKING:
    from .gpu import GpuRuntime

__all__ = ["Cudnn", "open_library"]


def _import_frontend() -> Any:
    """The cudnn-frontend module, with one cuDNN in the process: the one PyTorch would use.

    The frontend (1.x) opens a cuDNN at import: ``LD_LIBRARY_PATH``'s, else the pip wheel's
    (``nvidia-cudnn-cu*``, PyTorch's bundled copy), else the loader's; PyTorch's own order is the
    same, so both share it. Only a frontend that opened none (older ones open it at the first call,
    by soname) gets ``_load_cudnn``'s. Loading the loader's copy first had put two cuDNNs in one
    process (a system 9.14 beside the wheel's 9.19, on an H200 host), and, before PyTorch was
    imported, made PyTorch refuse cuDNN."""
    try:
        import cudnn
    except ModuleNotFoundError:
        raise
    except (ImportError, OSError):  # a frontend linked against libcudnn.so.9 needs it open first
        _load_cudnn()
        import cudnn
    try:
        ctypes.CDLL("libcudnn.so.9", mode=os.RTLD_NOLOAD)  # (by soname: whichever copy is open)
    except OSError:
        _load_cudnn()
    return cudnn


def _load_cudnn() -> None:
    """Open libcudnn.so.9 for the frontend to find by soname: a pip ``nvidia-cudnn-*`` package's on
    sys.path first (what ``rocm_array[nvidia]`` installs and PyTorch bundles), else the loader's."""
    try:
        ctypes.CDLL(libfiles.locate("libcudnn.so.9"), mode=ctypes.RTLD_GLOBAL)
    except OSError:
        raise OSError("libcudnn.so.9 not found (install nvidia-cudnn-cu13 or -cu12)") from None


class Cudnn:
    """The ``Dnn`` protocol on one CUDA device."""

    name = "cuDNN"

    def __init__(self, rt: GpuRuntime) -> None:
        cudnn = _import_frontend()
        self._c = cudnn
        self._rt = rt
        rt.driver.activate()
        self._handle = cudnn.create_handle()
        cudnn.set_stream(handle=self._handle, stream=rt.driver.stream)
        self.version = cudnn.backend_version()
        self._graphs: dict[tuple[Any, ...], tuple[Any, ...] | None] = {}
        c = cudnn.data_type
        self._types = {"float16": c.HALF, "bfloat16": c.BFLOAT16, "float32": c.FLOAT, "float64": c.DOUBLE}

    def _run(self, key: tuple[Any, ...], build: Callable[[], tuple[Any, ...]], *arrays: Tensor) -> None:
        """Build (once) and execute the graph of ``key`` on ``arrays`` (in the graph's tensor order)."""
        if key not in self._graphs:
            try:
                self._graphs[key] = build()
            except Exception:  # cudnnGraphNotSupportedError and validation errors alike: not this shape
                self._graphs[key] = None
        entry = self._graphs[key]
        if entry is None:
            raise Unsupported(f"cuDNN has no engine for {key}")
        graph, tensors, size = entry
        rt = self._rt
        workspace = rt.allocate(size) if size else None  # freed in stream order after the work
        graph.execute({t: a.ptr for t, a in zip(tensors, arrays)},
                      workspace.ptr if workspace is not None else 0, handle=self._handle)

    def _graph(self, x: Tensor) -> tuple[Any, Any, Any]:
        c = self._c
        io = self._types[x.dtype.name]
        compute = c.data_type.DOUBLE if x.dtype.name == "float64" else c.data_type.FLOAT
        g = c.pygraph(io_data_type=io, intermediate_data_type=compute, compute_data_type=compute,
                      handle=self._handle)
        return g, io, compute

    def _tensor(self, g: Any, name: str, a: Tensor, io: Any) -> Any:
        return g.tensor(name=name, dim=list(a.shape), stride=list(a.strides), data_type=io)

    def _finish(self, g: Any, y: Any, out: Tensor, io: Any, no_tf32: bool) -> int:
        c = self._c
        y.set_output(True).set_data_type(io).set_dim(list(out.shape)).set_stride(list(out.strides))
        g.validate()
        g.build_operation_graph()
        g.create_execution_plans([c.heur_mode.A, c.heur_mode.FALLBACK])
        if no_tf32:
            g.deselect_numeric_notes([c.numerical_note.TENSOR_CORE])
        g.check_support()
        g.build_plans(c.build_plan_policy.HEURISTICS_CHOICE)
        return int(g.get_workspace_size())

    def convolution(self, y: Tensor, x: Tensor, w: Tensor, stride: Pair, padding: Pair, dilation: Pair,
                    groups: int, transposed: bool) -> None:
        def build() -> tuple[Any, ...]:
            g, io, compute = self._graph(x)
            tx, tw = self._tensor(g, "x", x, io), self._tensor(g, "w", w, io)
            opts = dict(padding=list(padding), stride=list(stride), dilation=list(dilation),
                        compute_data_type=compute)
            ty = (g.conv_dgrad(loss=tx, filter=tw, **opts) if transposed
                  else g.conv_fprop(image=tx, weight=tw, **opts))
            size = self._finish(g, ty, y, io, x.dtype.name == "float32")
            return g, (tx, tw, ty), size

        key = ("conv", transposed, x.shape, w.shape, y.shape, x.dtype.name, stride, padding, dilation)
        self._run(key, build, x, w, y)

    def pooling(self, y: Tensor, x: Tensor, window: Pair, stride: Pair, padding: Pair, mode: str) -> None:
        # cuDNN's pooling (the graph API's resample) ran slower than the own kernel on an H200
        # (42 against 32 us for 2x2 max pooling of 32x64x56x56 float32): leave pooling to it.
        raise Unsupported("pooling: the own kernel is faster than cuDNN's resample")


def open_library(rt: GpuRuntime) -> Dnn:  # (mypy checks Cudnn against the protocol)
    return Cudnn(rt)
