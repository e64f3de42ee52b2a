"""`Tensor`: a NumPy array, plus what reverse-mode autograd needs to know about it.

`_array` is the NumPy array (`numpy()` returns it, without a copy); `data` is, as in PyTorch, a
Tensor that shares that array but not the graph; `grad` (a Tensor) is filled by `backward()`;
`grad_fn` is the node that made this tensor (None for leaves); `requires_grad` says whether
gradients flow to it. This module holds the class, its autograd methods, and the elementwise
math, reductions and indexing that each call one op class from `minigrad.ops` (where forward
and backward live); Tensor's other methods (operators, conversions, further math, shapes and
views, in-place writes) are grouped by kind in the tensor_*.py modules it inherits from.
"""
from __future__ import annotations

import numpy as np

from . import dtypes, ops, return_types
from .autograd import gradients
from .autograd.engine import run_backward
from .autograd.op import _node_of, register_tensor_class, share_attribute_layout
from .autograd.hooks import RetainGrad, add_pre_hook, register_post_accumulate_grad_hook
from .errors import DTypeError, ShapeError
from .platform.device import check_device
from .platform.memory_format import check_memory_format
from .grad_mode import is_grad_enabled
from .printing import tensor_repr
from .size import size_of
# PyTorch's further Tensor methods, grouped by kind in modules of their own; Tensor inherits
# them. Those modules reach this one's names at call time (the one import cycle the layering
# test allows, by name).
from .tensor_convert import ConversionMethods
from .tensor_linalg import LinalgMethods
from .tensor_math import MathMethods, _float_only, _floating, _softmax
from .tensor_operators import OperatorMethods
from .tensor_functions import FunctionMethods
from .tensor_layout import LayoutMethods
from .tensor_storage import StorageMethods
from .tensor_random import RandomFillMethods
from .tensor_shape import ShapeMethods
from .tensor_shape_inplace import ShapeInPlaceMethods
from .tensor_write import WriteMethods
from .special_methods import SpecialMethods


def array_of(x):
    """The NumPy array inside tensor `x` (no copy); anything else (an array, a number, a list)
    as it is. For code that takes tensors or arrays alike, such as masks and index batches."""
    return x._array if isinstance(x, Tensor) else x


