"""One adapter per library, all with the same small interface.

``open()`` imports the library and finds the GPU (NotAvailable with the reason
otherwise), as a user's script does and nothing more: the fresh-process first-call cases use it,
and ``gpu_from`` says when the import ended and the GPU's opening began.
``load()`` opens and readies the harness's own tools for the in-process cases (the deferred
compile mode; the spin kernel comes at the first ``hold``). ``ns`` is the namespace the cases
call; ``to_device`` uploads a host NumPy array and casts it on the device;
``event``/``record``/``elapsed_ms`` time
a region with the library's own device events on the stream it launches on;
``release`` returns cached device memory between cases. Imports are lazy so that
``python -m benchmarks`` runs where none of them is installed.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import time
from typing import Any

import numpy as np

from . import hold
from .cases import NotAvailable

__all__ = ["Library", "RocmArray", "CuPy", "Torch", "LIBRARIES", "PEERS", "TITLES"]


class Library:
    name = ""
    module = ""  # the import name, for the import-time case
    title = ""

    def __init__(self) -> None:
        self.ns: Any = None
        self.unavailable: str | None = None  # why open() failed
        self.gpu_from: float | None = None  # time.monotonic() at the import's end, the GPU's opening next
        self._ready = False  # load() has readied the harness's tools
        # A spin kernel taking a cycle count (hold.py), made at the first hold: a platform without
        # clock64 (the simulator) still runs the cases that need none.
        self._spin: Any = None
        self._cycles_per_ms = 0.0

    def installed(self) -> bool:
        return importlib.util.find_spec(self.module) is not None

    def open(self) -> None:
        """Import and find the GPU once; NotAvailable (remembered) when either is missing."""
        if self.ns is not None:
            return
        if self.unavailable is None:
            try:
                if not self.installed():
                    raise NotAvailable(f"{self.module} is not installed")
                module = self._import()
                self.gpu_from = time.monotonic()
                self._open(module)
                return
            except NotAvailable as e:
                self.unavailable = str(e)
            except Exception as e:  # noqa: BLE001 - a library that breaks on import is not available
                self.unavailable = f"{type(e).__name__}: {e}"
        raise NotAvailable(self.unavailable)

    def load(self) -> None:
        """``open``, then the harness's tools (once)."""
        self.open()
        if not self._ready:
            self._prepare()
            self._ready = True

    def _import(self) -> Any:
        """The library's module, imported as a script does (no GPU touched yet)."""
        return importlib.import_module(self.module)

    def _open(self, module: Any) -> None:
        """Find the GPU through ``module`` and set ``ns``; NotAvailable when there is none."""
        raise NotImplementedError

    def _prepare(self) -> None:
        """Ready the in-process cases' tools."""

    def _spin_kernel(self) -> Any:
        """A callable ``spin(cycles)`` that keeps the library's stream busy (hold.py)."""
        raise NotImplementedError

    def finish(self, result: Any) -> Any:
        """``result`` with its work queued: the timed part of a call (rocm_array's may be deferred)."""
        return result

    def version(self) -> str:
        return str(getattr(self.ns, "__version__", "?"))

    def dtype(self, name: str) -> Any:
        try:
            return getattr(self.ns, name)
        except AttributeError:
            raise NotAvailable(f"{self.title} has no {name}") from None

    def to_device(self, host: np.ndarray, dtype: str) -> Any:
        raise NotImplementedError

    def to_host(self, x: Any) -> np.ndarray:
        """A device array's values in a NumPy array, as a user of the library would fetch them."""
        raise NotImplementedError

    def event(self) -> Any:
        raise NotImplementedError

    def record(self, event: Any) -> None:
        event.record()

    def elapsed_ms(self, start: Any, end: Any) -> float:
        raise NotImplementedError

    def synchronize(self) -> None:
        raise NotImplementedError

    def hold(self, ms: float) -> None:
        """Keep the GPU busy for about ``ms`` on the stream the library launches on (see hold.py)."""
        if self._spin is None:
            self._spin = self._spin_kernel()
            self._cycles_per_ms = self._calibrate()
        self._spin(int(ms * self._cycles_per_ms))

    def _calibrate(self) -> float:
        cycles = 1 << 22
        self._spin(cycles)  # the first launch may load the kernel
        start, end = self.event(), self.event()
        self.record(start)
        self._spin(cycles)
        self.record(end)
        self.synchronize()
        return cycles / max(self.elapsed_ms(start, end), 1e-3)

    def release(self) -> None:
        """Give cached device memory back (between cases)."""

    def properties(self) -> dict[str, Any]:
        """GPU name and L2 size in bytes, where the library tells them."""
        return {}


