"""`minigrad.nn.modules`, at `torch.nn.modules`' path: `module` holds `Module` and the global
module hooks that PyTorch programs reach as `torch.nn.modules.module.register_module_*`; the
other submodules hold the layers under PyTorch's module names (`modules.loss._Loss`,
`modules.batchnorm._BatchNorm`, `modules.utils._pair`, `modules.transformer._get_clones`, ...),
imported when a program imports them."""
from . import module
from .module import Module

__all__ = ["Module", "module"]
