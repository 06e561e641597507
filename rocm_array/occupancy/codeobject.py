"""What each kernel of a compiled program holds, read from the code object itself (pure Python).

hiprtc returns an AMDGPU code object: an ELF whose note of type NT_AMDGPU_METADATA (32, owner
"AMDGPU") is a MessagePack map. Its ``amdhsa.kernels`` list gives per kernel the registers, the
LDS, the scratch and the spills the compiler settled on (LLVM's AMDGPUUsage, "Code Object V3 and
Above Metadata"). NVRTC returns a cubin: an ELF whose ``.nv.info`` section holds attributes per
kernel symbol (EIATTR_REGCOUNT, EIATTR_FRAME_SIZE), whose ``.nv.info.<kernel>`` section holds the
kernel's own (EIATTR_MAX_THREADS, from ``__launch_bounds__``), and whose ``.nv.shared.<kernel>``
section is its static shared memory. (The attribute numbers are those ``cuobjdump -elf`` names;
the registers read here equal ``-Xptxas=-v``'s "Used N registers" for every kernel of the
portability check.) Neither reading needs a GPU, a driver or any package.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any, NamedTuple

__all__ = ["KernelUse", "CodeObjectError", "amd_kernels", "nvidia_kernels"]


class CodeObjectError(ValueError):
    """A code object this module cannot read (not an ELF64, or no metadata where it must be)."""


@dataclass(frozen=True)
class KernelUse:
    """What one compiled kernel holds, as its code object says.

    ``vgprs``: vector registers a lane (NVIDIA: registers a thread); on gfx90a and gfx942 the
    count of the unified file, AGPRs included (``.vgpr_count``, which is what occupancy is
    computed from there); ``agprs``: of those, the accumulation registers (CDNA); ``sgprs``:
    scalar registers of the wave (AMD). ``lds``: static LDS / shared memory bytes of a block;
    ``scratch``: private (AMD) or local stack frame (NVIDIA) bytes a lane; the spill counts are
    AMD's (NVIDIA's cubin keeps only the frame). ``max_threads``: the largest block the code
    allows (AMD: the flat work-group size it was compiled for, 1024 without launch bounds;
    NVIDIA: the launch bounds, 0 without)."""

    symbol: str
    vgprs: int
    agprs: int = 0
    sgprs: int = 0
    lds: int = 0
    scratch: int = 0
    vgpr_spills: int = 0
    sgpr_spills: int = 0
    wave_size: int = 32
    max_threads: int = 0
    dynamic_stack: bool = False


# -- ELF64 ------------------------------------------------------------------------------------------
class _Section(NamedTuple):
    kind: int  # sh_type: 2 SYMTAB, 7 NOTE, 8 NOBITS (no contents in the file)
    data: bytes
    size: int
    link: int


def _sections(elf: bytes) -> list[tuple[str, _Section]]:
    """Each section, with its name, in the file's order."""
    if elf[:4] != b"\x7fELF" or elf[4] != 2:
        raise CodeObjectError("not an ELF64 code object")
    (shoff,) = struct.unpack_from("<Q", elf, 0x28)
    entsize, count, names_at = struct.unpack_from("<HHH", elf, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * entsize) for i in range(count)]
    names = headers[names_at]
    strtab = elf[names[4]:names[4] + names[5]]
    return [(strtab[name:strtab.index(b"\0", name)].decode(),
             _Section(kind, elf[offset:offset + size] if kind != 8 else b"", size, link))
            for name, kind, _flags, _addr, offset, size, link, _info, _align, _ent in headers]


