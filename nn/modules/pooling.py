"""`torch.nn.modules.pooling`'s path: the pooling layers; PyTorch code imports them from there, and
here they come from the modules of nn/ named below."""
from ..adaptive_max_pool import AdaptiveMaxPool1d, AdaptiveMaxPool2d, AdaptiveMaxPool3d
from ..fractional_max_pool import FractionalMaxPool2d, FractionalMaxPool3d
from ..lp_pool import LPPool1d, LPPool2d, LPPool3d
from ..max_unpool import MaxUnpool1d, MaxUnpool2d, MaxUnpool3d
from ..pooling import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d, AvgPool1d,
                       AvgPool2d, AvgPool3d, MaxPool1d, MaxPool2d, MaxPool3d, _AdaptiveAvgPoolNd,
                       _MaxPoolNd)

__all__ = ["AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
           "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
           "FractionalMaxPool2d", "FractionalMaxPool3d", "LPPool1d", "LPPool2d", "LPPool3d",
           "MaxPool1d", "MaxPool2d", "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d"]
