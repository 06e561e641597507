"""Run-time compilation of the HIP sources in ``rocm_array_kernels/``, cached in memory and on disk.

A kernel is a template in a source file of the installed package
``rocm_array_kernels``; a program compiles a group of its instantiations, named
by C++ name expressions (``"copy_strided<float, double>"``), with hiprtc or
NVRTC for one architecture. The lowered (mangled) names come back with the
code, so nothing depends on a compiler's mangling.

Cache key: a hash of the source, the headers of ``rocm_array_kernels/`` it includes (directly,
through other headers, or by an ``-include`` option: the only headers kernels use),
the options, the architecture, the wave size, the compiler and its version, and
the names. So an edit of one family's header recompiles that family's programs
alone. Entries are written atomically (temp file + rename); an entry that fails its
checksum is recompiled and replaced.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import logging
import marshal
import os
import re
import struct
import tempfile
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from types import CodeType
from typing import Any, Protocol, Sequence, cast

__all__ = ["CompileError", "Program", "Rtc", "Compiler", "kernel_source", "kernel_headers", "included_headers",
           "source_digest", "cache_dir", "compile_program", "python_code"]

KERNELS_PACKAGE = "rocm_array_kernels"
_MAGIC = b"RAKC1\n"
#: A compile longer than this gets an info line on the ``rocm_array`` logger (users see it by default).
NOTICE_SECONDS = 1.0
_log = logging.getLogger("rocm_array")


class CompileError(RuntimeError):
    """A kernel failed to compile; ``kernel`` names it, ``log`` is the compiler's output."""

    def __init__(self, kernel: str, target: str, log: str) -> None:
        super().__init__(f"compiling {kernel} for {target} failed:\n{log.strip()}")
        self.kernel = kernel
        self.target = target
        self.log = log


@dataclass(frozen=True)
class Program:
    """Compiled code for one architecture and the lowered name of each name expression."""

    key: str
    code: bytes
    lowered: dict[str, str]


class Rtc(Protocol):
    """The calls of one run-time compiler (NVRTC, hiprtc) that ``compile_program`` makes.

    ``granular``: whether a first call should compile only the instantiation it runs (a program's
    cost grows with its instantiations and a compile starts cheaply) rather than its whole group.
    """

    name: str
    granular: bool

    def version(self) -> str: ...
    def target_options(self, arch: str, wave_size: int) -> list[str]: ...
    def create(self, source: str, filename: str, headers: dict[str, str]) -> Any: ...
    def add_name(self, prog: Any, expr: str) -> None: ...
    def compile(self, prog: Any, options: list[str]) -> bool: ...
    def log(self, prog: Any) -> str: ...
    def lowered(self, prog: Any, expr: str) -> str: ...
    def code(self, prog: Any) -> bytes: ...
    def destroy(self, prog: Any) -> None: ...


@functools.lru_cache(maxsize=1)
def _kernels_root() -> Path:
    """The installed ``rocm_array_kernels`` folder, whose files are read directly: through
    ``importlib.resources`` (its readers imported and built at the first use) a warm process's first
    kernel took about 1 ms more, of a first call of 3 to 5 ms."""
    spec = importlib.util.find_spec(KERNELS_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"{KERNELS_PACKAGE} is not installed: reinstall rocm_array "
                                "(python -m pip install . in its clone)")
    return Path(next(iter(spec.submodule_search_locations)))


@functools.lru_cache(maxsize=None)
def kernel_source(path: str) -> str:
    """The text of ``rocm_array_kernels/<path>`` from the installed package (read once a process)."""
    try:
        return (_kernels_root() / path).read_text(encoding="utf-8")
    except (FileNotFoundError, IsADirectoryError):
        raise FileNotFoundError(f"no kernel source {path!r} in {KERNELS_PACKAGE}") from None


@functools.lru_cache(maxsize=None)
def _header(name: str) -> str | None:
    """The text of ``name`` if it is a header kernels may include (``"common/types.h"``: a ``.h`` file
    of a folder of ``rocm_array_kernels`` not named ``_*``), else None; read when first asked for."""
    folder, _, file = name.partition("/")
    if not file.endswith(".h") or "/" in file or folder.startswith("_") or not folder:
        return None
    try:
        return (_kernels_root() / folder / file).read_text(encoding="utf-8")
    except OSError:
        return None


@functools.lru_cache(maxsize=1)
def kernel_headers() -> dict[str, str]:
    """Every header kernels may include, by include name (``"common/types.h"``): the shared ones of
    ``rocm_array_kernels/common`` and a family's own (``"elementwise/ops.h"``). A compile passes them
    all; a cache key reads only those its program includes (``included_headers``)."""
    root = _kernels_root()
    names = sorted(f"{folder.name}/{f.name}" for folder in root.iterdir() if folder.is_dir()
                   for f in folder.iterdir() if f.is_file())
    return {name: text for name in names if (text := _header(name)) is not None}


