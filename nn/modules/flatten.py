"""`torch.nn.modules.flatten`'s path: Flatten and Unflatten; PyTorch code imports them from there,
and here they come from the modules of nn/ named below."""
from ..reshape import Flatten, Unflatten

__all__ = ["Flatten", "Unflatten"]
