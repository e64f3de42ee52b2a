"""Randomised leaky ReLU: `rrelu` of `torch.nn.functional` and the RReLU layer (Xu et al.,
2015). While training each element at or below zero is multiplied by a slope drawn from
U(lower, upper), drawn from the generator as PyTorch draws them; in evaluation the slope is the mean
(lower + upper) / 2, a leaky ReLU. The gradient of an element is its slope (1 above zero).
"""
from __future__ import annotations

import numpy as np

from minigrad import ops
from minigrad.creation import empty, from_numpy
from minigrad.linalg_checks import torch_dtype_name

from .module import Module


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False, *,
          generator=None):
    """x for x > 0, a * x otherwise, with a ~ U(lower, upper) per element while training and
    a = (lower + upper) / 2 in evaluation. (`generator`: PyTorch's `rrelu_` takes one.)"""
    if input.dtype.kind != "f":
        raise NotImplementedError(f"\"leaky_relu_cpu\" not implemented for "
                                  f"'{torch_dtype_name(input.dtype)}' (rrelu of input of shape "
                                  f"{list(input.shape)})")
    if training:
        # PyTorch's draws: one double of U(lower, upper) for each element at or below zero,
        # in order, from the generator's stream (so a seeded run drops PyTorch's slopes)
        x = input.detach().numpy()
        below = x <= 0
        slopes = empty(int(below.sum()), dtype=np.float64).uniform_(lower, upper,
                                                                   generator=generator)
        noise = np.ones(x.shape, x.dtype)
        noise[below] = slopes.numpy()
        noise = from_numpy(noise)
        return input.mul_(noise) if inplace else input * noise
    slope = (lower + upper) / 2
    if inplace:
        return input._assign("rrelu_", lambda x: ops.LeakyRelu.apply(x, negative_slope=slope))
    return ops.LeakyRelu.apply(input, negative_slope=slope)


class RReLU(Module):
    """Randomised leaky ReLU: random slopes below zero while training, their mean otherwise."""

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}{', inplace=True' if self.inplace else ''}"
