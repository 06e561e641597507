"""Every public function has its own docstring, whose examples run on ``cpu`` as written; the
files generated from the plugin tables (scripts/generate.py) are current."""

from __future__ import annotations

import doctest
import importlib.util
import inspect
import pathlib
import re

import pytest

import rocm_array as xp
from rocm_array.namespace import TABLE

SCRIPT = pathlib.Path(__file__).resolve().parents[1] / "scripts" / "generate.py"
PUBLIC = sorted(n for n in TABLE if not n.startswith("Array."))


def _doc(name: str) -> str | None:
    f = TABLE[name]
    doc = inspect.getdoc(f)
    own = doc is not None and (isinstance(f, type) or doc != inspect.getdoc(type(f)))
    return doc if own else None


@pytest.mark.parametrize("name", PUBLIC)
def test_documented(name: str) -> None:
    doc = _doc(name)
    assert doc, f"xp.{name} has no docstring of its own"
    if not isinstance(TABLE[name], type):
        for section in ("Parameters", "Returns", "Examples"):
            assert f"\n{section}\n" in doc, f"xp.{name}'s docstring has no {section} section"


@pytest.mark.parametrize("name", PUBLIC)
def test_examples_run_as_written(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = _doc(name) or ""
    test = doctest.DocTestParser().get_doctest(doc, {"xp": xp}, name, None, 0)
    if not test.examples:
        pytest.skip("no examples")
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    runner.run(test)
    assert runner.failures == 0, f"xp.{name}: {runner.failures} example(s) differ from what they print"


def test_help_shows_the_docstring() -> None:
    assert inspect.getdoc(xp.add).startswith("The sum x1 + x2")
    assert "Examples" in inspect.getdoc(xp.sum)
    assert inspect.getdoc(type(xp.add)).startswith("An elementwise function")


def test_generated_files_are_current() -> None:
    if not SCRIPT.exists():
        pytest.skip("not a checkout")
    spec = importlib.util.spec_from_file_location("generate", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main(["--check"]) == 0, "run python scripts/generate.py"


def test_every_environment_variable_is_in_the_readme() -> None:
    root = SCRIPT.parents[1]
    sources = [p for package in ("rocm_array", "rocm_array_plugins")
               for p in pathlib.Path(next(iter(importlib.util.find_spec(package).submodule_search_locations))).rglob("*.py")]
    sources += [*(root / "tests").glob("*.py"), *(root / ".ci").glob("*")]
    read = {m for p in sources if p.is_file() for m in re.findall(r"ROCM_ARRAY_[A-Z0-9_]+", p.read_text())}
    table = (root / "README.md").read_text().split("## Environment variables", 1)[1].split("\n## ", 1)[0]
    missing = sorted(v for v in read if f"| `{v}` |" not in table)
    assert not missing, f"add these to the README's environment variables: {missing}"


def test_the_readmes_examples_run_as_written() -> None:
    """The README's Python blocks, in order in one fresh process on ``cpu``, as a reader pastes them
    (a GPU-only device or a name defined nowhere fails here, as the fusion example's ``w`` once did).
    A block that says it needs a GPU runs only where one is present."""
    import os
    import subprocess
    import sys

    readme = SCRIPT.parents[1] / "README.md"
    blocks = re.findall(r"```python\n(.*?)```", readme.read_text(encoding="utf-8"), re.S)
    assert len(blocks) >= 5
    if not any(str(d).startswith("gpu") for d in xp.__array_namespace_info__().devices()):
        blocks = [b for b in blocks if "(needs a GPU)" not in b]
    out = subprocess.run([sys.executable, "-c", "\n".join(blocks)], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "ROCM_ARRAY_DEVICE": "cpu"})
    assert out.returncode == 0, out.stderr


def test_help_shows_every_function_as_a_function() -> None:
    """``help(xp.sum)`` gives the signature and the text, never the row's repr as a header
    (``sum = Reduction(name='sum', …``), for the table rows as for plain functions."""
    import pydoc

    for name in PUBLIC:
        f = TABLE[name]
        if not callable(f) or isinstance(f, type):
            continue
        page = pydoc.render_doc(f, renderer=pydoc.plaintext).splitlines()
        assert page[2].startswith(f"{name.rpartition('.')[2]}("), (name, page[2][:120])
        assert not any(f" = {type(f).__name__}(" in line for line in page[:3]), name


def test_shared_parameter_paragraphs_are_written_once() -> None:
    """The dtype and device paragraphs live in ``docstrings.PARAMETERS`` only; functions render them
    with their own defaults (``docstrings.parameters``)."""
    from rocm_array import docstrings

    root = pathlib.Path(docstrings.__file__).resolve().parents[1]
    texts = [text for _, text in docstrings.PARAMETERS.values()]
    for package in ("rocm_array", "rocm_array_plugins"):
        for path in (root / package).rglob("*.py"):
            if path.name != "docstrings.py":
                source = path.read_text(encoding="utf-8")
                assert not [t for t in texts if t in source], path
    words = lambda f: " ".join((inspect.getdoc(f) or "").split())  # noqa: E731
    assert "object. Default: x's device." in words(xp.astype) and "ours). Default: float64." in words(xp.zeros)


def test_a_parameter_slot_needs_its_default_and_a_default_its_slot() -> None:
    from rocm_array.docstrings import parameters

    def f() -> None:
        """Summary.

        Parameters
        ----------
        {dtype}
        """

    with pytest.raises(KeyError):
        parameters()(f)
    with pytest.raises(ValueError, match="device"):
        parameters(dtype="float64", device="cpu")(f)
