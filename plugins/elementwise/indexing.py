"""TODO: indexing (being written)."""

from rocm_array.hookspecs import Impl

IMPLS: list[Impl] = []
