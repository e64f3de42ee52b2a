"""`torch.nn.modules.container`'s path: the containers; PyTorch code imports them from there, and
here they come from the modules of nn/ named below."""
from ..container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential

__all__ = ["ModuleDict", "ModuleList", "ParameterDict", "ParameterList", "Sequential"]
