"""Helpers shared by the test modules (tests/ is on sys.path under pytest's default import mode)."""

from __future__ import annotations

import ctypes
import itertools
import subprocess
import sys
from typing import Any

import ml_dtypes
import numpy as np

import rocm_array as xp
from rocm_array.runtime.protocol import DeviceProperties, DriverOutOfMemory


def host(x: xp.Array) -> np.ndarray:
    """The elements of ``x``, copied to a NumPy array (the reference side of a comparison)."""
    return np.asarray(x.to_device("cpu"))


def storage(dtype: str | xp.dtypes.DType) -> np.dtype:
    """The NumPy storage dtype of a dtype or dtype name (ml_dtypes' for bfloat16)."""
    name = dtype if isinstance(dtype, str) else dtype.name
    return np.dtype(ml_dtypes.bfloat16 if name == "bfloat16" else name)


def small_values(dtype: str, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """Small values in ``dtype``'s storage type: sums of a few products stay exact in every dtype.
    Both truth values for bool, and imaginary parts for the complex dtypes."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        a = rng.integers(0, 2, shape)
    elif dtype.startswith("complex"):
        a = rng.integers(-3, 4, shape) + 1j * rng.integers(-3, 4, shape)
    elif dtype.startswith(("int", "uint")):
        a = rng.integers(0 if dtype.startswith("u") else -3, 4, shape)
    else:
        a = rng.integers(-8, 9, shape) / 4
    return np.asarray(a).astype(storage(dtype))


class _Rtc:
    name = "fake"
    granular = True

    def version(self) -> str:
        return "0"


class RecordingDriver:
    """Records allocations, frees and launches; ``fail`` makes the next mallocs run out of memory."""

    platform = "nvidia"
    dlpack_device_type = 2
    stream = 0

    def __init__(self) -> None:
        self.properties = DeviceProperties("nvidia", 0, "recorder", "sm_90", 32, 4, 1 << 30)
        self._addresses = itertools.count(1 << 20, 1 << 21)
        self.mallocs: list[int] = []
        self.frees: list[int] = []
        self.launches: list[tuple[Any, ...]] = []
        self.fail = 0

    def rtc(self) -> _Rtc:
        return _Rtc()

    def event_create(self) -> int:
        return 0

    def malloc_async(self, nbytes: int) -> int:
        if self.fail:
            self.fail -= 1
            raise DriverOutOfMemory("out of memory")
        self.mallocs.append(nbytes)
        return next(self._addresses)

    def free_async(self, ptr: int) -> None:
        self.frees.append(ptr)

    def memset_d8(self, ptr: int, byte: int, nbytes: int) -> None:
        pass

    def synchronize(self) -> None:
        pass

    def pool_trim(self, keep: int) -> None:
        pass

    def pool_usage(self) -> tuple[int, int]:
        return (0, 0)

    def sender(self, function: Any, block: tuple[int, int, int], shared: int) -> Any:
        return lambda grid, params: self.launches.append((function, grid, block, shared, params))

    def module_load(self, code: bytes) -> bytes:
        self.modules = getattr(self, "modules", 0) + 1
        return code

    def module_function(self, module: bytes, lowered: str) -> str:
        return lowered


def read_argument(params: int, index: int, ctype: Any) -> Any:
    """Argument ``index`` as the driver reads it: through the pointer array at ``params``."""
    address = ctypes.cast(params, ctypes.POINTER(ctypes.c_void_p))[index]
    return ctype.from_address(address)


def run_python(code: str) -> str:
    """Run ``code`` in a fresh interpreter (what it imports is loaded anew); its output, once it has
    exited with status 0 (else the assertion shows its error output)."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout
