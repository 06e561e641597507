"""The launch kit: the constants Python and a kernel share are defined once, in Python.

Each ``Family`` passes its constants as ``-D`` options. The kernel source (or a header it
includes) must use every one, and none may define it again: a second definition would be a
second place to change, and a compile error or silent disagreement when they differ.
"""

from __future__ import annotations

import re

import pytest

from rocm_array.compile_check import kernel_sources
from rocm_array.launch import Family
from rocm_array.runtime.compiler import included_headers, kernel_source

_DEFINE = re.compile(r"^\s*#\s*define\s+(\w+)", re.M)


def _text_with_headers(path: str) -> str:
    """The source of ``rocm_array_kernels/<path>`` and every project header it includes, transitively."""
    source = kernel_source(path)
    return "\n".join([source, *(text for _, text in included_headers(source))])


def _constants() -> list[tuple[str, str, str]]:
    """(source, name, value) of every -D a family passes."""
    found = set()
    for ks in kernel_sources():
        for option in ks.options:
            name, _, value = option[2:].partition("=")
            if option.startswith("-D"):
                found.add((ks.path, name, value))
    return sorted(found)


def test_families_pass_constants() -> None:
    assert len(_constants()) >= 20  # copies, indexing, reductions, sort, linalg, nn rows


@pytest.mark.parametrize("path, name, value", _constants())
def test_a_constant_is_used_and_defined_only_in_python(path: str, name: str, value: str) -> None:
    text = _text_with_headers(path)
    assert re.search(rf"\b{name}\b", text), f"{path} never uses {name}"
    assert name not in _DEFINE.findall(text), f"{path} (or a header) defines {name} again"
    assert value.lstrip("-").isdigit()


def test_options_are_stable_and_sorted() -> None:
    f = Family("copy/copy.hip", {"B": 2, "A": 1})
    assert f.options("cdna") == ("-DA=1", "-DB=2")  # the cache key does not depend on dict order
    assert f.sources([("fill<float>",)])[0].options == f.options("cdna")


# A kernel's head: `template <...>` (possibly over lines) just before `__global__`, or not.
_KERNEL = re.compile(r"(template\s*<[^;{]*>\s*)?__global__\b")


@pytest.mark.parametrize("path", sorted({ks.path for ks in kernel_sources()}))
def test_every_kernel_is_a_template(path: str) -> None:
    """A plain ``__global__`` function is compiled into every program of its file, so a first call
    that needs one instantiation pays for it too (NVRTC: 150 to 180 ms of every sort.hip program
    for the non-template segment_keys); every kernel is a template, named by its instantiation."""
    code = re.sub(r"//[^\n]*", "", kernel_source(path))  # (comments may name __global__)
    plain = [m.start() for m in _KERNEL.finditer(code) if m.group(1) is None]
    assert not plain, f"{path} has a __global__ function that is not a template"
