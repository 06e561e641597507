"""The ``sim`` platform: the project's HIP kernels run on the CPU, at a chosen wave size.

Chosen only when asked (``ROCM_ARRAY_PLATFORM=sim``; ``ROCM_ARRAY_SIM_WAVE``: 64, AMD CDNA's
wave, or 32), never found by default. It shows what the kernels do at a wave size no
hardware at hand runs: lane-exact shuffles and ballots, ``__syncthreads``, shared memory,
atomics (rocm_array_kernels/sim/sim.h, rocm_array_kernels/sim/scheduler.cpp). Not timing, not the hardware's
memory model beyond barriers and atomics, not the AMD compiler's code.

``ROCM_ARRAY_SIM_BLOCKS`` orders a grid's blocks (``block_order``): ``forward`` (the default),
``reverse``, ``shuffle[:seed]``, or ``interleave[:seed]``, a few blocks at once, a round of one
then of another between synchronization points: a kernel whose result depends on which block
comes last (the last block to finish folding its peers' partials) shows it there. Memory stays
sequentially consistent: what a block writes, any other reads at once, so a missing fence or a
read through a stale cache is not shown (every global access would have to go through the
scheduler; the kernels' loads and stores are plain host ones).

Kept symmetric with ``amd.py`` and ``nvidia.py``: an Rtc, a Driver, ``count_devices`` and
``open_devices``. The Rtc is the host's clang++, making a shared library per program; device
memory is host memory; a launch runs the grid before it returns. ``ROCM_ARRAY_SIM_DEVICES``
simulates several devices, each with its own memory budget, which ``HIP_VISIBLE_DEVICES``
selects and orders as it does AMD GPUs: so the multi-GPU paths (peer copies, one Dask worker
per device) run here as they would on a machine with several cards.
"""

from __future__ import annotations

import ctypes
import hashlib
import itertools
import mmap
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, cast

from .compiler import cache_dir, kernel_headers, kernel_source
from .protocol import DeviceProperties, DriverError, DriverOutOfMemory
from .targets import COMMON

__all__ = ["SimRtc", "SimDriver", "count_devices", "open_devices"]

PLATFORM = "sim"
#: kDLROCM, as the device simulated: rocm_array treats its arrays as a GPU's (exports to the
#: host copy). No other library can use them: the memory is the host's, not a ROCm device's.
DLPACK_DEVICE_TYPE = 10
#: The wave sizes the simulator runs (ROCM_ARRAY_SIM_WAVE); 64 when unset: the one no other
#: platform in CI runs.
WAVES = (64, 32)
#: Compute units reported: few, so that the grids the backs size from it are small and
#: grid-stride loops take several turns.
COMPUTE_UNITS = 4
#: Bytes of "device" memory (ROCM_ARRAY_SIM_MEMORY overrides): allocations past it fail as
#: on a full device, so out-of-memory paths run without exhausting the host.
MEMORY = 4 << 30
#: The number of devices simulated (ROCM_ARRAY_SIM_DEVICES overrides).
DEVICES = 1
#: What selects and orders the simulated devices, as on AMD GPUs.
VISIBLE_VAR = "HIP_VISIBLE_DEVICES"
#: Alignment of allocations (the drivers give at least 256 bytes).
ALIGNMENT = 256
#: The oldest clang that compiles the AMD path on the host (_Float16 on x86-64: clang 15).
CLANG_MIN = 15
#: Flags of every build: position-independent shared libraries exporting only the entries.
BUILD = ["-fPIC", "-shared", "-fvisibility=hidden", "-U_FORTIFY_SOURCE"]
#: ROCM_ARRAY_SIM_BLOCKS' orders, by their number in rocm_array_kernels/sim/abi.h (RA_SIM_BLOCKS_*).
BLOCK_ORDERS = ("forward", "reverse", "shuffle", "interleave")
#: The seed of ``shuffle`` and ``interleave`` when the setting names none.
SEED = 1
#: Flags of kernel programs (besides the target's wave size): the AMD path, through sim.h.
KERNEL = [*COMMON, "-O1", "-DRA_SIM", "-include", "sim/sim.h", "-w"]

_ENTRY = ('extern "C" __attribute__((visibility("default"))) int {symbol}(const RaSimLaunch* l, void** p) '
          '{{ return ra_sim_launch<&{expr}>(l, p, "{expr}"); }}\n')
