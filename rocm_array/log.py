"""The ``rocm_array`` logger: what the library does that a user may want to know, such as a slow
first compile. ``ROCM_ARRAY_LOG`` sets its level (``debug``, ``info`` — the default —,
``warning``, ``error``); with no logging configured by the application, its records go to stderr
as ``rocm_array: <message>``.
"""

from __future__ import annotations

import logging
import os
import sys

__all__ = ["LOG_VAR", "logger", "configure"]

LOG_VAR = "ROCM_ARRAY_LOG"
logger = logging.getLogger("rocm_array")


def configure() -> None:
    """Set the level from ``ROCM_ARRAY_LOG``; add a stderr handler unless the application has one."""
    name = os.environ.get(LOG_VAR, "info").strip().upper()
    level = logging.getLevelName(name)
    if not isinstance(level, int):
        print(f"rocm_array: {LOG_VAR}={name.lower()!r} is not a level; expected debug, info, warning or error",
              file=sys.stderr)
        level = logging.INFO
    logger.setLevel(level)
    if not logger.handlers and not logging.getLogger().handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("rocm_array: %(message)s"))
        logger.addHandler(handler)
        logger.propagate = False


configure()
