"""Views and in-place writes: which tensors a write changes the graph of.

A view (`a[0:2]`, `a.view(2, 2)`, `a.t()`, ...) shares its base's memory, so an in-place write
to either changes the values of both, and must change the graph of both, as PyTorch does:

- `note_view`: when an op made in grad mode returns a view of its one input, the view remembers
  its root (the tensor whose memory it shows) and the chain of view ops from the root to it,
  and the root keeps a weak reference to the view.
- A write through a view records, on the root, a node that replaces the view's region (the op
  `CopySlices`, which the writer builds from `view_chain`); a write to the root records the new
  values' node on the root as usual.
- The outputs of an op that returns several views (`split`, `chunk`, `unbind`) are marked
  (`mark_split_outputs`), and so are the views taken of them: PyTorch refuses to write into
  them in place while a gradient is wanted (`multi_output_error`), since one node made them
  all and could not be rebased for one of them alone.
- A view made outside grad mode keeps only the tensor it shows, for `_base` (`note_plain_view`).
- `rebase_views`: after either, every live view of the root replays its chain of view ops on
  the root, so that its `grad_fn` reads the root's new graph (PyTorch regenerates views lazily,
  when they are next used; here it is done at the write, so that recording an op pays nothing).
"""
from __future__ import annotations

import weakref

from ..grad_mode import is_grad_enabled

_ref = weakref.ref


def note_view(out, parent, cls, kwargs):
    """`out` is a view of tensor `parent` made by `cls.apply(parent, **kwargs)`."""
    link = parent._view
    if link is None:
        root, out._view = parent, (parent, ((cls, kwargs),))
    else:
        root = link[0]
        out._view = (root, link[1] + ((cls, kwargs),))
    if parent._split_output is not None:
        out._split_output = parent._split_output
    views = root._views
    if views is None:
        root._views = [_ref(out)]
    elif len(views) < root._prune_at:
        views.append(_ref(out))
    else:  # forget dead views now and then, not each time
        views[:] = [r for r in views if r() is not None]
        views.append(_ref(out))
        root._prune_at = 2 * len(views) + 16


def note_plain_view(out, parent):
    """`out` is a view of `parent` made outside grad mode: only its `_base` is kept (a write
    into it records no graph)."""
    link = parent._view
    if link is not None:
        out._plain_base = link[0]
    else:
        base = parent._plain_base
        out._plain_base = parent if base is None else base


def mark_split_outputs(outputs, op):
    """`outputs` are the views op (PyTorch's name: "Split", "Unbind", ...) returned together."""
    if is_grad_enabled():
        for i, out in enumerate(outputs):
            out._split_output = (i, op)
    return outputs


def multi_output_error(name, tensor):
    """PyTorch's error for an in-place write into a view marked by `mark_split_outputs`."""
    i, op = tensor._split_output
    raise RuntimeError(f"{name}: Output {i} of {op} is a view and is being modified inplace. "
                       f"This view is the output of a function that returns multiple views. "
                       f"Such functions do not allow the output views to be modified inplace. "
                       f"You should replace the inplace operation by an out-of-place one.")


def view_chain(tensor):
    """(root, chain of (op class, kwargs)) if `tensor` is a recorded view, else (tensor, ())."""
    link = tensor._view
    return (tensor, ()) if link is None else link


def replay(chain, array):
    """The view `chain` selects of `array`, computed by the view ops' forwards."""
    for cls, kwargs in chain:
        array = cls.forward(object.__new__(cls), array, **kwargs)
    return array


def rebase_views(root):
    """Give every live view of `root` a `grad_fn` on root's current graph."""
    views = root._views
    if not views:
        return
    root._views = None  # the replay's outputs are views too: they go to a list thrown away
    try:
        for ref in views:
            view = ref()
            if view is not None:
                t = root
                for cls, kwargs in view._view[1]:
                    t = cls.apply(t, **kwargs)
                adopt_node(view, t.grad_fn)
    finally:
        root._views = views


def adopt_node(tensor, node):
    """Make `node` (None: no graph) the node that produces `tensor`."""
    tensor.grad_fn, tensor._requires_grad = node, node is not None
    if node is not None and hasattr(node, "out_ref"):  # the graph drawer reads values through it
        node.out_ref = weakref.ref(tensor)