_libc = ctypes.CDLL(None)
_libc.aligned_alloc.restype = ctypes.c_void_p
_libc.aligned_alloc.argtypes = [ctypes.c_size_t, ctypes.c_size_t]
_libc.free.argtypes = [ctypes.c_void_p]
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
_MAP_FAILED = ctypes.c_void_p(-1).value
#: The bytes of an IPC handle, as the platforms': here the path of the shared file, padded.
IPC_HANDLE_SIZE = 64
#: Where the simulator's IPC memory lives: a file each allocation, which another process maps.
_IPC_FOLDER = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()


class Dim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


class Launch(ctypes.Structure):
    """rocm_array_kernels/sim/abi.h: RaSimLaunch."""

    _fields_ = [("grid", Dim3), ("block", Dim3), ("shared", ctypes.c_uint), ("reverse", ctypes.c_int),
                ("blocks", ctypes.c_int), ("seed", ctypes.c_uint)]


def block_order(spec: str) -> tuple[int, int]:
    """(order, seed) of a ROCM_ARRAY_SIM_BLOCKS value: forward, reverse, shuffle[:seed] or
    interleave[:seed] (a seed: a nonnegative integer below 2**32; SEED when left out)."""
    name, _, seed = spec.strip().lower().partition(":")
    if name not in BLOCK_ORDERS or (seed and (not seed.isdigit() or int(seed) >= 2**32 or name in BLOCK_ORDERS[:2])):
        raise DriverError(f"ROCM_ARRAY_SIM_BLOCKS={spec!r}: expected forward, reverse, shuffle[:seed] or "
                          f"interleave[:seed] (a seed: an integer from 0 to 2**32 - 1)")
    return BLOCK_ORDERS.index(name), int(seed) if seed else SEED


def find_compiler() -> tuple[str, str]:
    """The host clang++ (``ROCM_ARRAY_SIM_CXX``, else the newest on PATH) and its version line."""
    named = os.environ.get("ROCM_ARRAY_SIM_CXX")
    candidates = [named] if named else ["clang++", *(f"clang++-{v}" for v in range(22, CLANG_MIN - 1, -1))]
    for name in candidates:
        path = shutil.which(name)
        if not path:
            continue
        line = subprocess.run([path, "--version"], capture_output=True, text=True).stdout.splitlines()[:1]
        found = re.search(r"clang version (\d+)", line[0]) if line else None
        if found and int(found.group(1)) >= CLANG_MIN:
            return path, line[0].strip()
        if named:
            raise DriverError(f"ROCM_ARRAY_SIM_CXX={named}: not clang {CLANG_MIN} or later ({line[0] if line else '?'})")
    raise DriverError(f"no clang++ {CLANG_MIN} or later on PATH (the kernels' AMD path needs clang's extensions): "
                      f"apt-get install clang-{CLANG_MIN}, or set ROCM_ARRAY_SIM_CXX")


def _build(cxx: str, args: list[str], out: Path) -> None:
    """Run the compiler; DriverError with its output when it fails."""
    done = subprocess.run([cxx, *args, "-o", str(out)], capture_output=True, text=True)
    if done.returncode:
        raise DriverError(f"sim: building {out.name} failed:\n{done.stderr.strip()}")


def _write_tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")


_scheduler_lock = threading.Lock()
_schedulers: dict[str, ctypes.CDLL] = {}


def scheduler(cxx: str, version: str) -> ctypes.CDLL:
    """The scheduler library (rocm_array_kernels/sim/scheduler.cpp), built once into the kernel cache and
    loaded with RTLD_GLOBAL: the kernel libraries bind to its symbols when they load."""
    with _scheduler_lock:
        lib = _schedulers.get(cxx)
        if lib is not None:
            return lib
        source = kernel_source("sim/scheduler.cpp")
        key = hashlib.sha256(repr((source, kernel_headers()["sim/abi.h"], version, BUILD)).encode()).hexdigest()
        path = cache_dir() / "sim" / f"scheduler-{key[:24]}.so"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory() as tmp:
                _write_tree(Path(tmp), {"sim/scheduler.cpp": source, "sim/abi.h": kernel_headers()["sim/abi.h"]})
                built = Path(tmp) / "scheduler.so"
                _build(cxx, [*COMMON, "-O2", *BUILD, "-I", tmp, f"{tmp}/sim/scheduler.cpp"], built)
                os.replace(shutil.copy(built, path.with_suffix(f".{os.getpid()}.tmp")), path)
        lib = _schedulers[cxx] = ctypes.CDLL(str(path), mode=os.RTLD_NOW | os.RTLD_GLOBAL)
        lib.ra_sim_error.restype = ctypes.c_char_p
        return lib


