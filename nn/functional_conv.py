"""`conv1d`, `conv2d`, their transposes, `unfold` and `fold` of `torch.nn.functional`:
PyTorch's arguments and checks, the computation itself one node (`minigrad.ops.conv`'s
Convolution, or for a transposed convolution ConvInputGrad, the convolution's input gradient;
`minigrad.ops.unfold` for the blocks alone).

Inputs are (N, C, L) or (N, C, H, W), or the same without the batch dim (unbatched, as PyTorch
accepts); the argument parsing here (ints or tuples, "same"/"valid") is shared with pooling.
"""
from __future__ import annotations

from minigrad.errors import InvalidValueError
from minigrad.ops.conv import ConvConf, ConvInputGrad, Convolution
from minigrad.ops.unfold import Fold, Unfold
from minigrad.ops.windows import out_size


def ntuple(value, n, what, op):
    """An int, or a sequence of n ints, as a tuple of n ints (PyTorch's _pair and checks)."""
    if isinstance(value, (tuple, list)):
        if len(value) == 1 and n > 1:
            value = tuple(value) * n
        if len(value) != n:
            raise RuntimeError(f"{op}: expected {what} to be a single integer value or a list "
                               f"of {n} values to match the convolution dimensions, but got "
                               f"{what}={list(value)}")
        return tuple(int(v) for v in value)
    return (int(value),) * n


def batched(input, nd, op):
    """(input with a batch dim, whether one was added): an unbatched (C, *S) input is lifted."""
    if input.ndim == nd + 1:
        return input.unsqueeze(0), True
    if input.ndim != nd + 2:
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                           f"{op}, but got input of size: {list(input.shape)}")
    return input, False


def conv_padding(padding, kernel, dilation, stride, op):
    """PyTorch's `padding` (an int, a tuple, "valid" or "same") as a (lo, hi) pair per dim.

    "same" keeps the size: the span d*(k-1) is padded, the odd pixel on the right."""
    nd = len(kernel)
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * nd
        if padding != "same":
            raise ValueError(f"{op}: invalid padding string {padding!r}, should be one of "
                             f"{{'valid', 'same'}}")
        if any(s != 1 for s in stride):
            raise InvalidValueError(f"{op}: padding='same' is not supported for strided convolutions")
        return tuple((d * (k - 1) // 2, d * (k - 1) - d * (k - 1) // 2)
                     for k, d in zip(kernel, dilation))
    pads = ntuple(padding, nd, "padding", op)
    if any(p < 0 for p in pads):
        raise RuntimeError(f"{op}: negative padding is not supported, got padding={padding}")
    return tuple((p, p) for p in pads)


def convolution(input, weight, bias, stride, padding, dilation, groups, nd, op,
                padding_mode="zeros"):
    """The checks of F.conv1d/conv2d, then the op; `padding_mode` is a Conv module's."""
    if weight.ndim != nd + 2:
        raise RuntimeError(f"{op}: expected a {nd + 2}-dimensional weight (C_out, C_in / groups"
                           f"{', kW' if nd == 1 else ', kH, kW'}), got weight of size "
                           f"{list(weight.shape)}")
    x, lifted = batched(input, nd, op)
    stride = ntuple(stride, nd, "stride", op)
    dilation = ntuple(dilation, nd, "dilation", op)
    if any(s <= 0 for s in stride):
        raise RuntimeError(f"{op}: non-positive stride is not supported, got stride={stride}")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"{op}: dilation should be greater than zero, got {dilation}")
    kernel = tuple(weight.shape[2:])
    pads = conv_padding(padding, kernel, dilation, stride, op)
    c_out, c_in = weight.shape[:2]
    if groups <= 0:
        raise RuntimeError(f"{op}: non-positive groups is not supported, got groups={groups}")
    if c_out % groups:
        raise RuntimeError(f"{op}: given groups={groups}, expected weight to be divisible by "
                           f"{groups} at dimension 0, but got weight of size "
                           f"{list(weight.shape)} instead")
    if x.shape[1] != c_in * groups:
        raise RuntimeError(f"{op}: given groups={groups}, weight of size {list(weight.shape)}, "
                           f"expected input{list(x.shape)} to have {c_in * groups} channels, "
                           f"but got {x.shape[1]} channels instead")
    if bias is not None and tuple(bias.shape) != (c_out,):
        raise RuntimeError(f"{op}: given weight of size {list(weight.shape)}, expected bias to "
                           f"be 1-dimensional with {c_out} elements, but got bias of size "
                           f"{list(bias.shape)} instead")
    _check_dtypes(op, x, weight, bias)
    padded = tuple(n + lo + hi for n, (lo, hi) in zip(x.shape[2:], pads))
    spans = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
    if any(s > n for s, n in zip(spans, padded)):
        raise RuntimeError(f"{op}: calculated padded input size per channel: "
                           f"({' x '.join(map(str, padded))}). Kernel size: "
                           f"({' x '.join(map(str, spans))}). Kernel size can't be greater "
                           f"than actual input size")
    out = tuple(out_size(n, k, s, d, lo, hi) for n, k, s, d, (lo, hi)
                in zip(x.shape[2:], kernel, stride, dilation, pads))
    if padding_mode != "zeros":
        _check_pad_mode(x.shape, pads, padding_mode, op)
    args = (x, weight) if bias is None else (x, weight, bias)
    y = Convolution.apply(*args, conf=ConvConf(stride, pads, dilation, out, groups,
                                               padding_mode))
    return y.squeeze(0) if lifted else y


