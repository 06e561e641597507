"""The runtime protocol every GPU platform module implements."""

from __future__ import annotations

from typing import Protocol

import numpy as np


class Runtime(Protocol):
    """One GPU device of one platform (``amd`` or ``nvidia``)."""

    platform: str

    def to_host(self, x: object) -> np.ndarray:
        """A host NumPy copy of a GPU Array's elements, in its shape."""
        ...