@dataclass
class _Program:
    source: str
    filename: str
    headers: dict[str, str]
    names: list[str] = field(default_factory=list)
    log: str = ""
    code: bytes = b""


class SimRtc:
    """clang++ as a run-time compiler: a program becomes a shared library with one extern "C"
    entry per name expression, ``ra_sim_kernel_<i>``. Entries rather than the kernels' mangled
    names: the driver needs a C function of one signature that unpacks the kernelParams
    array into the kernel's parameters (the GPU driver's job), which the entry is."""

    name = "sim-clang"
    granular = False  # a clang++ process per program, about a second each: whole groups pay off

    def __init__(self, cxx: str, version: str) -> None:
        self._cxx = cxx
        self._version = version

    def version(self) -> str:
        return self._version

    def target_options(self, arch: str, wave_size: int) -> list[str]:
        return [*KERNEL, f"-DRA_WAVE_SIZE={wave_size}", *BUILD]

    def create(self, source: str, filename: str, headers: dict[str, str]) -> _Program:
        return _Program(source, filename, headers)

    def add_name(self, prog: _Program, expr: str) -> None:
        prog.names.append(expr)

    def compile(self, prog: _Program, options: list[str]) -> bool:
        entries = "".join(_ENTRY.format(symbol=self.lowered(prog, e), expr=e) for e in prog.names)
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            _write_tree(root, {**prog.headers, prog.filename: prog.source + "\n" + entries})
            out = root / "program.so"
            done = subprocess.run([self._cxx, *options, "-I", tmp, "-x", "c++", str(root / prog.filename),
                                   "-o", str(out)], capture_output=True, text=True)
            prog.log = done.stderr
            if done.returncode == 0:
                prog.code = out.read_bytes()
        return done.returncode == 0

    def log(self, prog: _Program) -> str:
        return prog.log

    def lowered(self, prog: _Program, expr: str) -> str:
        return f"ra_sim_kernel_{prog.names.index(expr)}"

    def code(self, prog: _Program) -> bytes:
        return prog.code

    def destroy(self, prog: _Program) -> None:
        pass


