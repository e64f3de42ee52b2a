"""Tensor methods that write values: `t[idx] = v`, `masked_fill_`, `scatter_`, `index_fill_`,
`index_add_`, `clamp_`, `+=`, ..., and their out-of-place forms (`index_put`, `scatter`, ...).

An in-place write keeps the tensor's identity and memory, so views of it see the new values,
as in PyTorch. When autograd records it, the tensor's `grad_fn` becomes the op that produced
the new values, fed by a copy of the old ones: later ops differentiate through the write, and
an op that saved the old values for its backward notices the change through the version
counter and raises instead of using them. `Tensor` inherits these methods (see tensor.py).
"""
from __future__ import annotations

import weakref

import numpy as np

from . import ops
from . import tensor as _t
from .autograd.versions import bump_version
from .grad_mode import is_grad_enabled


def _along(t, dim, index, op):
    """The index tuple that picks `index` along dim: (:, :, index) for dim 2."""
    d = ops.shape.normalize_dim(dim, t.ndim, op)
    return (slice(None),) * d + (index if isinstance(index, _t.Tensor) else np.asarray(index),)


class WriteMethods:
    # --- out of place -----------------------------------------------------------------------
    def index_put(self, indices, values, accumulate=False):
        return ops.IndexPut.apply(self, values, index=_t._index(tuple(indices)),
                                  accumulate=accumulate)

    def scatter(self, dim, index, src=None, value=None, reduce=None):
        """Write src (or a number) at `index` along dim; reduce="add" adds instead."""
        if reduce not in (None, "add"):
            raise ValueError(f"scatter: reduce must be None or 'add', got {reduce!r}")
        src = value if src is None else src
        return ops.Scatter.apply(self, src, dim=dim, index=index, add=reduce == "add")

    def scatter_add(self, dim, index, src):
        return self.scatter(dim, index, src, reduce="add")

    def index_fill(self, dim, index, value):
        return self.index_put(_along(self, dim, index, "index_fill"), value)

    def index_add(self, dim, index, source, alpha=1):
        return self.index_put(_along(self, dim, index, "index_add"),
                              source * alpha if alpha != 1 else source, accumulate=True)

    # --- in place ---------------------------------------------------------------------------
    def _assign(self, name, compute):
        """Write `compute(old)` into this tensor's memory, recording the op when autograd does."""
        if is_grad_enabled() and self.requires_grad and self.grad_fn is None:
            raise RuntimeError(f"{name}: a leaf tensor that requires grad cannot be changed in "
                               f"place while recording a graph; wrap the update in "
                               f"minigrad.no_grad()")
        old = self
        if is_grad_enabled() and self.grad_fn is not None:
            old = _t.Tensor._wrap(self._array.copy())
            old.grad_fn, old.requires_grad = self.grad_fn, True
        out = compute(old)
        if not np.can_cast(out.dtype, self.dtype, casting="same_kind"):
            raise TypeError(f"{name}: the result has dtype {out.dtype}, which cannot be stored "
                            f"in place in a tensor of dtype {self.dtype}")
        if out.grad_fn is not None and self._array.base is not None:
            raise RuntimeError(f"{name}: this tensor of shape {self.shape} is a view of another "
                               f"tensor's memory, and minigrad cannot pass the gradient of an "
                               f"in-place write through a view; index the original tensor in "
                               f"one step (x[0, 1] = v, not x[0][1] = v), clone() the view "
                               f"first, or write it out of place (x = x + v)")
        try:
            np.copyto(self._array, out._array, casting="unsafe")
        except ValueError:  # NumPy refuses to write through a broadcast (expanded) view
            raise RuntimeError(f"{name}: this tensor of shape {self.shape} is an expanded view "
                               f"whose elements share memory, so it cannot be written in "
                               f"place; clone() it first") from None
        bump_version(self)
        if out.grad_fn is not None:
            self.grad_fn, self.requires_grad = out.grad_fn, True
            if hasattr(out.grad_fn, "out_ref"):  # the graph drawer reads values through it
                out.grad_fn.out_ref = weakref.ref(self)
        return self

    def __setitem__(self, index, value):
        self._assign("index_put_", lambda old: ops.IndexPut.apply(old, value,
                                                                  index=_t._index(index)))

    def index_put_(self, indices, values, accumulate=False):
        return self._assign("index_put_", lambda old: old.index_put(indices, values, accumulate))

    def masked_fill_(self, mask, value):
        return self._assign("masked_fill_", lambda old: old.masked_fill(mask, value))

    def scatter_(self, dim, index, src=None, value=None, reduce=None):
        return self._assign("scatter_", lambda old: old.scatter(dim, index, src, value, reduce))

    def scatter_add_(self, dim, index, src):
        return self._assign("scatter_add_", lambda old: old.scatter_add(dim, index, src))

    def index_fill_(self, dim, index, value):
        return self._assign("index_fill_", lambda old: old.index_fill(dim, index, value))

    def index_add_(self, dim, index, source, alpha=1):
        return self._assign("index_add_", lambda old: old.index_add(dim, index, source, alpha))

    def relu_(self):
        return self._assign("relu_", lambda old: old.relu())

    def clamp_(self, min=None, max=None):
        return self._assign("clamp_", lambda old: old.clamp(min, max))

    clip_ = clamp_

    def tril_(self, diagonal=0):
        return self._assign("tril_", lambda old: old.tril(diagonal))

    def triu_(self, diagonal=0):
        return self._assign("triu_", lambda old: old.triu(diagonal))

    def __iadd__(self, o): return self._assign("add_", lambda old: old + o)
    def __isub__(self, o): return self._assign("sub_", lambda old: old - o)
    def __imul__(self, o): return self._assign("mul_", lambda old: old * o)
    def __itruediv__(self, o): return self._assign("div_", lambda old: old / o)

    # --- random fills (initialisers write these into weights under no_grad) --------------
    def normal_(self, mean=0.0, std=1.0, generator=None):
        from .random import generator as rng
        return self._inplace("normal_", lambda d: np.copyto(
            d, rng(generator).normal(mean, std, d.shape), casting="unsafe"))

    def uniform_(self, a=0.0, b=1.0, generator=None):
        from .random import generator as rng
        return self._inplace("uniform_", lambda d: np.copyto(
            d, rng(generator).uniform(a, b, d.shape), casting="unsafe"))
