"""``__array_namespace_info__``: the standard's inspection API."""

from __future__ import annotations

from typing import Any

from . import devices
from .axes import MAX_DIMS
from .devices import Device
from .dtypes import ALL, CATEGORIES, DEFAULT_COMPLEX, DEFAULT_FLOAT, DEFAULT_INDEX, DEFAULT_INT, DType, bfloat16, float16

__all__ = ["Info", "__array_namespace_info__"]

# float16 and bfloat16 are extensions: the standard's dtypes() lists only its own 13.
_STANDARD = tuple(d for d in ALL if d not in (float16, bfloat16))
#: The kinds ``dtypes(kind=...)`` takes: the standard's (the other categories are the library's own).
_KINDS = tuple(k for k in CATEGORIES if k not in ("integer or boolean", "floating-point", "real-valued", "any"))


class Info:
    """The inspection namespace of ``rocm_array``."""

    __module__ = "rocm_array"

    def capabilities(self) -> dict[str, Any]:
        """What the library supports beyond the baseline: boolean indexing, data-dependent output
        shapes (``unique_*``, ``nonzero``), and the most dimensions an array may have."""
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": MAX_DIMS}

    def default_device(self) -> Device:
        """The device arrays are made on when none is named (``ROCM_ARRAY_DEVICE``, else the first
        GPU, else ``cpu``)."""
        return devices.default()

    def devices(self) -> tuple[Device, ...]:
        """Every device present: ``cpu``, then the GPUs found (``python -m rocm_array info`` says why
        one is missing)."""
        return devices.available()

    def default_dtypes(self, *, device: Device | None = None) -> dict[str, DType]:
        """The dtypes functions give when none is named, by kind; the same on every device."""
        if device is not None:
            devices.parse(device, "default_dtypes")
        return {"real floating": DEFAULT_FLOAT, "complex floating": DEFAULT_COMPLEX,
                "integral": DEFAULT_INT, "indexing": DEFAULT_INDEX}

    def dtypes(self, *, device: Device | None = None,
               kind: str | tuple[str, ...] | None = None) -> dict[str, DType]:
        """The standard's dtypes, by name, of ``kind`` (a kind ``isdtype`` takes, or a tuple of
        them; None: all); the same on every device."""
        if device is not None:
            devices.parse(device, "dtypes")
        if kind is None:
            return {d.name: d for d in _STANDARD}
        kinds = kind if isinstance(kind, tuple) else (kind,)
        for k in kinds:
            if k not in _KINDS:
                raise ValueError(f"dtypes(): unknown dtype kind {k!r}; the kinds are "
                                 f"{', '.join(map(repr, _KINDS))} (or a tuple of them)")
        return {d.name: d for d in _STANDARD if any(d in CATEGORIES[k] for k in kinds)}


def __array_namespace_info__() -> Info:
    return Info()
