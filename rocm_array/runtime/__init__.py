"""GPU runtimes: one module per platform behind one protocol (``protocol.Runtime``).

Only the platform modules import hip-python or cuda-bindings.
"""

from __future__ import annotations

from .protocol import Runtime


def discover() -> tuple[list[Runtime], list[str]]:
    """The GPUs present, one Runtime each, and the reasons any platform is missing."""
    return [], ["no GPU runtime is implemented yet"]
