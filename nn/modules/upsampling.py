"""`torch.nn.modules.upsampling`'s path: the upsampling layers; PyTorch code imports them from
there, and here they come from the modules of nn/ named below."""
from ..upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d

__all__ = ["Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d"]
