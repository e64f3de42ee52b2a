"""The bilinear layer: `bilinear` of `torch.nn.functional` and nn.Bilinear,
y_o = x1^T A_o x2 + b_o, one matrix A_o (in1, in2) per output feature.

Computed as one matrix product of x1 with the matrices laid side by side, then a product with
x2 summed over in2, so every gradient is the products' own.
"""
from __future__ import annotations

import math

import numpy as np

from . import init
from .module import Module, Parameter, factory_dtype


def bilinear(input1, input2, weight, bias=None):
    """input1 (*, in1) and input2 (*, in2), weight (out, in1, in2), bias (out,) ->
    (*, out)."""
    if input1.ndim != input2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.ndim} and "
                           f"{input2.ndim}")
    for d, (a, b) in enumerate(zip(input1.shape[:-1], input2.shape[:-1])):
        if a != b:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {d}: "
                               f"got {a} and {b}")
    if weight.ndim != 3:
        raise RuntimeError(f"bilinear(): weight must be three-dimensional (out, in1, in2), got "
                           f"shape {list(weight.shape)}")
    out, in1, in2 = weight.shape
    for x, n, which in ((input1, in1, "input1"), (input2, in2, "input2")):
        if x.shape[-1] != n:
            raise RuntimeError(f"bilinear(): {which} size does not match weight size: got "
                               f"{x.shape[-1]} but expected {n}")
    if bias is not None and tuple(bias.shape) != (out,):
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{list(bias.shape)} but expected [{out}]")
    lead = tuple(input1.shape[:-1])
    # (*, in1) @ (in1, out * in2) -> (*, out, in2), then the product with x2 over in2; the
    # leading dims are kept as they are (not flattened), so an ONNX export keeps them dynamic
    side = input1 @ weight.permute(1, 0, 2).reshape(in1, out * in2)
    y = (side.reshape(*lead, out, in2) * input2.unsqueeze(-2)).sum(-1)
    return y if bias is None else y + bias


class Bilinear(Module):
    """y = x1^T A x2 + b: x1 (*, in1_features), x2 (*, in2_features) -> (*, out_features);
    weight (out, in1, in2) and bias (out,) drawn from U(-1/sqrt(in1), 1/sqrt(in1))."""

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None,
                 dtype=None):
        super().__init__()
        dtype = factory_dtype(device, dtype, "Bilinear")
        self.in1_features, self.in2_features = in1_features, in2_features
        self.out_features = out_features
        self.weight = Parameter(np.empty((out_features, in1_features, in2_features), dtype))
        self.bias = Parameter(np.empty(out_features, dtype)) if bias else None
        self.reset_parameters()

    def reset_parameters(self):
        if self.in1_features <= 0:
            raise ValueError(f"in1_features must be > 0, but got (in1_features="
                             f"{self.in1_features})")
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
