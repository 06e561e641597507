"""The typed namespace: mypy --strict on user code sees every xp.* through the generated stub."""

from __future__ import annotations

import pathlib
import textwrap

import pytest

api = pytest.importorskip("mypy.api")

USER_CODE = textwrap.dedent("""
    import rocm_array as xp

    x: xp.Array = xp.asarray([1.0, 2.0], dtype=xp.float32)
    y: xp.Array = xp.add(x, 1.0) * 2
    z: xp.Array = xp.linalg.solve(xp.eye(2), x)
    w: xp.Array = xp.fft.fft(x)
    d: xp.dtypes.DType = xp.float64
    s: xp.Array = xp.sum(x, axis=0, keepdims=True)
""")


def _mypy(code: str, tmp_path: pathlib.Path) -> tuple[str, int]:
    path = tmp_path / "user.py"
    path.write_text(code)
    out, err, status = api.run(["--strict", "--no-incremental", "--follow-imports=silent",
                                "--cache-dir", str(tmp_path / "cache"), str(path)])
    return out + err, status


def test_user_code_type_checks(tmp_path: pathlib.Path) -> None:
    out, status = _mypy(USER_CODE, tmp_path)
    assert status == 0, out


def test_a_typo_is_a_type_error(tmp_path: pathlib.Path) -> None:
    out, status = _mypy(USER_CODE + "xp.ad(x, x)\n", tmp_path)
    assert status == 1 and 'has no attribute "ad"' in out, out
