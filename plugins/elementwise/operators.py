"""The elementwise functions of table.py as namespace entries, and in-place operators."""

from __future__ import annotations

from rocm_array.hookspecs import Impl

from .table import UFUNCS

IMPLS: list[Impl] = [Impl(u.name, u) for u in UFUNCS]