def _check_pad_mode(shape, pads, mode, op):
    for n, (lo, hi) in zip(shape[2:], pads):
        if mode == "reflect" and max(lo, hi) >= n:
            raise RuntimeError(f"{op}: padding ({lo}, {hi}) should be less than the "
                               f"corresponding input dimension {n} for padding_mode='reflect'")
        if mode == "circular" and max(lo, hi) > n:
            raise RuntimeError(f"{op}: padding ({lo}, {hi}) should be at most the "
                               f"corresponding input dimension {n} for padding_mode='circular'")


def _check_dtypes(op, x, weight, bias):
    """A floating input, and weight and bias of its dtype, as PyTorch's convolutions require."""
    for t, name in ((weight, "weight"), (bias, "bias")):
        if t is not None and t.dtype != x.dtype:
            raise RuntimeError(f"{op}: input type ({x.dtype}) and {name} type ({t.dtype}) "
                               f"should be the same")
    if x.dtype.kind != "f":
        raise RuntimeError(f"{op}: expected a floating input, got {x.dtype}")


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Cross-correlation over L: input (N, C_in, L) or (C_in, L), weight (C_out, C_in / groups,
    kW), bias (C_out,) -> (N, C_out, L_out)."""
    return convolution(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Cross-correlation over H and W: input (N, C_in, H, W) or (C_in, H, W), weight
    (C_out, C_in / groups, kH, kW), bias (C_out,) -> (N, C_out, H_out, W_out)."""
    return convolution(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Cross-correlation over D, H and W: input (N, C_in, D, H, W) or (C_in, D, H, W), weight
    (C_out, C_in / groups, kD, kH, kW), bias (C_out,) -> (N, C_out, D_out, H_out, W_out)."""
    return convolution(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def conv_transposed(input, weight, bias, stride, padding, output_padding, groups, dilation, nd,
                    op):
    """The checks of F.conv_transpose1d/2d, then the op: the adjoint of the convolution whose
    input has the transposed convolution's output size (`ConvInputGrad`), so its gradients,
    second derivatives and forward mode are the convolution's own maps."""
    if weight.ndim != nd + 2:
        raise RuntimeError(f"{op}: expected a {nd + 2}-dimensional weight (C_in, C_out / groups"
                           f"{', kW' if nd == 1 else ', kH, kW'}), got weight of size "
                           f"{list(weight.shape)}")
    if isinstance(padding, str):
        raise TypeError(f"{op}: padding must be an int or a tuple of ints, not {padding!r}")
    x, lifted = batched(input, nd, op)
    stride = ntuple(stride, nd, "stride", op)
    dilation = ntuple(dilation, nd, "dilation", op)
    pads = ntuple(padding, nd, "padding", op)
    extra = ntuple(output_padding, nd, "output_padding", op)
    if any(s <= 0 for s in stride) or any(d <= 0 for d in dilation) or groups <= 0:
        raise RuntimeError(f"{op}: stride {stride}, dilation {dilation} and groups {groups} "
                           f"must be positive")
    if any(p < 0 for p in pads + extra):
        raise RuntimeError(f"{op}: negative padding is not supported, got padding={pads} and "
                           f"output_padding={extra}")
    if any(e >= max(s, d) for e, s, d in zip(extra, stride, dilation)):
        raise RuntimeError(f"{op}: output padding must be smaller than either stride or "
                           f"dilation, but got output_padding={extra}, stride={stride} and "
                           f"dilation={dilation}")
    c_in, c_out_g = weight.shape[:2]
    kernel = tuple(weight.shape[2:])
    if x.shape[1] != c_in or c_in % groups:
        raise RuntimeError(f"{op}: given transposed=1, groups={groups}, weight of size "
                           f"{list(weight.shape)}, expected input{list(x.shape)} to have "
                           f"{c_in} channels (divisible by groups), but got {x.shape[1]} "
                           f"channels instead")
    if bias is not None and tuple(bias.shape) != (c_out_g * groups,):
        raise RuntimeError(f"{op}: given transposed=1, weight of size {list(weight.shape)}, "
                           f"expected bias to be 1-dimensional with {c_out_g * groups} "
                           f"elements, but got bias of size {list(bias.shape)} instead")
    _check_dtypes(op, x, weight, bias)
    size = tuple((n - 1) * s - 2 * p + d * (k - 1) + e + 1 for n, s, p, d, k, e
                 in zip(x.shape[2:], stride, pads, dilation, kernel, extra))
    if any(n <= 0 for n in size):
        raise RuntimeError(f"{op}: given input size {list(x.shape)}, the calculated output "
                           f"size {list(size)} is too small")
    conf = ConvConf(stride, tuple((p, p) for p in pads), dilation, tuple(x.shape[2:]), groups)
    y = ConvInputGrad.apply(x, weight, x_shape=(x.shape[0], c_out_g * groups) + size, conf=conf)
    if bias is not None:
        y = y + bias.reshape((-1,) + (1,) * nd)
    return y.squeeze(0) if lifted else y


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """The transposed convolution (the gradient of conv1d with respect to its input): input
    (N, C_in, L) or (C_in, L), weight (C_in, C_out / groups, kW), bias (C_out,) ->
    (N, C_out, (L - 1) * stride - 2 * padding + dilation * (kW - 1) + output_padding + 1)."""
    return conv_transposed(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 1, "conv_transpose1d")


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """The transposed convolution (the gradient of conv2d with respect to its input): input
    (N, C_in, H, W) or (C_in, H, W), weight (C_in, C_out / groups, kH, kW), bias (C_out,) ->
    (N, C_out, H_out, W_out), H_out = (H - 1) * stride - 2 * padding + dilation * (kH - 1)
    + output_padding + 1."""
    return conv_transposed(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 2, "conv_transpose2d")


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """The transposed convolution (the gradient of conv3d with respect to its input): input
    (N, C_in, D, H, W) or (C_in, D, H, W), weight (C_in, C_out / groups, kD, kH, kW), bias
    (C_out,) -> (N, C_out, D_out, H_out, W_out), each size as conv_transpose2d's."""
    return conv_transposed(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 3, "conv_transpose3d")


def _block_conf(kernel_size, dilation, padding, stride, spatial, op):
    """(kernel, ConvConf) of unfold/fold over `spatial` (H, W), checked as PyTorch checks."""
    kernel = ntuple(kernel_size, 2, "kernel_size", op)
    dilation, pads = ntuple(dilation, 2, "dilation", op), ntuple(padding, 2, "padding", op)
    stride = ntuple(stride, 2, "stride", op)
    if min(kernel + dilation + stride) <= 0 or min(pads) < 0:
        raise RuntimeError(f"{op}: kernel_size {kernel}, dilation {dilation} and stride "
                           f"{stride} must be positive and padding {pads} non-negative")
    out = tuple(out_size(n, k, s, d, p, p) for n, k, s, d, p
                in zip(spatial, kernel, stride, dilation, pads))
    if min(out) <= 0:
        raise RuntimeError(f"{op}: given input with spatial size {tuple(spatial)}, "
                           f"kernel_size={kernel}, dilation={dilation}, padding={pads}, "
                           f"calculated shape of the array of sliding blocks as {out}, but "
                           f"its components must be at least one")
    return kernel, ConvConf(stride, tuple((p, p) for p in pads), dilation, out)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """The sliding blocks of (N, C, H, W) (or (C, H, W)) as columns
    (N, C * kH * kW, L), L the number of block positions (im2col)."""
    if input.ndim not in (3, 4):
        raise RuntimeError(f"unfold: expected a 3-D (unbatched) or 4-D (batched) input, got "
                           f"input of size {list(input.shape)}")
    x, lifted = batched(input, 2, "unfold")
    kernel, conf = _block_conf(kernel_size, dilation, padding, stride, x.shape[2:], "unfold")
    y = Unfold.apply(x, kernel=kernel, conf=conf)
    return y.squeeze(0) if lifted else y


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """The adjoint of unfold: columns (N, C * kH * kW, L) (or without N) summed into
    (N, C, *output_size), overlapping blocks added (col2im)."""
    if input.ndim not in (2, 3):
        raise RuntimeError(f"fold: expected a 2-D (unbatched) or 3-D (batched) input, got "
                           f"input of size {list(input.shape)}")
    x, lifted = (input.unsqueeze(0), True) if input.ndim == 2 else (input, False)
    size = ntuple(output_size, 2, "output_size", "fold")
    kernel, conf = _block_conf(kernel_size, dilation, padding, stride, size, "fold")
    k = kernel[0] * kernel[1]
    if x.shape[1] % k:
        raise RuntimeError(f"fold: expected size of input's dimension 1 to be divisible by the "
                           f"product of kernel_size, but got input.size(1)={x.shape[1]} and "
                           f"kernel_size={kernel}")
    blocks = conf.out[0] * conf.out[1]
    if x.shape[2] != blocks:
        raise RuntimeError(f"fold: given output_size={size}, kernel_size={kernel}, "
                           f"dilation={conf.dilation}, padding={tuple(p for p, _ in conf.padding)}"
                           f", stride={conf.stride}, expected size of input's dimension 2 to "
                           f"match the calculated number of sliding blocks {conf.out[0]} * "
                           f"{conf.out[1]} = {blocks}, but got input.size(2)={x.shape[2]}")
    y = Fold.apply(x, x_shape=(x.shape[0], x.shape[1] // k) + size, kernel=kernel, conf=conf)
    return y.squeeze(0) if lifted else y

