"""relu, gelu, silu, sigmoid, elu, affine and powf: rows of the elementwise plugin's table.

Each is one of its activation rows (gelu's tanh form is another), reached through its ``own``:
they share its kernels, and on a GPU they defer and fuse with the elementwise functions around
them (``nn.silu(x * 2)`` is one kernel). The fronts keep nn's rules: real floating arrays only
(an integer array is a TypeError, not promoted), and real numbers for the parameters (elu's
alpha, affine's mul and add, powf's exponent), which the rows take in the dtype they compute in.
"""

from __future__ import annotations

from typing import cast

from rocm_array.array import Array
from rocm_array.hookspecs import Impl
from rocm_array_plugins.elementwise import own as elementwise

from .common import floating


def _scalar(fn: str, what: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"nn.{fn}(): {what} must be a real number, not {type(value).__name__}")
    return float(value)


def _row(fn: str, x: Array, *params: float, row: str = "") -> Array:
    """nn.``fn`` of x (a real floating array, checked as its argument) and ``params``: the
    elementwise plugin's row of that name (or ``row``)."""
    floating(fn, x=x)
    return cast("Array", elementwise(row or fn)(x, *params))


def relu(x: Array, /) -> Array:
    """max(x, 0), elementwise; NaN stays NaN.

    Parameters
    ----------
    x : Array
        A real floating array (float16, bfloat16, float32, float64).

    Returns
    -------
    Array
        Of x's shape and dtype.

    Raises
    ------
    TypeError
        An input that is not a real floating array.

    Notes
    -----
    Devices: the elementwise row ``relu``: NumPy on ``cpu`` (in float32 or float64); on a GPU
    its ``relu_op`` functor in the elementwise kernels (16-bit floats computed in float32, rounded
    once), fused with the elementwise functions around it.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.nn.relu(xp.asarray([-1.0, 0.5], device="cpu"))
    Array([0. , 0.5], dtype=float64, device=cpu)
    """
    return _row("relu", x)


def gelu(x: Array, /, *, approximate: str = "none") -> Array:
    """The Gaussian error linear unit, x * Phi(x), elementwise.

    Parameters
    ----------
    x : Array
        A real floating array (float16, bfloat16, float32, float64).
    approximate : {'none', 'tanh'}, optional
        The exact form (erf) or the tanh approximation. Default: 'none'.

    Returns
    -------
    Array
        Of x's shape and dtype.

    Raises
    ------
    TypeError
        An input that is not a real floating array.
    ValueError
        An unknown approximate.

    Notes
    -----
    Devices: the elementwise rows ``gelu`` and ``gelu_tanh``: NumPy on ``cpu`` (in float32 or
    float64); on a GPU their ``gelu_op`` and ``gelu_tanh_op`` functors in the elementwise kernels
    (16-bit floats computed in float32, rounded once), fused with the elementwise functions around
    it.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.nn.gelu(xp.asarray([-1.0, 0.0, 1.0], device="cpu"))
    Array([-0.15865525,  0.        ,  0.84134475], dtype=float64, device=cpu)
    """
    if approximate not in ("none", "tanh"):
        raise ValueError(f"nn.gelu(): approximate must be 'none' or 'tanh', got {approximate!r}")
    return _row("gelu", x, row="gelu" if approximate == "none" else "gelu_tanh")


def silu(x: Array, /) -> Array:
    """x * sigmoid(x), elementwise.

    Parameters
    ----------
    x : Array
        A real floating array (float16, bfloat16, float32, float64).

    Returns
    -------
    Array
        Of x's shape and dtype.

    Raises
    ------
    TypeError
        An input that is not a real floating array.

    Notes
    -----
    Devices: the elementwise row ``silu``: NumPy on ``cpu`` (in float32 or float64); on a GPU
    its ``silu_op`` functor in the elementwise kernels (16-bit floats computed in float32, rounded
    once), fused with the elementwise functions around it.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.nn.silu(xp.asarray([-1.0, 0.0, 1.0], device="cpu"))
    Array([-0.26894142,  0.        ,  0.73105858], dtype=float64, device=cpu)
    """
    return _row("silu", x)


