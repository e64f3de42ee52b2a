"""`torch.nn.modules.fold`'s path: Fold and Unfold; PyTorch code imports them from there, and here
they come from the modules of nn/ named below."""
from ..conv import Fold, Unfold

__all__ = ["Fold", "Unfold"]