def _notes(section: bytes) -> list[tuple[str, int, bytes]]:
    """The (owner, type, description) of each note of a SHT_NOTE section (4-byte aligned fields)."""
    out, at = [], 0
    while at + 12 <= len(section):
        namesz, descsz, kind = struct.unpack_from("<III", section, at)
        at += 12
        owner = section[at:at + namesz].rstrip(b"\0").decode()
        at += -(-namesz // 4) * 4
        out.append((owner, kind, section[at:at + descsz]))
        at += -(-descsz // 4) * 4
    return out


# -- MessagePack (the subset LLVM writes: maps, arrays, strings, integers, bools, floats, nil) -----
def _unpack(data: bytes, at: int) -> tuple[Any, int]:
    b = data[at]
    at += 1
    if b <= 0x7F:
        return b, at
    if b >= 0xE0:
        return b - 0x100, at
    if 0x80 <= b <= 0x8F:
        return _map(data, at, b & 0x0F)
    if 0x90 <= b <= 0x9F:
        return _array(data, at, b & 0x0F)
    if 0xA0 <= b <= 0xBF:
        n = b & 0x1F
        return data[at:at + n].decode(), at + n
    fixed = {0xC0: None, 0xC2: False, 0xC3: True}
    if b in fixed:
        return fixed[b], at
    sized = {0xCA: ">f", 0xCB: ">d", 0xCC: ">B", 0xCD: ">H", 0xCE: ">I", 0xCF: ">Q",
             0xD0: ">b", 0xD1: ">h", 0xD2: ">i", 0xD3: ">q"}
    if b in sized:
        (value,) = struct.unpack_from(sized[b], data, at)
        return value, at + struct.calcsize(sized[b])
    lengths = {0xD9: ">B", 0xDA: ">H", 0xDB: ">I", 0xC4: ">B", 0xC5: ">H", 0xC6: ">I",
               0xDC: ">H", 0xDD: ">I", 0xDE: ">H", 0xDF: ">I"}
    if b not in lengths:
        raise CodeObjectError(f"MessagePack type 0x{b:02x} in the AMDGPU metadata is not one LLVM writes")
    (n,) = struct.unpack_from(lengths[b], data, at)
    at += struct.calcsize(lengths[b])
    if b in (0xDC, 0xDD):
        return _array(data, at, n)
    if b in (0xDE, 0xDF):
        return _map(data, at, n)
    raw = data[at:at + n]
    return (raw.decode() if b >= 0xD9 else raw), at + n


def _array(data: bytes, at: int, n: int) -> tuple[list[Any], int]:
    out = []
    for _ in range(n):
        value, at = _unpack(data, at)
        out.append(value)
    return out, at


def _map(data: bytes, at: int, n: int) -> tuple[dict[Any, Any], int]:
    out = {}
    for _ in range(n):
        key, at = _unpack(data, at)
        out[key], at = _unpack(data, at)
    return out, at


# -- the two platforms' code ------------------------------------------------------------------------
_NT_AMDGPU_METADATA = 32


def amd_metadata(code: bytes) -> dict[str, Any]:
    """The AMDGPU metadata map of an AMD code object (NT_AMDGPU_METADATA)."""
    for _, section in _sections(code):
        if section.kind != 7:
            continue
        for owner, note, desc in _notes(section.data):
            if owner == "AMDGPU" and note == _NT_AMDGPU_METADATA:
                meta, _ = _unpack(desc, 0)
                return dict(meta)
    raise CodeObjectError("no NT_AMDGPU_METADATA note: not a code object of hiprtc (code object v3 or later)")


def amd_kernels(code: bytes) -> dict[str, KernelUse]:
    """Each kernel of an AMD code object, by symbol (its lowered name)."""
    out = {}
    for k in amd_metadata(code).get("amdhsa.kernels", []):
        out[k[".name"]] = KernelUse(
            symbol=k[".name"], vgprs=k[".vgpr_count"], agprs=k.get(".agpr_count", 0), sgprs=k[".sgpr_count"],
            lds=k[".group_segment_fixed_size"], scratch=k[".private_segment_fixed_size"],
            vgpr_spills=k.get(".vgpr_spill_count", 0), sgpr_spills=k.get(".sgpr_spill_count", 0),
            wave_size=k[".wavefront_size"], max_threads=k[".max_flat_workgroup_size"],
            dynamic_stack=bool(k.get(".uses_dynamic_stack", False)))
    return out


# .nv.info attributes (format byte, attribute byte, then by format: 0x01 none, 0x02 a byte,
# 0x03 a 16-bit value, 0x04 a 16-bit size and that many bytes).
_EIATTR_FRAME_SIZE, _EIATTR_REGCOUNT, _EIATTR_MAX_THREADS = 0x11, 0x2F, 0x05
#: The shared memory the system reserves a block from sm_80 (CUDA C++ Programming Guide, "Shared
#: Memory", compute capability 8.x and 9.0); ptxas -v's "bytes smem" leaves it out, as this does.
_RESERVED_SHARED = 1024


def _attributes(info: bytes) -> list[tuple[int, bytes]]:
    out, at = [], 0
    while at + 2 <= len(info):
        fmt, attr = info[at], info[at + 1]
        at += 2
        if fmt == 0x04:
            (n,) = struct.unpack_from("<H", info, at)
            out.append((attr, info[at + 2:at + 2 + n]))
            at += 2 + n
        else:
            out.append((attr, info[at:at + 2]))
            at += 2
    return out


def nvidia_kernels(cubin: bytes) -> dict[str, KernelUse]:
    """Each kernel of a cubin, by symbol."""
    listed = _sections(cubin)
    sections = dict(listed)
    if ".symtab" not in sections:
        raise CodeObjectError("a cubin without a symbol table")
    symtab = sections[".symtab"].data
    strtab = listed[sections[".symtab"].link][1].data
    names = []
    for at in range(0, len(symtab), 24):
        (name,) = struct.unpack_from("<I", symtab, at)
        names.append(strtab[name:strtab.index(b"\0", name)].decode())
    # From sm_80 each block's shared memory section includes what the system reserves a block
    # (1 KiB; its symbol is .nv.reservedSmem.*): the kernel's own is the rest.
    reserved = _RESERVED_SHARED if any(n.startswith(".nv.reservedSmem") for n in names) else 0
    regs: dict[str, int] = {}
    frame: dict[str, int] = {}
    none = _Section(0, b"", 0, 0)
    for attr, value in _attributes(sections.get(".nv.info", none).data):
        if attr in (_EIATTR_REGCOUNT, _EIATTR_FRAME_SIZE):
            symbol, amount = struct.unpack_from("<II", value)
            (regs if attr == _EIATTR_REGCOUNT else frame)[names[symbol]] = amount
    out = {}
    for symbol, count in regs.items():
        bound = 0
        for attr, value in _attributes(sections.get(f".nv.info.{symbol}", none).data):
            if attr == _EIATTR_MAX_THREADS:
                x, y, z = struct.unpack_from("<III", value)
                bound = x * y * z
        shared = sections.get(f".nv.shared.{symbol}", none).size
        out[symbol] = KernelUse(symbol=symbol, vgprs=count, lds=max(shared - reserved, 0),
                                scratch=frame.get(symbol, 0), wave_size=32, max_threads=bound)
    return out
