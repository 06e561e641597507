"""Sphinx configuration of the API reference: the pages in this folder, the README's sections they
include, and one page per namespace, written at build time from the assembled namespace (so a
function a plugin adds is documented without editing a page)."""

from __future__ import annotations

import os
import pathlib

os.environ.setdefault("ROCM_ARRAY_DEVICE", "cpu")  # the examples and the build need no GPU

import rocm_array  # noqa: E402
from rocm_array.namespace import TABLE  # noqa: E402

project = "rocm_array"
release = rocm_array.__version__
extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "myst_parser"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build"]
myst_heading_anchors = 3
autodoc_typehints = "description"
napoleon_numpy_docstring = True
html_theme = "alabaster"
# The README's links to its own headings resolve here through the labels of the pages that include
# those sections (environment.md, fusion.md); a dead cross-reference fails the build (-W).

HERE = pathlib.Path(__file__).parent
#: The namespace's pages: title, the functions' prefix in the table, and what it is.
PAGES = {
    "namespace": ("The xp namespace", "", "The standard's functions and rocm_array's, as ``import rocm_array as xp`` "
                  "gives them."),
    "linalg": ("xp.linalg", "linalg.", "The standard's ``linalg`` extension (cuBLAS/cuSOLVER, hipBLAS/hipSOLVER on "
               "a GPU)."),
    "fft": ("xp.fft", "fft.", "The standard's ``fft`` extension (cuFFT, hipFFT on a GPU)."),
    "nn": ("xp.nn", "nn.", "rocm_array's neural-network functions (cuDNN, MIOpen or own kernels on a GPU)."),
    "random": ("xp.random", "random.", "Counter-based random generators (Philox4x32-10): the same numbers on every "
               "device."),
}


def _api_pages() -> None:
    """api/<page>.rst for each namespace, listing every function the default assembly provides."""
    folder = HERE / "api"
    folder.mkdir(exist_ok=True)
    names = sorted(n for n in TABLE if not n.startswith("Array."))
    for page, (title, prefix, intro) in PAGES.items():
        mine = [n for n in names if (n.startswith(prefix) and n.count(".") == 1) if prefix] if prefix else \
            [n for n in names if "." not in n]
        lines = [title, "=" * len(title), "", intro, ""]
        for n in mine:
            target = f"rocm_array.{n}"
            obj = TABLE[n]
            if isinstance(obj, type) and not issubclass(obj, BaseException):
                lines += [f".. autoclass:: {target}", "   :members:", ""]
            else:
                kind = "autoexception" if isinstance(obj, type) else "autofunction"
                lines += [f".. {kind}:: {target}", ""]
        text = "\n".join(lines)
        path = folder / f"{page}.rst"
        if not path.exists() or path.read_text() != text:
            path.write_text(text)


_api_pages()
