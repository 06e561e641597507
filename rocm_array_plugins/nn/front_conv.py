"""conv1d, conv2d, conv_transpose1d, conv_transpose2d (NCL / NCHW, torch's weight layouts).

The front checks shapes and parameters, promotes the dtypes (real floating), and
describes the work as one ``ConvSpec`` in 2-D form (a 1-D convolution is a 2-D one
of height 1). The device's back computes it; the bias is added after, by the
namespace's ``add``. Weights: ``(out_channels, in_channels / groups, kH, kW)``;
transposed: ``(in_channels, out_channels / groups, kH, kW)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence, cast

from rocm_array import memory
from rocm_array.array import Array
from rocm_array.hookspecs import Impl
from rocm_array_plugins.elementwise import own as elementwise

from .backs import CONV
from rocm_array.views import flat_view

from .common import floating, ints

IntOrSeq = int | Sequence[int]


@dataclass(frozen=True)
class ConvSpec:
    """One convolution in 2-D form. For a transposed one, (ih, iw) is its input's size and
    (oh, ow) its output's; the "grid" of im2col is then the input and the "image" the output."""

    n: int
    c: int  # input channels
    k: int  # output channels
    groups: int
    ih: int
    iw: int
    oh: int
    ow: int
    kh: int
    kw: int
    sh: int
    sw: int
    ph: int
    pw: int
    dh: int
    dw: int
    transposed: bool

    @property
    def image_grid(self) -> tuple[int, int, int, int, int]:
        """(channels, image h, image w, grid h, grid w) in im2col's terms."""
        if self.transposed:
            return self.k, self.oh, self.ow, self.ih, self.iw
        return self.c, self.ih, self.iw, self.oh, self.ow


def _convolution(name: str, spatial: int, x: Array, weight: Array, bias: Array | None, stride: IntOrSeq,
                 padding: IntOrSeq, dilation: IntOrSeq, groups: int, output_padding: IntOrSeq | None) -> Array:
    dt = floating(name, ("bias",), x=x, weight=weight, bias=bias)
    transposed = output_padding is not None
    if x.ndim != spatial + 2 or weight.ndim != spatial + 2:
        raise ValueError(f"nn.{name}(): needs a {spatial + 2}-D input and weight, got shapes {x.shape} "
                         f"and {weight.shape}")
    s = ints(stride, spatial, name, "stride", 1)
    p = ints(padding, spatial, name, "padding", 0)
    d = ints(dilation, spatial, name, "dilation", 1)
    (g,) = ints(groups, 1, name, "groups", 1)
    n, c = x.shape[:2]
    taps = weight.shape[2:]
    if transposed:
        op = ints(output_padding, spatial, name, "output_padding", 0)  # type: ignore[arg-type]
        if any(o >= max(si, di) for o, si, di in zip(op, s, d)):
            raise ValueError(f"nn.{name}(): output_padding {op} must be smaller than stride or dilation")
        if weight.shape[0] != c or c % g:
            raise ValueError(f"nn.{name}(): weight {weight.shape} does not fit an input of {c} channels "
                             f"in {g} group(s)")
        k = weight.shape[1] * g
        out = [(i - 1) * si - 2 * pi + di * (t - 1) + o + 1
               for i, si, pi, di, t, o in zip(x.shape[2:], s, p, d, taps, op)]
    else:
        k = weight.shape[0]
        if c % g or k % g or weight.shape[1] * g != c:
            raise ValueError(f"nn.{name}(): weight {weight.shape} does not fit an input of {c} channels "
                             f"in {g} group(s)")
        out = [(i + 2 * pi - di * (t - 1) - 1) // si + 1
               for i, si, pi, di, t in zip(x.shape[2:], s, p, d, taps)]
    if any(t < 1 for t in taps) or any(o < 1 for o in out):
        raise ValueError(f"nn.{name}(): the output would be empty (input {x.shape}, weight {weight.shape})")
    if bias is not None and bias.shape != (k,):
        raise ValueError(f"nn.{name}(): bias has shape {bias.shape}, expected ({k},)")
    one = (1,) * (2 - spatial)  # 1-D: height 1
    fields: list[Any] = [n, c, k, g, *(one + x.shape[2:]), *(one + tuple(out)), *(one + taps),
                         *(one + s), *((0,) * (2 - spatial) + p), *(one + d), transposed]
    spec = ConvSpec(*fields)
    x4 = flat_view(memory.contiguous(x, dt), (n, c, spec.ih, spec.iw))
    w4 = flat_view(memory.contiguous(weight, dt), weight.shape[:2] + (spec.kh, spec.kw))
    y = flat_view(CONV[x.device.kind](spec, x4, w4), (n, k, *out))
    if bias is None:
        return y
    b = memory.contiguous(bias, dt)
    return cast("Array", elementwise("add")(y, b._view((k,) + (1,) * spatial, (1,) + (0,) * spatial, b.offset)))