class SimDriver:
    """The simulated device: host memory, launches that run before they return."""

    platform = PLATFORM
    dlpack_device_type = DLPACK_DEVICE_TYPE
    dlpack_default_stream = 0  # as ROCm's
    stream = 0  # one implicit stream: every call completes in order

    def __init__(self, wave_size: int, reverse: bool, memory: int, index: int = 0, physical: int = 0,
                 blocks: str = "forward") -> None:
        """``index``: the device's ordinal in this process; ``physical``: which of the simulated
        devices it is (HIP_VISIBLE_DEVICES numbers them), named so that two processes can tell;
        ``blocks``: the order of a grid's blocks, as ROCM_ARRAY_SIM_BLOCKS (``set_blocks``)."""
        self._cxx, version = find_compiler()
        self._scheduler = scheduler(self._cxx, version)
        self._rtc = SimRtc(self._cxx, version)
        self._reverse = int(reverse)
        self._blocks = block_order(blocks)
        self._sizes: dict[int, int] = {}
        self._used = 0
        self._lock = threading.Lock()
        self._exported: dict[int, tuple[int, str]] = {}  # IPC memory made here: its bytes and file
        self._opened: dict[int, int] = {}  # IPC memory mapped from elsewhere: its bytes
        self._folder = tempfile.mkdtemp(prefix="rocm_array-sim-")
        self.properties = DeviceProperties(
            platform=PLATFORM, index=index, name=f"rocm_array simulator {physical}, wave {wave_size} ({version})",
            arch=f"sim{wave_size}", wave_size=wave_size, compute_units=COMPUTE_UNITS, total_memory=memory)

    def activate(self) -> None:
        pass

    def set_blocks(self, spec: str) -> None:
        """Run the grids launched from now on in block order ``spec`` (see ``block_order``)."""
        self._blocks = block_order(spec)

    def rtc(self) -> SimRtc:
        return self._rtc

    # -- memory --
    def malloc_async(self, nbytes: int) -> int:
        with self._lock:
            if self._used + nbytes > self.properties.total_memory:
                raise DriverOutOfMemory(f"sim malloc_async({nbytes}) failed: past the simulator's "
                                        f"{self.properties.total_memory} bytes (ROCM_ARRAY_SIM_MEMORY)")
            ptr = _libc.aligned_alloc(ALIGNMENT, -(-nbytes // ALIGNMENT) * ALIGNMENT)
            if not ptr:
                raise DriverOutOfMemory(f"sim malloc_async({nbytes}) failed: the host is out of memory")
            self._sizes[ptr] = nbytes
            self._used += nbytes
        return cast("int", ptr)

    def free_async(self, ptr: int) -> None:
        with self._lock:
            self._used -= self._sizes.pop(ptr)
        _libc.free(ptr)

    def pool_usage(self) -> tuple[int, int]:
        return self._used, self._used

    def pool_trim(self, keep: int) -> None:
        pass  # freed memory goes back to the host at once

    def memcpy(self, dst: int, src: int, nbytes: int, kind: str) -> None:
        ctypes.memmove(dst, src, nbytes)

    def memset_d8(self, ptr: int, value: int, nbytes: int) -> None:
        ctypes.memset(ptr, value, nbytes)

    # -- peers: every simulated device of a process is in its memory --
    def can_access_peer(self, peer: SimDriver) -> bool:
        return isinstance(peer, SimDriver)

    def enable_peer_access(self, peer: SimDriver) -> None:
        pass

    def memcpy_peer(self, dst: int, peer: SimDriver, src: int, nbytes: int) -> None:
        ctypes.memmove(dst, src, nbytes)

    def host_alloc(self, nbytes: int) -> int:
        ptr = _libc.aligned_alloc(ALIGNMENT, -(-nbytes // ALIGNMENT) * ALIGNMENT)
        if not ptr:
            raise DriverOutOfMemory(f"sim host_alloc({nbytes}) failed: the host is out of memory")
        return cast("int", ptr)

    def host_free(self, ptr: int) -> None:
        _libc.free(ptr)

    # -- memory another process maps (IPC): a shared file each, mapped by path --
    def ipc_alloc(self, nbytes: int) -> int:
        # (unique past this process: a receiver keeps mappings by handle, and pids are reused)
        path = os.path.join(_IPC_FOLDER, f"rocm_array-sim-{os.getpid()}-{next(_ipc_names)}-{os.urandom(4).hex()}")
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.ftruncate(fd, nbytes)
            ptr = _map(fd, nbytes, f"sim ipc_alloc({nbytes})")
        except BaseException:
            os.unlink(path)
            raise
        finally:
            os.close(fd)
        with self._lock:
            self._exported[ptr] = (nbytes, path)
        return ptr

    def ipc_free(self, ptr: int) -> None:
        with self._lock:
            nbytes, path = self._exported.pop(ptr)
        _libc.munmap(ptr, nbytes)
        os.unlink(path)  # (a process that mapped it keeps its pages until it closes them)

    def ipc_handle(self, ptr: int) -> bytes:
        path = self._exported[ptr][1].encode()
        if len(path) > IPC_HANDLE_SIZE:
            raise DriverError(f"sim ipc_handle: the path {path!r} is longer than a handle's {IPC_HANDLE_SIZE} bytes")
        return path.ljust(IPC_HANDLE_SIZE, b"\0")

    def ipc_open(self, handle: bytes) -> int:
        path = handle.rstrip(b"\0").decode()
        try:
            fd = os.open(path, os.O_RDWR)
        except OSError as exc:
            raise DriverError(f"sim ipc_open failed: {exc} (the exporting process freed it, or runs on another host)")
        try:
            nbytes = os.fstat(fd).st_size
            ptr = _map(fd, nbytes, "sim ipc_open")
        finally:
            os.close(fd)
        with self._lock:
            self._opened[ptr] = nbytes
        return ptr

    def ipc_close(self, ptr: int) -> None:
        with self._lock:
            nbytes = self._opened.pop(ptr)
        _libc.munmap(ptr, nbytes)

    # -- ordering: every call has completed when it returns --
    def event_create(self) -> Any:
        return [0.0]

    def event_record(self, event: Any) -> None:
        event[0] = time.perf_counter()

    def event_synchronize(self, event: Any) -> None:
        pass

    def event_elapsed_ms(self, start: Any, end: Any) -> float:
        return cast("float", (end[0] - start[0]) * 1e3)

    def event_destroy(self, event: Any) -> None:
        pass

    def stream_wait_event(self, stream: int, event: Any) -> None:
        pass

    def synchronize(self) -> None:
        pass

    # -- kernels --
    def module_load(self, code: bytes) -> Any:
        fd, path = tempfile.mkstemp(suffix=".so", dir=self._folder)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(code)
            return ctypes.CDLL(path, mode=os.RTLD_NOW | os.RTLD_LOCAL)
        finally:
            os.unlink(path)  # the loader keeps its mapping

    def module_function(self, module: Any, name: str) -> Any:
        try:
            fn = module[name]
        except AttributeError:
            raise DriverError(f"sim module_function({name}): no such entry in the program") from None
        fn.argtypes = [ctypes.POINTER(Launch), ctypes.c_void_p]
        fn.restype = ctypes.c_int
        return fn

    def sender(self, function: Any, block: tuple[int, int, int],
               shared: int) -> Callable[[tuple[int, int, int], int], None]:
        """``send(grid, params)``: run ``function`` over the grid, then return."""
        bx, by, bz = block
        reverse, error = self._reverse, self._scheduler.ra_sim_error

        def send(grid: tuple[int, int, int], params: int) -> None:
            launch = Launch(Dim3(*grid), Dim3(bx, by, bz), shared, reverse, *self._blocks)
            if function(ctypes.byref(launch), params):
                raise DriverError(f"sim launch failed: {error().decode(errors='replace')}")

        return send


_ipc_names = itertools.count()


def _map(fd: int, nbytes: int, call: str) -> int:
    """``fd``'s ``nbytes`` mapped shared, read and write."""
    ptr = _libc.mmap(None, max(nbytes, 1), mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_SHARED, fd, 0)
    if ptr in (None, _MAP_FAILED):
        raise DriverOutOfMemory(f"{call} failed: mmap errno {ctypes.get_errno()}")
    return cast("int", ptr)


def _setting(name: str, default: int, allowed: tuple[int, ...] = ()) -> int:
    raw = os.environ.get(name, "").strip()
    try:
        value = int(raw) if raw else default
    except ValueError:
        value = -1
    if value <= 0 or (allowed and value not in allowed):
        want = " or ".join(map(str, allowed)) if allowed else "a positive integer"
        raise DriverError(f"{name}={raw!r}: expected {want}")
    return value


def _visible() -> list[int]:
    """The simulated devices this process sees, in its order: ROCM_ARRAY_SIM_DEVICES of them,
    narrowed and ordered by HIP_VISIBLE_DEVICES when set (an entry that names no device is an
    error here, where HIP would silently drop it and every entry after it)."""
    count = _setting("ROCM_ARRAY_SIM_DEVICES", DEVICES)
    raw = os.environ.get(VISIBLE_VAR)
    if raw is None:
        return list(range(count))
    picked: list[int] = []
    for entry in filter(None, (e.strip() for e in raw.split(","))):
        if not entry.isdigit() or int(entry) >= count or int(entry) in picked:
            raise DriverError(f"{VISIBLE_VAR}={raw!r}: {entry!r} is not one of the {count} simulated devices "
                              f"(0 to {count - 1}, each once; ROCM_ARRAY_SIM_DEVICES sets how many)")
        picked.append(int(entry))
    return picked


def count_devices() -> int:
    """How many simulated devices this process sees (no compiler needed)."""
    return len(_visible())


def open_devices() -> list[SimDriver]:
    """The simulated devices; raises DriverError when a setting is wrong or clang++ is missing."""
    order = os.environ.get("ROCM_ARRAY_SIM_ORDER", "forward").strip().lower()
    if order not in ("forward", "reverse"):
        raise DriverError(f"ROCM_ARRAY_SIM_ORDER={order!r}: expected forward or reverse")
    blocks = os.environ.get("ROCM_ARRAY_SIM_BLOCKS", "forward")
    block_order(blocks)  # (a wrong setting is an error before a compiler is looked for)
    wave, memory = _setting("ROCM_ARRAY_SIM_WAVE", WAVES[0], WAVES), _setting("ROCM_ARRAY_SIM_MEMORY", MEMORY)
    return [SimDriver(wave, order == "reverse", memory, index=i, physical=p, blocks=blocks)
            for i, p in enumerate(_visible())]
