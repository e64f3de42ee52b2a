"""`torch.nn.modules.instancenorm`'s path: the instance norms; PyTorch code imports them from
there, and here they come from the modules of nn/ named below."""
from ..instance_norm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, _InstanceNorm
from ..lazy_modules import LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d"]
