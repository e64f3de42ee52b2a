"""Max unpooling: `max_unpool1d/2d/3d` of `torch.nn.functional` and the MaxUnpool1d/2d/3d
layers, the partial inverse of max pooling that SegNet-style decoders use: each value goes
back to the position its max came from (max pooling's `return_indices`), zeros elsewhere.

The values are scattered into zeros, so the gradient of each value is the output's gradient
read at its position.
"""
from __future__ import annotations

import math

import numpy as np

from minigrad.creation import zeros
from minigrad.linalg_checks import torch_dtype_name

from .functional_conv import ntuple
from .module import Module


def _output_size(input, kernel, stride, padding, output_size):
    """PyTorch's default size (in - 1) * stride - 2 * padding + kernel per dim, or
    output_size (the spatial sizes, or with N and C first) checked to be within a stride."""
    nd = len(kernel)
    default = [(input.shape[input.ndim - nd + d] - 1) * stride[d] + kernel[d] - 2 * padding[d]
               for d in range(nd)]
    if output_size is None:
        return tuple(default)
    output_size = list(output_size)
    if len(output_size) == nd + 2:
        output_size = output_size[2:]
    if len(output_size) != nd:
        raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} "
                         f"elements, but it has a length of '{len(output_size)}'")
    for d in range(nd):
        low, high = default[d] - stride[d], default[d] + stride[d]
        if not low < output_size[d] < high:
            raise ValueError(f"invalid output_size \"{tuple(output_size)}\" (dim {d} must be "
                             f"between {low} and {high})")
    return tuple(int(n) for n in output_size)


def _max_unpool(input, indices, kernel_size, stride, padding, output_size, nd, op):
    kernel = ntuple(kernel_size, nd, "kernel_size", op)
    stride = kernel if stride is None else ntuple(stride, nd, "stride", op)
    padding = ntuple(padding, nd, "padding", op)
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Input to max_unpooling{nd}d should be a {nd + 1}d or {nd + 2}d "
                           f"Tensor, but got a tensor with {input.ndim} dimensions.")
    out = _output_size(input, kernel, stride, padding, output_size)
    if indices.dtype != np.int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: "
                           f"{torch_dtype_name(indices.dtype)}")
    if input.dtype.kind != "f":
        raise NotImplementedError(f"\"{op}\" not implemented for "
                                  f"'{torch_dtype_name(input.dtype)}'")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: "
                           f"{list(indices.shape)}")
    idx = indices.detach().numpy()
    bad = idx[(idx < 0) | (idx >= math.prod(out))]
    if bad.size:
        raise RuntimeError(f"Found an invalid max index: {bad.flat[0]} (output volumes are of "
                           f"size {'x'.join(map(str, out))})")
    lead = input.shape[:-nd]
    flat = zeros(lead + (math.prod(out),), dtype=input.dtype)
    span = math.prod(input.shape[-nd:])
    y = flat.scatter(-1, indices.reshape(*lead, span), input.reshape(*lead, span))
    return y.reshape(*lead, *out)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """(N, C, L_in) or (C, L_in) values and their positions (max_pool1d's indices) ->
    (..., L_out), zeros where no value lands; L_out = (L_in - 1) * stride - 2 * padding +
    kernel_size unless output_size says otherwise."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 1,
                       "max_unpool1d")


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """(N, C, H_in, W_in) or (C, H_in, W_in) values and their flat positions h * W_out + w
    (max_pool2d's indices) -> (..., H_out, W_out), zeros elsewhere."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 2,
                       "max_unpool2d")


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """(N, C, D_in, H_in, W_in) or (C, D_in, H_in, W_in) values and their flat positions
    (max_pool3d's indices) -> (..., D_out, H_out, W_out), zeros elsewhere."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 3,
                       "max_unpool3d")


class _MaxUnpoolNd(Module):
    nd = _fn = None

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        name = type(self).__name__
        self.kernel_size = ntuple(kernel_size, self.nd, "kernel_size", name)
        self.stride = ntuple(stride if stride is not None else kernel_size, self.nd, "stride",
                             name)
        self.padding = ntuple(padding, self.nd, "padding", name)

    def forward(self, input, indices, output_size=None):
        return type(self)._fn(input, indices, self.kernel_size, self.stride, self.padding,
                              output_size)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """Values (N, C, L_in) and max_pool1d's indices -> (N, C, L_out), zeros elsewhere."""
    nd, _fn = 1, max_unpool1d


class MaxUnpool2d(_MaxUnpoolNd):
    """Values (N, C, H_in, W_in) and max_pool2d's indices -> (N, C, H_out, W_out)."""
    nd, _fn = 2, max_unpool2d


class MaxUnpool3d(_MaxUnpoolNd):
    """Values (N, C, D_in, H_in, W_in) and max_pool3d's indices -> (N, C, D_out, H_out,
    W_out)."""
    nd, _fn = 3, max_unpool3d
