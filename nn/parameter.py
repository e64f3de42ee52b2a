"""`nn.parameter`, PyTorch's module of the tensors a Module registers: `Parameter` (defined
with Module in module.py) and `Buffer`.

`self.running = nn.Buffer(torch.zeros(3))` in a module's `__init__` registers a buffer, as
`self.register_buffer("running", torch.zeros(3))` does (`persistent=False` keeps it out of
`state_dict()`). As in PyTorch, a Buffer is not a class of its own at run time: `Buffer(t)`
returns `t.detach()` (requires_grad kept) marked as a buffer, and `isinstance(x, Buffer)`
reads that mark, so the tensor a module holds is a plain Tensor.
"""
from __future__ import annotations

from minigrad.creation import empty
from minigrad.tensor import Tensor

from .module import Parameter

__all__ = ["Buffer", "Parameter"]


class _BufferMeta(type):
    def __instancecheck__(cls, instance):
        return isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False)


class Buffer(Tensor, metaclass=_BufferMeta):
    """Mark `data` (default: an empty tensor) as a buffer for the Module it is assigned to."""

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = empty(0)
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent, t._is_buffer = persistent, True
        return t
