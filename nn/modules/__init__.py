"""`minigrad.nn.modules`, at `torch.nn.modules`' path: `module` holds `Module` and the global
module hooks that PyTorch programs reach as `torch.nn.modules.module.register_module_*`."""
from . import module
from .module import Module

__all__ = ["Module", "module"]
