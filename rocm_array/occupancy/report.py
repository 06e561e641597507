"""The resource report: each compiled kernel's registers, LDS, scratch and spills on one target, the
block it is launched with, and the waves a SIMD holds of it (``limits.occupancy``).

The compile check makes it from the code it compiled (``rows``), writes it as JSON
(``--resources FILE``) and checks the budget against it (``budget.py``); the docs page is made
from the reports of every target (``page.py``).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from ..hookspecs import KernelSource
from .codeobject import KernelUse, amd_kernels, nvidia_kernels
from .limits import LIMITS, occupancy

__all__ = ["Row", "rows", "family", "write", "read"]


@dataclass(frozen=True)
class Row:
    """One kernel on one target. ``path``: its source (generated programs are marked ``generated``);
    ``threads`` and ``shared``: the most threads and dynamic shared memory a block of it is launched
    with (declared by its family; without a declaration, the largest block its code allows);
    ``waves``: the waves a SIMD holds, and ``limiter`` what bounds them."""

    target: str
    path: str
    name: str
    threads: int
    shared: int
    use: KernelUse
    waves: float
    limiter: str
    generated: bool = False


def family(row: Row) -> str:
    """The family a row is reported under: its source, and whether generated (fused) programs."""
    return row.path + (" (generated)" if row.generated else "")


def rows(target: str, ks: KernelSource, code: bytes, lowered: Mapping[str, str]) -> list[Row]:
    """The report's rows of one program compiled for ``target`` (``lowered``: each name's symbol)."""
    limits = LIMITS[target]
    found = (nvidia_kernels if target.startswith("sm_") else amd_kernels)(code)
    out = []
    for i, name in enumerate(ks.names):
        use = found[lowered[name]]
        threads = ks.threads[i] if ks.threads else use.max_threads or 1024
        shared = ks.shared[i] if ks.shared else 0
        occ = occupancy(use, threads, shared, limits)
        out.append(Row(target, ks.path, name, threads, shared, use, occ.waves, occ.limiter, ks.source is not None))
    return out


def write(path: Path, found: Iterable[Row]) -> None:
    """The report as JSON: a list of rows, each a flat object."""
    items = [{**{k: v for k, v in dataclasses.asdict(r).items() if k != "use"}, **dataclasses.asdict(r.use)}
             for r in found]
    path.write_text(json.dumps(items, indent=0) + "\n", encoding="utf-8")


def read(paths: Sequence[Path]) -> list[Row]:
    """The rows of the reports ``paths`` (``write``'s JSON)."""
    use_fields = {f.name for f in dataclasses.fields(KernelUse)}
    out = []
    for path in paths:
        for item in json.loads(Path(path).read_text(encoding="utf-8")):
            use = KernelUse(**{k: v for k, v in item.items() if k in use_fields})
            rest: dict[str, Any] = {k: v for k, v in item.items() if k not in use_fields}
            out.append(Row(use=use, **rest))
    return out
