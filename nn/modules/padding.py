"""`torch.nn.modules.padding`'s path: the padding layers; PyTorch code imports them from there, and
here they come from the modules of nn/ named below."""
from ..padding import (CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d, ConstantPad2d,
                       ConstantPad3d, ReflectionPad1d, ReflectionPad2d, ReflectionPad3d,
                       ReplicationPad1d, ReplicationPad2d, ReplicationPad3d, ZeroPad1d, ZeroPad2d,
                       ZeroPad3d, _CircularPadNd, _ConstantPadNd)

__all__ = ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
           "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d",
           "ZeroPad3d"]
