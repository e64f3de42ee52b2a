"""`torch.nn.modules.pixelshuffle`'s path: PixelShuffle and PixelUnshuffle; PyTorch code imports
them from there, and here they come from the modules of nn/ named below."""
from ..pixel_shuffle import PixelShuffle, PixelUnshuffle

__all__ = ["PixelShuffle", "PixelUnshuffle"]
