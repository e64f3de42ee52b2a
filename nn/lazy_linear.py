"""nn.LazyLinear: a Linear whose in_features is read from its first input.

Until then its weight and bias are empty placeholders (PyTorch's UninitializedParameter);
the first call gives them their shapes in place, so an optimizer built before it holds the
same parameter objects, draws them as Linear does, and the module becomes a Linear (PyTorch's
`cls_to_become`).
"""
from __future__ import annotations

import numpy as np

from minigrad.autograd import no_grad

from .layers import Linear
from .module import Module, Parameter, factory_dtype


class LazyLinear(Linear):
    """y = x W^T + b: x (..., in_features) -> (..., out_features), in_features taken from the
    first x."""

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        Module.__init__(self)
        dtype = factory_dtype(device, dtype, "LazyLinear")
        self.in_features, self.out_features = 0, out_features
        self.weight = Parameter(np.empty(0, dtype))
        self.bias = Parameter(np.empty(0, dtype)) if bias else None

    def has_uninitialized_params(self):
        return self.in_features == 0 and self.weight.numel() == 0

    def reset_parameters(self):
        if not self.has_uninitialized_params():
            super().reset_parameters()

    def initialize_parameters(self, input):
        """Shape the placeholders for input (..., in_features) and draw them as Linear does."""
        if not self.has_uninitialized_params():
            return
        with no_grad():
            self.in_features = input.shape[-1]
            self.weight._array = np.empty((self.out_features, self.in_features),
                                          self.weight.dtype)
            if self.bias is not None:
                self.bias._array = np.empty(self.out_features, self.bias.dtype)
            self.reset_parameters()
        self.__class__ = self.cls_to_become

    def forward(self, input):
        self.initialize_parameters(input)
        return Linear.forward(self, input)  # self may be a Linear now