class Tensor(OperatorMethods, ConversionMethods, MathMethods, LinalgMethods, ShapeMethods,
             WriteMethods, SpecialMethods, LayoutMethods, ShapeInPlaceMethods, FunctionMethods,
             RandomFillMethods, StorageMethods):
    """An n-dimensional array that records the ops applied to it, so it can differentiate them."""

    __array_priority__ = 1000  # make `ndarray + Tensor` call Tensor.__radd__

    # Defaults shared by every tensor until set on one: creating a tensor (each op makes one)
    # then needs to set only its array and its version counter.
    grad = None           # a Tensor, filled by backward()
    grad_fn = None        # the node that made this tensor; None for leaves
    _prints_as_tensor = True  # only classes setting it themselves print as `tensor(...)`
    _requires_grad = False
    _acc = None           # a leaf's AccumulateGrad node, made when first needed
    _name = None          # a parameter's dotted name, for graph drawings
    _view = None          # (root, chain of view ops) for a view made in grad mode: views.py
    _views = None         # weak references to the views of this tensor, if any
    _prune_at = 16        # the length of `_views` at which dead references are dropped
    _split_output = None  # (i, op) for output i of an op that returns several views: views.py
    _plain_base = None    # the tensor a view made without grad mode shows (`_base`): views.py
    _owns_memory = False  # an op's new result held through a view of its own temporary (a
                          # reshape of it): in-place writes take it for the tensor's own memory

    def __init__(self, *args, device=None):
        """PyTorch's legacy constructor (`torch.Tensor` is the float tensor type): Tensor(2, 3)
        is a float tensor of shape (2, 3) (zeros here; PyTorch leaves it uninitialised),
        Tensor([1, 2]) float data, Tensor(t) an alias of t. New code calls `tensor(data)`."""
        check_device(device, "Tensor")
        if len(args) == 1 and isinstance(args[0], Tensor):
            self._init(args[0]._array)
            self._vc = args[0]._vc  # an alias: writes through either are seen by both
            return
        self._init(dtypes.legacy_array(args, "Tensor"))

    def _init(self, arr, requires_grad=False):
        if requires_grad:
            _check_can_require_grad("tensor", arr.dtype)
        self._array = arr
        self._vc = [0]  # version counter, shared with views and with nodes that saved this
        self._requires_grad = bool(requires_grad)

    @classmethod
    def _wrap(cls, arr):
        """Wrap an array without copying it (internal: ops already made a fresh array)."""
        t = cls.__new__(cls)
        t._array = arr if isinstance(arr, np.ndarray) else np.asarray(arr)
        t._vc = [0]
        return t

    # --- description ----------------------------------------------------------------------
    shape = property(lambda self: size_of(self._array.shape))
    ndim = property(lambda self: self._array.ndim)
    dtype = property(lambda self: self._array.dtype)
    is_leaf = property(lambda self: self.grad_fn is None)
    # which output of its grad_fn this is: nonzero only for a node with several (op.py)
    output_nr = property(lambda self: self._acc.position if self.grad_fn is not None
                         and not self.grad_fn else 0)

    @property
    def requires_grad(self):
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag):
        if flag:
            _check_can_require_grad("requires_grad", self._array.dtype)
        elif self.grad_fn is not None:
            raise RuntimeError("requires_grad: only a leaf can stop requiring grad; use "
                               "detach() for a copy of a computed tensor outside the graph")
        self._requires_grad = bool(flag)
    T = property(lambda self: self.permute(*reversed(range(self.ndim))))
    _version = property(lambda self: self._vc[0])

    def size(self, dim=None):
        if dim is None:
            return size_of(self._array.shape)
        return self._array.shape[ops.shape.normalize_dim(dim, self.ndim, "size")]

    def numel(self):
        return self._array.size

    def dim(self):
        return self._array.ndim

    def item(self):
        if self._array.size != 1:
            raise ShapeError(f"item: only a tensor with one element can be converted to a "
                             f"Python number, this one has shape {self.shape} (a Tensor with "
                             f"{self._array.size} elements cannot be converted to Scalar)")
        return self._array.reshape(()).item()

    def numpy(self):
        return self._array

    @property
    def data(self):
        """This tensor's values as a new leaf that shares memory and is outside autograd.

        As in PyTorch, changes made through `.data` are invisible to autograd (no version bump):
        `p.data.mul_(0.9)` is how old code updated weights. Prefer `detach()` under `no_grad()`."""
        return Tensor._wrap(self._array)

    @data.setter
    def data(self, value):
        arr = value._array if isinstance(value, Tensor) else np.asarray(value)
        self._array = arr
        if self._acc is not None:  # gradients reaching this leaf take the new shape and dtype
            self._acc.out_shape, self._acc.out_dtype = arr.shape, arr.dtype

    def tolist(self):
        return self._array.tolist()

    def __array__(self, dtype=None, copy=None):
        return self._array if dtype is None else self._array.astype(dtype)

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._array.shape[0]

    def __iter__(self):
        n = len(self)  # a 0-d tensor raises here
        if self._requires_grad and is_grad_enabled():
            return (self[i] for i in range(n))  # each row an indexing op of the graph
        # no gradient to record (a batch of indices, say): rows straight from the array
        return (_row_of(self, r) for r in self._array)

    def __bool__(self):
        return bool(self.item())

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        a = self._array
        if a.ndim == 0 and a.dtype.kind in "iu":  # an index tensor's element, as `t[i:i + n]`
            return a.item()
        return int(self.item())

    def __repr__(self):
        node = self.grad_fn
        own = type(self).__dict__.get("_prints_as_tensor")  # other subclasses print their name
        prefix = "tensor(" if own else f"{type(self).__name__}("
        return tensor_repr(self._array, None if node is None else node.name(),
                           self.requires_grad, prefix)

    # --- autograd -------------------------------------------------------------------------
    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulate d(self)/d(leaf) into every leaf's `.grad` (added to what is there), or
        into the `.grad` of `inputs` only; with `create_graph` the pass is recorded, so the
        gradients can be differentiated again (see `minigrad.autograd.graph_engine`)."""
        if create_graph or inputs is not None:
            return gradients.backward(self, gradient, retain_graph, create_graph, inputs=inputs)
        if not self.requires_grad:
            raise RuntimeError("backward: this tensor does not require grad and has no grad_fn; "
                               "create its inputs with requires_grad=True (element 0 of "
                               "tensors does not require grad and does not have a grad_fn)")
        if gradient is None:
            if self._array.dtype.kind == "c":
                raise RuntimeError("backward: grad can be implicitly created only for real "
                                   "scalar outputs")
            if self._array.size != 1:
                raise RuntimeError(f"backward: grad can be implicitly created only for scalar "
                                   f"outputs, this one has shape {self.shape}; pass "
                                   f"gradient= of that shape")
            g = np.ones(self.shape, dtype=self.dtype)
        else:
            g = np.asarray(array_of(gradient), dtype=self.dtype)
            if g.shape != self.shape:
                raise ShapeError(f"backward: gradient has shape {g.shape} but the tensor has "
                                 f"shape {self.shape}")
        run_backward(self, g, retain_graph=bool(retain_graph))

    def detach(self):
        """The same data, cut off from the graph (sharing the version counter, as in PyTorch)."""
        t = Tensor._wrap(self._array)
        t._vc = self._vc
        return t

    def detach_(self):
        """Cut this tensor itself off the graph: it becomes a leaf that does not require grad
        (what truncated backpropagation through time does to a carried hidden state)."""
        if self.grad_fn is not None:  # (a non-leaf's `_acc` is an output's edge: op.py)
            self.grad_fn = self._acc = None
        self.requires_grad = False
        return self

    def clone(self, *, memory_format=None):
        check_memory_format(memory_format, "clone", self.ndim)
        return self + 0 if self.requires_grad else Tensor._wrap(self._array.copy())

    def requires_grad_(self, requires_grad=True):
        if requires_grad:
            _check_can_require_grad("requires_grad_", self._array.dtype)
        self.requires_grad = requires_grad
        return self

    @property
    def retains_grad(self):
        return self.grad_fn is not None and any(
            isinstance(h, RetainGrad) for h in _node_of(self).pre_hooks)

    def retain_grad(self):
        """Keep `.grad` on this non-leaf tensor after backward (a leaf keeps it anyway)."""
        if not self.requires_grad:
            raise RuntimeError("retain_grad: can't retain_grad on Tensor that has "
                               "requires_grad=False")
        if self.grad_fn is not None and not self.retains_grad:
            _node_of(self).pre_hooks += (RetainGrad(self),)

    def register_hook(self, hook):
        """Call `hook(grad)` when this tensor's gradient is computed; a returned tensor replaces
        it. Returns a handle whose `remove()` unregisters the hook."""
        if not self.requires_grad:
            raise RuntimeError("register_hook: the tensor does not require grad")
        return add_pre_hook(_node_of(self), hook)

    register_post_accumulate_grad_hook = register_post_accumulate_grad_hook   # (hooks.py)

    # --- elementwise (the operators, maximum and minimum are in tensor_operators.py) --------
    def exp(self): return ops.Exp.apply(_floating(self))
    def log(self): return ops.Log.apply(_floating(self))
    def sqrt(self): return ops.Sqrt.apply(_floating(self))
    def abs(self): return ops.Abs.apply(self)
    def tanh(self): return ops.Tanh.apply(_floating(self))
    def sigmoid(self): return ops.Sigmoid.apply(_floating(self))
    def relu(self): return ops.Relu.apply(self)
    def gelu(self, approximate="none"):
        if self._array.dtype == np.float16:  # computed in float32, rounded back as PyTorch's
            return ops.Gelu.apply(self.float(), approximate=approximate).half()
        return ops.Gelu.apply(self, approximate=approximate)

    # --- reductions -----------------------------------------------------------------------
    # `dtype`: the input is cast to it first (to sum float16 in float32, ints in float64)
    def sum(self, dim=None, keepdim=False, *, dtype=None):
        x = self if dtype is None else self.to(dtype)
        return ops.Sum.apply(x, dim=dim, keepdim=keepdim)

    def mean(self, dim=None, keepdim=False, *, dtype=None):
        x = self if dtype is None else self.to(dtype)
        return ops.Mean.apply(_float_only(x, "mean", "fc"), dim=dim, keepdim=keepdim)
    def amax(self, dim=None, keepdim=False): return ops.Amax.apply(self, dim=dim, keepdim=keepdim)
    def amin(self, dim=None, keepdim=False): return ops.Amin.apply(self, dim=dim, keepdim=keepdim)
    def logsumexp(self, dim=None, keepdim=False):
        return ops.LogSumExp.apply(_floating(self), dim=dim, keepdim=keepdim)

    def var(self, dim=None, keepdim=False, unbiased=True, correction=None):
        c = correction if correction is not None else int(unbiased)
        return ops.Var.apply(_float_only(self, "var", "fc"), dim=dim, keepdim=keepdim, correction=c)

    def std(self, dim=None, keepdim=False, unbiased=True, correction=None):
        c = correction if correction is not None else int(unbiased)
        return ops.Std.apply(_float_only(self, "std", "fc"), dim=dim, keepdim=keepdim, correction=c)

    def max(self, dim=None, keepdim=False, *, other=None):
        """The largest element; with `dim`, a (values, indices) pair as in PyTorch (the
        gradient goes to the index returned); with a tensor (`other`), the elementwise maximum."""
        return _extreme(return_types.max, self, dim if other is None else other, keepdim)

    def min(self, dim=None, keepdim=False, *, other=None):
        """The smallest element, as `max` is the largest."""
        return _extreme(return_types.min, self, dim if other is None else other, keepdim)

    def argmax(self, dim=None, keepdim=False):
        return _arg(np.argmax, "argmax", self, dim, keepdim)

    def argmin(self, dim=None, keepdim=False):
        return _arg(np.argmin, "argmin", self, dim, keepdim)

    def __getitem__(self, index):
        return ops.GetItem.apply(self, index=_index(index))

    # --- indexing and masking -------------------------------------------------------------
    def masked_fill(self, mask, value):
        # the mask goes in as a tensor, so an in-place change of it before backward is caught
        if not isinstance(value, Tensor):
            return ops.MaskedFill.apply(self, mask, value=value)
        if value.ndim:
            raise RuntimeError(f"masked_fill: only supports a 0-dimension value tensor, got one "
                               f"of shape {value.shape}")
        out = ops.MaskedFill.apply(self, mask, value=value._array)
        if value.requires_grad and is_grad_enabled() and self.is_floating_point():
            out = ops.Where.apply(mask, value.to(self.dtype), out)  # value's gradient: masked
        return out

    def gather(self, dim, index, *, sparse_grad=False):
        """`sparse_grad` asks PyTorch for a sparse gradient; minigrad's is dense either way."""
        return ops.Gather.apply(self, dim=dim, index=index)

    def index_select(self, dim, index):
        return ops.IndexSelect.apply(self, dim=dim, index=index)

    def softmax(self, dim=-1, dtype=None):
        return _softmax(ops.Softmax, self if dtype is None else self.to(dtype), dim)

    def log_softmax(self, dim=-1, dtype=None):
        return _softmax(ops.LogSoftmax, self if dtype is None else self.to(dtype), dim)


