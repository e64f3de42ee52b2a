"""`torch.nn.modules.module`'s names: `Module`, `Parameter` and the global module hooks
(defined in nn/module.py and nn/module_hooks.py)."""
from ..module import Module, Parameter
from ..module_hooks import RemovableHandle, register_module_buffer_registration_hook, \
    register_module_forward_hook, register_module_forward_pre_hook, \
    register_module_full_backward_hook, register_module_full_backward_pre_hook, \
    register_module_module_registration_hook, register_module_parameter_registration_hook

__all__ = ["Module", "Parameter", "RemovableHandle", "register_module_buffer_registration_hook",
           "register_module_forward_hook", "register_module_forward_pre_hook",
           "register_module_full_backward_hook", "register_module_full_backward_pre_hook",
           "register_module_module_registration_hook",
           "register_module_parameter_registration_hook"]
