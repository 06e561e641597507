"""The ``linalg`` plugin."""

from rocm_array.hookspecs import Impl, hookimpl


@hookimpl
def rocm_array_functions() -> list[Impl]:
    return []
