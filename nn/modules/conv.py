"""`torch.nn.modules.conv`'s path: the convolutions (`_ConvNd` too); PyTorch code imports them from
there, and here they come from the modules of nn/ named below."""
from ..conv import (Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d,
                    _ConvNd, _ConvTransposeNd)
from ..lazy_modules import (LazyConv1d, LazyConv2d, LazyConv3d, LazyConvTranspose1d,
                            LazyConvTranspose2d, LazyConvTranspose3d)

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
           "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
           "LazyConvTranspose3d"]
