"""PyTorch's constants at the top level: `torch.pi`, `torch.e`, `torch.inf`, `torch.nan` (Python
floats, as `math`'s) and `torch.newaxis` (None, which inserts a dim in an index: `x[:,
torch.newaxis]`)."""
import math

__all__ = ["e", "inf", "nan", "newaxis", "pi"]

e = math.e
inf = math.inf
nan = math.nan
newaxis = None
pi = math.pi