class CuPy(Library):
    name, module, title = "cupy", "cupy", "CuPy"

    def _import(self) -> Any:
        os.environ.pop("CUPY_TF32", None)  # float32 matmul in full float32, like the others
        return super()._import()

    def _open(self, cupy: Any) -> None:
        try:
            if cupy.cuda.runtime.getDeviceCount() < 1:
                raise NotAvailable("CuPy finds no GPU")
        except cupy.cuda.runtime.CUDARuntimeError as e:
            raise NotAvailable(f"CuPy finds no GPU: {e}") from None
        self.ns = cupy

    def _spin_kernel(self) -> Any:
        return hold.cupy_kernel(self.ns)

    def dtype(self, name: str) -> Any:
        if name == "bfloat16":
            raise NotAvailable("CuPy has no bfloat16")
        return super().dtype(name)

    def to_device(self, host: np.ndarray, dtype: str) -> Any:
        return self.ns.asarray(host).astype(self.dtype(dtype), copy=False)

    def to_host(self, x: Any) -> np.ndarray:
        return np.asarray(x.get())

    def event(self) -> Any:
        return self.ns.cuda.Event()

    def elapsed_ms(self, start: Any, end: Any) -> float:
        return float(self.ns.cuda.get_elapsed_time(start, end))

    def synchronize(self) -> None:
        self.ns.cuda.get_current_stream().synchronize()

    def release(self) -> None:
        self.ns.get_default_memory_pool().free_all_blocks()

    def properties(self) -> dict[str, Any]:
        p = self.ns.cuda.runtime.getDeviceProperties(self.ns.cuda.Device().id)
        name = p["name"]
        return {"gpu": name.decode() if isinstance(name, bytes) else str(name), "l2_bytes": int(p["l2CacheSize"]),
                "driver": self.ns.cuda.runtime.driverGetVersion()}


class Torch(Library):
    name, module, title = "torch", "torch", "PyTorch"

    def _open(self, torch: Any) -> None:
        if not torch.cuda.is_available():
            raise NotAvailable("PyTorch finds no GPU")
        # Like with like: float32 matmul and convolutions in full float32, as CuPy and rocm_array do.
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        self.ns = torch

    def _spin_kernel(self) -> Any:
        return self.ns.cuda._sleep  # PyTorch's own spin kernel, on its current stream

    def version(self) -> str:
        return f"{self.ns.__version__} (CUDA {self.ns.version.cuda}, cuDNN {self.ns.backends.cudnn.version()})"

    def to_device(self, host: np.ndarray, dtype: str) -> Any:
        return self.ns.from_numpy(host).to("cuda").to(self.dtype(dtype))

    def to_host(self, x: Any) -> np.ndarray:
        return np.asarray(x.cpu().numpy())

    def event(self) -> Any:
        return self.ns.cuda.Event(enable_timing=True)

    def elapsed_ms(self, start: Any, end: Any) -> float:
        return float(start.elapsed_time(end))

    def synchronize(self) -> None:
        self.ns.cuda.synchronize()

    def release(self) -> None:
        self.ns.cuda.empty_cache()

    def properties(self) -> dict[str, Any]:
        p = self.ns.cuda.get_device_properties(0)
        return {"gpu": p.name, "l2_bytes": int(getattr(p, "L2_cache_size", 0)) or None}


class RocmArray(Library):
    name, module, title = "rocm_array", "rocm_array", "rocm_array"
    _compute: Any = None
    _array_type: Any = None

    def _open(self, rocm_array: Any) -> None:
        from rocm_array import devices

        gpus = devices.gpus()
        if not gpus:
            raise NotAvailable("no GPU: " + ("; ".join(devices.gpu_problems()) or "none found"))
        self.ns = rocm_array
        self.device = gpus[0]
        self.runtime = self.device.runtime

    def _prepare(self) -> None:
        from rocm_array_plugins.elementwise import deferred

        # A new expression's fused kernel compiles at its first call, which the harness times
        # apart, instead of on a thread while the warm-up calls run eagerly (a user's loop reaches
        # the same steady state once the thread is done).
        deferred.COMPILE_IN_BACKGROUND = False

    def _spin_kernel(self) -> Any:
        return hold.rocm_array_kernel(self.runtime)

    def finish(self, result: Any) -> Any:
        """A deferred result computed (``fusion.compute``): its kernel queued, as reading it would."""
        if self._compute is None:  # (imported once: tiny_add times this call too)
            from rocm_array import Array, fusion

            self._array_type, self._compute = Array, fusion.compute
        if type(result) is self._array_type:  # (the common case first: tiny_add's loop times this call)
            self._compute(result)
        elif type(result) is tuple:
            for x in result:
                if isinstance(x, self._array_type):
                    self._compute(x)
        return result

    def to_device(self, host: np.ndarray, dtype: str) -> Any:
        x = self.ns.asarray(host, device=self.device)
        want = self.dtype(dtype)
        return x if x.dtype == want else self.ns.astype(x, want)

    def to_host(self, x: Any) -> np.ndarray:
        return np.from_dlpack(x.to_device("cpu"))  # what the arrays' __array__ error tells users to do

    # The runtime's events are recorded on the stream its launches use (GpuRuntime.event).
    def event(self) -> Any:
        return self.runtime.event()

    def elapsed_ms(self, start: Any, end: Any) -> float:
        return float(start.elapsed_ms(end))

    def synchronize(self) -> None:
        self.runtime.synchronize()

    def release(self) -> None:
        import gc

        gc.collect()  # buffers in reference cycles go back to the pool
        self.runtime.release_memory()  # and the pool's reservation to the driver, as the peers do

    def properties(self) -> dict[str, Any]:
        p = self.runtime.properties
        return {"gpu": p.name, "arch": p.arch}

    def version(self) -> str:
        p = self.runtime.properties
        return f"{self.ns.__version__} ({p.platform} platform, {p.arch})"


LIBRARIES: dict[str, Library] = {lib.name: lib for lib in (RocmArray(), CuPy(), Torch())}
PEERS = ("cupy", "torch")
TITLES = {name: lib.title for name, lib in LIBRARIES.items()}