def sigmoid(x: Array, /) -> Array:
    """1 / (1 + exp(-x)), elementwise.

    Parameters
    ----------
    x : Array
        A real floating array (float16, bfloat16, float32, float64).

    Returns
    -------
    Array
        Of x's shape and dtype.

    Raises
    ------
    TypeError
        An input that is not a real floating array.

    Notes
    -----
    Devices: the elementwise row ``sigmoid``: NumPy on ``cpu`` (in float32 or float64); on a GPU
    its ``sigmoid_op`` functor in the elementwise kernels (16-bit floats computed in float32, rounded
    once), fused with the elementwise functions around it.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.nn.sigmoid(xp.asarray([-1.0, 0.0, 1.0], device="cpu"))
    Array([0.26894142, 0.5       , 0.73105858], dtype=float64, device=cpu)
    """
    return _row("sigmoid", x)


def elu(x: Array, /, *, alpha: float = 1.0) -> Array:
    """x where x > 0, else alpha * (exp(x) - 1), elementwise.

    Parameters
    ----------
    x : Array
        A real floating array (float16, bfloat16, float32, float64).
    alpha : float, optional
        The scale of the negative side. Default: 1.0.

    Returns
    -------
    Array
        Of x's shape and dtype.

    Raises
    ------
    TypeError
        A non-floating x, or an alpha that is not a real number.

    Notes
    -----
    Devices: the elementwise row ``elu``: NumPy on ``cpu`` (in float32 or float64); on a GPU its
    ``elu_op`` functor in the elementwise kernels (16-bit floats computed in float32, rounded once),
    fused with the elementwise functions around it.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.nn.elu(xp.asarray([-1.0, 2.0], device="cpu"))
    Array([-0.63212056,  2.        ], dtype=float64, device=cpu)
    """
    return _row("elu", x, _scalar("elu", "alpha", alpha))


def affine(x: Array, mul: float, add: float, /) -> Array:
    """x * mul + add in one kernel.

    Parameters
    ----------
    x : Array
        A real floating array (float16, bfloat16, float32, float64).
    mul, add : float
        The scale and the shift.

    Returns
    -------
    Array
        Of x's shape and dtype (16-bit floats computed in float32, rounded once).

    Raises
    ------
    TypeError
        A non-floating x, or mul or add that is not a real number.

    Notes
    -----
    Devices: the elementwise row ``affine``: NumPy on ``cpu`` (in float32 or float64); on a GPU its
    ``affine_op`` functor in the elementwise kernels (16-bit floats computed in float32, rounded
    once), fused with the elementwise functions around it.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.nn.affine(xp.asarray([1.0, 2.0], device="cpu"), 2.0, 0.5)
    Array([2.5, 4.5], dtype=float64, device=cpu)
    """
    return _row("affine", x, _scalar("affine", "mul", mul), _scalar("affine", "add", add))


def powf(x: Array, e: float, /) -> Array:
    """x ** e for a scalar exponent, in one kernel.

    Parameters
    ----------
    x : Array
        A real floating array (float16, bfloat16, float32, float64).
    e : float
        The exponent.

    Returns
    -------
    Array
        Of x's shape and dtype.

    Raises
    ------
    TypeError
        A non-floating x, or an e that is not a real number.

    Notes
    -----
    Devices: the elementwise row ``powf``: NumPy on ``cpu`` (in float32 or float64); on a GPU its
    ``powf_op`` functor in the elementwise kernels (16-bit floats computed in float32, rounded once),
    fused with the elementwise functions around it.

    Examples
    --------
    >>> import rocm_array as xp
    >>> xp.nn.powf(xp.asarray([4.0, 9.0], device="cpu"), 0.5)
    Array([2., 3.], dtype=float64, device=cpu)
    """
    return _row("powf", x, _scalar("powf", "e", e))


IMPLS: list[Impl] = [Impl(f"nn.{f.__name__}", f) for f in (relu, gelu, silu, sigmoid, elu, affine, powf)]
