"""`torch.nn.modules.linear`'s path: Linear, Identity, Bilinear and LazyLinear; PyTorch code
imports them from there, and here they come from the modules of nn/ named below."""
from ..bilinear import Bilinear
from ..layers import Identity, Linear
from ..lazy_linear import LazyLinear

__all__ = ["Bilinear", "Identity", "LazyLinear", "Linear"]
