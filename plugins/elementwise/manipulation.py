"""TODO: manipulation (being written)."""

from rocm_array.hookspecs import Impl

IMPLS: list[Impl] = []
