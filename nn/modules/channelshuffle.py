"""`torch.nn.modules.channelshuffle`'s path: ChannelShuffle; PyTorch code imports them from there,
and here they come from the modules of nn/ named below."""
from ..pixel_shuffle import ChannelShuffle

__all__ = ["ChannelShuffle"]
