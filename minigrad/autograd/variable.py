"""`Variable`, the wrapper older PyTorch scripts put around tensors (`Variable(x)`,
`Variable(w, requires_grad=True)`). Since PyTorch 0.4 every tensor is one: calling it returns
a tensor that shares the data and is a leaf of its own, and `isinstance(t, Variable)` holds for
every tensor, as in PyTorch."""
from __future__ import annotations

import warnings

from ..tensor import Tensor


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """`Variable(data, requires_grad=False)`: `data` detached (the same memory), requiring grad
    as asked. `volatile=` is accepted with PyTorch's warning and has no effect."""

    def __new__(cls, data=None, requires_grad=False, volatile=False, _grad_fn=None):
        if data is None:
            data = Tensor([])
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        if _grad_fn is not None:
            raise TypeError(f"Variable: _grad_fn has to be None (minigrad builds graphs from "
                            f"ops alone), but got {type(_grad_fn).__name__}")
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():`"
                          " instead.", UserWarning, stacklevel=2)
        return data.detach().requires_grad_(bool(requires_grad))