#: An include line's name. Unanchored, with the line's start checked apart (``_includes``): a pattern
#: anchored at every line (``re.M``) took 0.5 ms over reduction.hip, this 0.03.
_INCLUDE = re.compile(r'#[ \t]*include[ \t]+"([^"]+)"')


def _includes(text: str) -> list[str]:
    """The names of ``text``'s ``#include "..."`` lines (only blanks before the ``#``)."""
    return [m.group(1) for m in _INCLUDE.finditer(text)
            if not text[text.rfind("\n", 0, m.start()) + 1:m.start()].strip()]


def included_headers(source: str, options: Sequence[str] = ()) -> list[tuple[str, str]]:
    """(name, text) of every header of ``rocm_array_kernels/`` that ``source`` includes, directly, through
    other headers, or by ``-include`` among ``options``, sorted by name."""
    todo = [*_includes(source), *(o for flag, o in zip(options, options[1:]) if flag == "-include")]
    found: dict[str, str] = {}
    while todo:
        name = todo.pop()
        if name not in found and (text := _header(name)) is not None:
            found[name] = text
            todo.extend(_includes(text))
    return sorted(found.items())


@functools.lru_cache(maxsize=256)
def source_digest(source: str, includes: tuple[str, ...] = ()) -> str:
    """The sha256 of a program's text and of every header it includes (``included_headers``; the
    ``-include`` names in ``includes``), once a process per text: recomputed for each program's key it
    cost 0.3-0.5 ms, 5-8 ms of a warm process's first ``unique_values`` (17 programs), mostly in
    scanning the headers for includes and in encoding their text."""
    h = hashlib.sha256(source.encode())
    for name, text in included_headers(source, [o for i in includes for o in ("-include", i)]):
        h.update(f"\0{name}\0{len(text)}\0".encode())
        h.update(text.encode())
    return h.hexdigest()