def conv1d(x: Array, weight: Array, bias: Array | None = None, /, *, stride: IntOrSeq = 1,
           padding: IntOrSeq = 0, dilation: IntOrSeq = 1, groups: int = 1) -> Array:
    """The 1-D convolution (cross-correlation, as in PyTorch) of a batch with filters.

    Parameters
    ----------
    x : Array
        The input batch, (N, C, L), real floating.
    weight : Array
        The filters, (K, C / groups, kL).
    bias : Array, optional
        (K,), added to each output channel. Default: None.
    stride, padding, dilation : int or tuple of ints, optional
        Per spatial axis (one int for all). Defaults: 1, 0, 1.
    groups : int, optional
        Channel groups; C and K divisible by it. Default: 1.

    Returns
    -------
    Array
        (N, K, ...) with the spatial sizes the arguments give, of the promoted dtype of x, weight
        and bias, on x's device.

    Raises
    ------
    TypeError
        An input that is not a real floating array (mixed floating dtypes promote).
    ValueError
        Shapes that do not fit (channels, groups, kernel larger than the padded input), non-positive
        stride or dilation, negative padding, or arrays on several devices.

    Notes
    -----
    Devices: NumPy on ``cpu``; on a GPU cuDNN (NVIDIA) or MIOpen (AMD) where installed and the
    library takes the problem, else the project's own im2col (or col2im) kernels with the GEMM of
    ``matmul``: said once by a VendorFallbackWarning with the reason, never silently.
    ``ROCM_ARRAY_NN_VENDOR=0`` chooses the own kernels.

    Examples
    --------
    >>> import rocm_array as xp
    >>> x = xp.ones((1, 1, 4), device="cpu")
    >>> xp.nn.conv1d(x, xp.ones((1, 1, 2), device="cpu"))
    Array([[[2., 2., 2.]]], dtype=float64, device=cpu)
    """
    return _convolution("conv1d", 1, x, weight, bias, stride, padding, dilation, groups, None)


def conv2d(x: Array, weight: Array, bias: Array | None = None, /, *, stride: IntOrSeq = 1,
           padding: IntOrSeq = 0, dilation: IntOrSeq = 1, groups: int = 1) -> Array:
    """The 2-D convolution (cross-correlation, as in PyTorch) of a batch with filters.

    Parameters
    ----------
    x : Array
        The input batch, (N, C, H, W), real floating.
    weight : Array
        The filters, (K, C / groups, kH, kW).
    bias : Array, optional
        (K,), added to each output channel. Default: None.
    stride, padding, dilation : int or tuple of ints, optional
        Per spatial axis (one int for all). Defaults: 1, 0, 1.
    groups : int, optional
        Channel groups; C and K divisible by it. Default: 1.

    Returns
    -------
    Array
        (N, K, ...) with the spatial sizes the arguments give, of the promoted dtype of x, weight
        and bias, on x's device.

    Raises
    ------
    TypeError
        An input that is not a real floating array (mixed floating dtypes promote).
    ValueError
        Shapes that do not fit (channels, groups, kernel larger than the padded input), non-positive
        stride or dilation, negative padding, or arrays on several devices.

    Notes
    -----
    Devices: NumPy on ``cpu``; on a GPU cuDNN (NVIDIA) or MIOpen (AMD) where installed and the
    library takes the problem, else the project's own im2col (or col2im) kernels with the GEMM of
    ``matmul``: said once by a VendorFallbackWarning with the reason, never silently.
    ``ROCM_ARRAY_NN_VENDOR=0`` chooses the own kernels.

    Examples
    --------
    >>> import rocm_array as xp
    >>> x = xp.asarray([[[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]]], device="cpu")
    >>> xp.nn.conv2d(x, xp.ones((1, 1, 2, 2), device="cpu"))
    Array([[[[14., 18., 22.]]]], dtype=float64, device=cpu)
    """
    return _convolution("conv2d", 2, x, weight, bias, stride, padding, dilation, groups, None)


