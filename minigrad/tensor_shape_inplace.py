"""Tensor methods that change a tensor's shape in place, under PyTorch's names: `squeeze_`,
`unsqueeze_`, `t_`, `transpose_`, `swapdims_`, `swapaxes_`.

No element moves: the tensor keeps its identity and memory and shows it through a view of
another shape (a NumPy view of the same array). As in PyTorch, its history continues through
the change: in grad mode its `grad_fn` becomes the view op (`ViewBackward0`,
`PermuteBackward0`) applied to its graph so far, so gradients reach what made it. A tensor
that is itself a view keeps writing through to its base: the view op joins its chain of view
ops (autograd/views.py), and the views taken of it earlier replay the inverse op first, so an
in-place write later rebases them all. As in PyTorch the version counter moves (an op that
saved the tensor before the change refuses to run backward), a leaf that requires grad
changes only under `no_grad()`, and tensors that shared its memory before (`detach()`,
`.data`) keep their shape.

`Tensor` inherits these methods (see tensor.py).
"""
from __future__ import annotations

from . import ops
from . import tensor as _t
from .autograd.versions import bump_version
from .autograd.views import adopt_node, view_chain
from .grad_mode import is_grad_enabled

_normalize_dim = ops.shape.normalize_dim


def _change_shape(t, name, step, undo):
    """Show t's memory through the view op `step` = (op class, kwargs); `undo` is the op that
    brings the new shape back to the old one."""
    record = is_grad_enabled() and t._requires_grad
    root = view_chain(t)[0]
    if record and root._requires_grad and root.grad_fn is None:
        what = "a leaf Variable" if root is t else "a view of a leaf Variable"
        raise RuntimeError(f"{name}: {what} that requires grad is being used in an in-place "
                           f"operation. (A graph is being recorded: wrap it in "
                           f"minigrad.no_grad(), or call {name.rstrip('_')}() out of place.)")
    cls, kwargs = step
    alias = _t.Tensor._wrap(t._array)  # t's values and graph, so the op records on them
    alias._vc, alias.grad_fn, alias._requires_grad = t._vc, t.grad_fn, t._requires_grad
    alias._acc = t._acc  # (an output's edge, if t is one of several: op.py's `_node_of`)
    out = cls.apply(alias, **kwargs)
    t._array = out._array
    bump_version(t)
    if record:
        adopt_node(t, out.grad_fn)
    if t._acc is not None:  # a leaf's gradients take its new shape (as `Tensor.data = ...`)
        t._acc.out_shape = t._array.shape
    if t._view is not None:  # a view: writes through it replay the change after its chain
        root, chain = t._view
        t._view = (root, chain + (step,))
    if t._views:  # t is the base of views: each now starts from t's new shape
        for ref in t._views:
            view = ref()
            if view is not None:
                view._view = (t, (undo,) + view._view[1])
    return t


def _reshape_step(t, shape):
    return (ops.Reshape, {"shape": tuple(shape)}), (ops.Reshape, {"shape": tuple(t.shape)})


class ShapeInPlaceMethods:
    def squeeze_(self, dim=None):
        """In place: `squeeze(dim)`, this tensor without its size-1 dims (those in dim)."""
        shape = self.squeeze(dim).shape if self.ndim else ()
        return _change_shape(self, "squeeze_", *_reshape_step(self, shape))

    def unsqueeze_(self, dim):
        """In place: `unsqueeze(dim)`, a size-1 dim inserted at dim."""
        d = _normalize_dim(dim, self.ndim + 1, "unsqueeze_")
        shape = self.shape[:d] + (1,) + self.shape[d:]
        return _change_shape(self, "unsqueeze_", *_reshape_step(self, shape))

    def transpose_(self, dim0, dim1):
        """In place: `transpose(dim0, dim1)`, the two dims swapped."""
        n = self.ndim
        d0 = _normalize_dim(dim0, max(n, 1), "transpose_")  # a 0-d tensor takes dims 0 and -1
        d1 = _normalize_dim(dim1, max(n, 1), "transpose_")
        if n == 0:
            return self
        dims = list(range(n))
        dims[d0], dims[d1] = d1, d0
        step = (ops.Permute, {"dims": tuple(dims)})  # a swap is its own inverse
        return _change_shape(self, "transpose_", step, step)

    def t_(self):
        """In place: `t()`, a matrix transposed (a tensor of fewer dims unchanged)."""
        if self.ndim > 2:
            raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is "
                               f"{self.ndim}D")
        return self.transpose_(0, 1) if self.ndim == 2 else self

    def swapdims_(self, dim0, dim1):
        """In place: `swapdims(dim0, dim1)`, PyTorch's other name of `transpose_`."""
        return self.transpose_(dim0, dim1)

    def swapaxes_(self, axis0, axis1):
        """In place: `swapaxes(axis0, axis1)`, NumPy's name of `transpose_`."""
        return self.transpose_(axis0, axis1)