def cache_dir() -> Path:
    """``ROCM_ARRAY_CACHE_DIR``, else ``rocm_array`` under the user's cache folder."""
    env = os.environ.get("ROCM_ARRAY_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "rocm_array"


def compile_program(rtc: Rtc, source: str, filename: str, names: Sequence[str],
                    options: list[str], target: str) -> tuple[bytes, dict[str, str]]:
    """Compile ``names`` of ``source``: the code and each name's lowered name; CompileError on failure."""
    prog = rtc.create(source, filename, kernel_headers())
    try:
        for expr in names:
            rtc.add_name(prog, expr)
        if not rtc.compile(prog, options):
            raise CompileError(_describe(filename, names), target, rtc.log(prog))
        return rtc.code(prog), {expr: rtc.lowered(prog, expr) for expr in names}
    finally:
        rtc.destroy(prog)


@functools.lru_cache(maxsize=1)
def _pool() -> ThreadPoolExecutor:
    """The threads programs compile on, made at the first call that compiles several."""
    return ThreadPoolExecutor(max_workers=os.cpu_count() or 1, thread_name_prefix="rocm_array-compile")


if hasattr(os, "register_at_fork"):  # a forked child has none of the parent's threads: it makes its own
    os.register_at_fork(after_in_child=_pool.cache_clear)


def _describe(path: str, names: Sequence[str]) -> str:
    shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
    return f"{path} [{shown}]"


class Compiler:
    """Compiles kernels for one architecture with one run-time compiler, through the caches."""

    def __init__(self, rtc: Rtc, arch: str, wave_size: int, cache: Path | None = None) -> None:
        self.rtc = rtc
        self.arch = arch
        self.wave_size = wave_size
        self.cache = cache_dir() if cache is None else cache
        self._memory: dict[str, Program] = {}
        self._locks: dict[str, threading.Lock] = {}  # one per program key: different programs compile at once
        self._locks_guard = threading.Lock()
        self._version = rtc.version()

    @property
    def target(self) -> str:
        return f"{self.arch} (wave {self.wave_size}, {self.rtc.name} {self._version})"

    def options(self, extra: Sequence[str] = ()) -> list[str]:
        """Every option a compile passes: the target's, then the kernel's own."""
        return [*self.rtc.target_options(self.arch, self.wave_size), *extra]

    def key(self, path: str, names: Sequence[str], options: Sequence[str] = (), source: str | None = None) -> str:
        """The cache key of one program (see the module docstring for what it covers); ``source``:
        a generated program's text, named ``path``, instead of ``rocm_array_kernels/<path>``'s."""
        text, every = kernel_source(path) if source is None else source, self.options(options)
        includes = tuple(o for flag, o in zip(every, every[1:]) if flag == "-include")
        parts = [source_digest(text, includes), every, self.arch, self.wave_size, self.rtc.name,
                 self._version, list(names)]
        return hashlib.sha256(json.dumps(parts).encode()).hexdigest()

    def cached(self, path: str, names: Sequence[str], options: Sequence[str] = (), source: str | None = None) -> bool:
        """Whether ``compile`` would find this program in memory or on disk (and compile nothing)."""
        key = self.key(path, list(names), options, source)
        return key in self._memory or self._load(key) is not None

    def compile(self, path: str, names: Sequence[str], options: Sequence[str] = (),
                source: str | None = None) -> Program:
        """The program for ``names`` of ``rocm_array_kernels/<path>`` (or of the generated ``source``, which
        ``path`` names in logs): from memory, from disk, or compiled."""
        names = list(names)
        text = kernel_source(path) if source is None else source  # (read once: the key hashes it too)
        key = self.key(path, names, options, text)
        prog = self._memory.get(key)
        if prog is not None:
            return prog
        with self._locks_guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:  # one thread compiles a program; others wanting it then find it
            prog = self._memory.get(key) or self._load(key)
            if prog is None:
                start = time.perf_counter()
                code, lowered = compile_program(self.rtc, text, path, names, self.options(options), self.target)
                prog = Program(key, code, lowered)
                self._store(prog)
                seconds = time.perf_counter() - start
                _log.log(logging.INFO if seconds > NOTICE_SECONDS else logging.DEBUG,
                         "compiled %s for %s in %.1f s (first use; cached afterwards in %s)",
                         _describe(path, names), self.target, seconds, self.cache)
            self._memory[key] = prog
        return prog

    def compile_later(self, path: str, names: Sequence[str], options: Sequence[str] = (),
                      source: str | None = None) -> Future[Program]:
        """``compile`` on a thread: the program when it is ready."""
        return _pool().submit(self.compile, path, names, options, source)

    def compile_all(self, programs: Sequence[tuple[str, Sequence[str], Sequence[str]]]) -> list[Program]:
        """``compile`` of each (path, names, options), several at once on threads:
        a call that needs several new programs waits for the slowest, not for their sum. (NVRTC
        compiles programs side by side; hiprtc 6.4 compiles one at a time in a process, measured
        with and without Python's lock, so on AMD they take turns.)"""
        distinct = list({(path, tuple(names), tuple(options)): None for path, names, options in programs})
        if len(distinct) > 1:  # (a cached program only loads on its thread)
            list(_pool().map(lambda p: self.compile(*p), distinct))
        return [self.compile(*p) for p in programs]

    # -- on-disk entries: magic, header length, JSON header (lowered names, code hash), code --
    def _file(self, key: str) -> Path:
        return self.cache / f"{key}.bin"

    def _load(self, key: str) -> Program | None:
        try:
            data = self._file(key).read_bytes()
        except OSError:
            return None
        try:
            if not data.startswith(_MAGIC):
                return None
            at = len(_MAGIC)
            (n,) = struct.unpack_from("<Q", data, at)
            header = json.loads(data[at + 8:at + 8 + n])
            code = data[at + 8 + n:]
            if header["key"] != key or hashlib.sha256(code).hexdigest() != header["sha256"]:
                return None
            return Program(key, code, dict(header["lowered"]))
        except (ValueError, KeyError, TypeError, struct.error):
            return None  # corrupt: compiled again and overwritten

    def _store(self, prog: Program) -> None:
        header = json.dumps({"key": prog.key, "sha256": hashlib.sha256(prog.code).hexdigest(),
                             "lowered": prog.lowered}).encode()
        _write_atomically(self._file(prog.key), _MAGIC + struct.pack("<Q", len(header)) + header + prog.code)


def _write_atomically(path: Path, blob: bytes) -> None:
    """``blob`` written to ``path`` atomically (a temp file beside it, renamed)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(blob)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        pass  # a read-only or full cache folder costs a recompile later, nothing more


def python_code(source: str, filename: str) -> CodeType:
    """``compile(source, filename, "exec")`` of Python text made at run time (a lane's: ``gpu_lanes``),
    kept in the cache folder (``python/``) as marshal bytes, beside the kernels it launches: a warm
    process reads it where compiling it took about 1 ms of a first ``a + b``. Keyed by the
    interpreter's bytecode (its magic number), the file name and the text; an entry whose hash fails
    is compiled again and replaced."""
    key = hashlib.sha256(b"\0".join((importlib.util.MAGIC_NUMBER, filename.encode(), source.encode()))).hexdigest()
    path = cache_dir() / "python" / f"{key}.marshal"
    try:
        data = path.read_bytes()
        if data[:32] == hashlib.sha256(data[32:]).digest():
            return cast(CodeType, marshal.loads(data[32:]))
    except (OSError, ValueError, EOFError, TypeError):
        pass
    code = compile(source, filename, "exec")
    blob = marshal.dumps(code)
    _write_atomically(path, hashlib.sha256(blob).digest() + blob)
    return code