def conv_transpose1d(x: Array, weight: Array, bias: Array | None = None, /, *, stride: IntOrSeq = 1,
                     padding: IntOrSeq = 0, output_padding: IntOrSeq = 0, groups: int = 1,
                     dilation: IntOrSeq = 1) -> Array:
    """The transposed (fractionally strided) 1-D convolution (cross-correlation, as in PyTorch) of a batch with filters: the adjoint of conv1d.

    Parameters
    ----------
    x : Array
        The input batch, (N, C, L), real floating.
    weight : Array
        The filters, (C, K / groups, kL).
    bias : Array, optional
        (K,), added to each output channel. Default: None.
    stride, padding, dilation : int or tuple of ints, optional
        Per spatial axis (one int for all). Defaults: 1, 0, 1.
    output_padding : int or tuple of ints, optional
        Extra size on one side of each spatial axis, below the stride. Default: 0.
    groups : int, optional
        Channel groups; C and K divisible by it. Default: 1.

    Returns
    -------
    Array
        (N, K, ...) with the spatial sizes the arguments give, of the promoted dtype of x, weight
        and bias, on x's device.

    Raises
    ------
    TypeError
        An input that is not a real floating array (mixed floating dtypes promote).
    ValueError
        Shapes that do not fit (channels, groups, kernel larger than the padded input), non-positive
        stride or dilation, negative padding, or arrays on several devices.

    Notes
    -----
    Devices: NumPy on ``cpu``; on a GPU cuDNN (NVIDIA) or MIOpen (AMD) where installed and the
    library takes the problem, else the project's own im2col (or col2im) kernels with the GEMM of
    ``matmul``: said once by a VendorFallbackWarning with the reason, never silently.
    ``ROCM_ARRAY_NN_VENDOR=0`` chooses the own kernels.

    Examples
    --------
    >>> import rocm_array as xp
    >>> x = xp.ones((1, 1, 4), device="cpu")
    >>> xp.nn.conv_transpose1d(x, xp.ones((1, 1, 2), device="cpu"))
    Array([[[1., 2., 2., 2., 1.]]], dtype=float64, device=cpu)
    """
    return _convolution("conv_transpose1d", 1, x, weight, bias, stride, padding, dilation, groups, output_padding)


def conv_transpose2d(x: Array, weight: Array, bias: Array | None = None, /, *, stride: IntOrSeq = 1,
                     padding: IntOrSeq = 0, output_padding: IntOrSeq = 0, groups: int = 1,
                     dilation: IntOrSeq = 1) -> Array:
    """The transposed (fractionally strided) 2-D convolution (cross-correlation, as in PyTorch) of a batch with filters: the adjoint of conv2d.

    Parameters
    ----------
    x : Array
        The input batch, (N, C, H, W), real floating.
    weight : Array
        The filters, (C, K / groups, kH, kW).
    bias : Array, optional
        (K,), added to each output channel. Default: None.
    stride, padding, dilation : int or tuple of ints, optional
        Per spatial axis (one int for all). Defaults: 1, 0, 1.
    output_padding : int or tuple of ints, optional
        Extra size on one side of each spatial axis, below the stride. Default: 0.
    groups : int, optional
        Channel groups; C and K divisible by it. Default: 1.

    Returns
    -------
    Array
        (N, K, ...) with the spatial sizes the arguments give, of the promoted dtype of x, weight
        and bias, on x's device.

    Raises
    ------
    TypeError
        An input that is not a real floating array (mixed floating dtypes promote).
    ValueError
        Shapes that do not fit (channels, groups, kernel larger than the padded input), non-positive
        stride or dilation, negative padding, or arrays on several devices.

    Notes
    -----
    Devices: NumPy on ``cpu``; on a GPU cuDNN (NVIDIA) or MIOpen (AMD) where installed and the
    library takes the problem, else the project's own im2col (or col2im) kernels with the GEMM of
    ``matmul``: said once by a VendorFallbackWarning with the reason, never silently.
    ``ROCM_ARRAY_NN_VENDOR=0`` chooses the own kernels.

    Examples
    --------
    >>> import rocm_array as xp
    >>> x = xp.asarray([[[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]]], device="cpu")
    >>> xp.nn.conv_transpose2d(x, xp.ones((1, 1, 2, 2), device="cpu"))
    Array([[[[ 1.,  3.,  5.,  7.,  4.],
             [ 6., 14., 18., 22., 12.],
             [ 5., 11., 13., 15.,  8.]]]], dtype=float64, device=cpu)
    """
    return _convolution("conv_transpose2d", 2, x, weight, bias, stride, padding, dilation, groups, output_padding)


IMPLS: list[Impl] = [Impl(f"nn.{f.__name__}", f) for f in (conv1d, conv2d, conv_transpose1d, conv_transpose2d)]