def _row_of(t, row):
    """Row `row` of t's array (a NumPy scalar or view) as a tensor, as `t[i]` would give it: a
    view shares t's version counter, a scalar becomes a 0-d array of its own."""
    out = Tensor._wrap(np.asarray(row))
    if out._array.base is not None:
        out._vc = t._vc
    return out


def _check_can_require_grad(op, dtype):
    if dtype.kind not in "fc":
        raise DTypeError(f"{op}: only floating point tensors can require gradients, got dtype "
                         f"{dtype} (complex ones can too)")


register_tensor_class(Tensor)  # the engine wraps op outputs in it
# the attributes a tensor may get (its array and version counter, then the class defaults
# above): see `share_attribute_layout` for why recorded outputs would otherwise be slower
share_attribute_layout(Tensor, ("_array", "_vc", "grad_fn", "_requires_grad", "grad", "_acc",
                                "_name", "_view", "_views", "_prune_at", "_owns_memory",
                                "_split_output", "_plain_base"))
for _name in ops.reduce.ALIASED:
    setattr(Tensor, _name, ops.reduce.dim_aliases(getattr(Tensor, _name)))


def _extreme(pair, t, dim, keepdim):
    """max or min (as `pair` says) of t: over all elements, elementwise against a tensor, or
    along dim as `pair(values, indices)`, the values read at the indices found."""
    largest = pair is return_types.max
    if isinstance(dim, Tensor):
        return t.maximum(dim) if largest else t.minimum(dim)
    if dim is None:
        return t.amax() if largest else t.amin()
    idx = (t.argmax if largest else t.argmin)(dim, keepdim=True)
    d = ops.shape.normalize_dim(dim, t.ndim, pair.__name__)
    values = t.gather(d, idx) if t.ndim else t.reshape(())
    if not keepdim and t.ndim:
        values, idx = values.squeeze(d), idx.squeeze(d)
    return pair(values, idx)


def _arg(fn, name, t, dim, keepdim):
    ops.sort.refuse_complex(t._array, name)
    if dim is None:
        return Tensor._wrap(np.asarray(fn(t._array)))
    d = ops.shape.normalize_dim(dim, t.ndim, name)
    return Tensor._wrap(fn(t._array, axis=d, keepdims=keepdim))


def _index(index):
    """A list index becomes an array, so NumPy's indexing rules apply unchanged; tensors in an
    index stay tensors (the op's `apply` unwraps them and tracks their versions)."""
    if isinstance(index, list):
        return np.asarray(index)
    return index

