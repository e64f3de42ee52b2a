"""Tensor methods that write values: `t[idx] = v`, `masked_fill_`, `scatter_`, `index_fill_`,
`index_add_`, `clamp_`, `+=`, ..., and their out-of-place forms (`index_put`, `scatter`, ...);
and the plain in-place updates optimizers and initialisers make under `no_grad` (`zero_`,
`add_`, `copy_`, `normal_`, ...), which autograd does not record.

An in-place write keeps the tensor's identity and memory, so views of it see the new values,
as in PyTorch. When autograd records it, the tensor's `grad_fn` becomes the op that produced
the new values, fed by a copy of the old ones: later ops differentiate through the write, and
an op that saved the old values for its backward notices the change through the version
counter and raises instead of using them. `Tensor` inherits these methods (see tensor.py).
"""
from __future__ import annotations

import numpy as np

from . import ops
from . import tensor as _t
from .autograd.versions import bump_version
from .autograd.views import adopt_node, multi_output_error, rebase_views, view_chain
from .dtypes import torch_dtype_name
from .errors import ShapeError
from .grad_mode import is_grad_enabled
from .ops.strided import element_offset, element_strides, memory_owner, strided_view
from .scalar_conversion import checked_scalar, checked_written

_NUMBERS = (bool, int, float, np.bool_, np.integer, np.floating)


def _source(op, src, shape):
    """`src` broadcast to `shape` (a tensor keeps its graph: expand is differentiable)."""
    if not isinstance(src, _t.Tensor):
        src = _t.Tensor._wrap(np.asarray(src))
    try:
        fits = np.broadcast_shapes(src.shape, shape) == shape
    except ValueError:
        fits = False
    if not fits:
        raise ShapeError(f"{op}: source of shape {src.shape} does not fit a tensor of shape "
                         f"{shape}")
    return src if src.shape == shape else src.expand(shape)


def _along(t, dim, index, op):
    """The index tuple that picks `index` along dim: (:, :, index) for dim 2."""
    d = ops.shape.normalize_dim(dim, t.ndim, op)
    return (slice(None),) * d + (index if isinstance(index, _t.Tensor) else np.asarray(index),)


def _same_dtype(op, t, src):
    """PyTorch's scatter and index_add take a source of the tensor's own dtype only."""
    if isinstance(src, _t.Tensor) and src.dtype != t.dtype:
        raise RuntimeError(f"{op}: self ({t.dtype}) and source ({src.dtype}) must have the same "
                           f"dtype")


def _is_mask(index):
    """Whether one element of an index is a bool mask of at least one dim (a 0-d bool tensor
    is not: PyTorch turns it into positions)."""
    a = _t.array_of(index) if isinstance(index, _t.Tensor) else np.asarray(index)
    return a.dtype == np.bool_ and a.ndim > 0


def _check_put_dtype(t, index, values, accumulate, setitem):
    """PyTorch's index_put takes values of the tensor's own dtype only: `t[idx] = v` with a
    tensor index (a list, an array, a mask) and `index_put_` refuse another dtype, where a
    write through ints and slices alone (a view's copy_) casts. The exception is PyTorch's
    masked_fill path: one mask and a one-element value, not accumulated, casts too."""
    if not isinstance(values, _t.Tensor) or values.dtype == t.dtype:
        return
    parts = index if isinstance(index, tuple) else (index,)
    if setitem:  # ints, slices, None, Ellipsis and 0-d integer tensors index as ints do
        parts = [p for p in parts if isinstance(p, (list, np.ndarray)) or (
            isinstance(p, _t.Tensor) and (p.ndim > 0 or p.dtype == np.bool_))]
        if not parts:
            return
    if len(parts) == 1 and _is_mask(parts[0]) and values.numel() == 1 and not accumulate:
        return
    raise RuntimeError(f"index_put_: Index put requires the source and destination dtypes "
                       f"match, got {torch_dtype_name(t.dtype)} for the destination and "
                       f"{torch_dtype_name(values.dtype)} for the source.")


def _writable(name, t):
    """t's array, or a writable array on its memory where NumPy marked t's read-only (an
    expanded tensor, overlapping windows, a view of one). As PyTorch, only a dim that repeats
    one element (stride 0, more than one element) is refused; a write into windows that
    overlap otherwise goes through, each element ending with one of the values written."""
    a = t._array
    if not a.size:
        return np.empty(a.shape, a.dtype)  # nothing to write (NumPy refuses a read-only one)
    if 0 in a.strides and any(s == 0 and n > 1 for s, n in zip(a.strides, a.shape)):
        raise RuntimeError(f"{name}: unsupported operation: more than one element of the "
                           f"written-to tensor refers to a single memory location. Please "
                           f"clone() the tensor before performing the operation. (This tensor "
                           f"of shape {t.shape} is an expanded view.)")
    if a.flags.writeable:
        return a
    alias = a.view()
    try:
        alias.flags.writeable = True
        return alias
    except ValueError:  # behind NumPy's strided-view wrapper: the same memory by address
        owner = memory_owner(a)
        if not owner.flags.writeable:
            raise RuntimeError(f"{name}: this tensor of shape {t.shape} shows read-only memory "
                               f"(a NumPy array marked read-only); clone() it first") from None
        return strided_view(owner, a.dtype, a.shape, element_strides(a),
                            element_offset(a, owner))


def _in_place(method):
    """`t.<method>_(...)`: `t.<method>(...)` written into t through `_assign`, which checks
    the dtype and the shape (no broadcasting t itself) and records the write."""
    name = method + "_"

    def write(self, *args, **kwargs):
        return self._assign(name, lambda old: getattr(old, method)(*args, **kwargs))
    write.__name__ = write.__qualname__ = name
    write.__doc__ = f"In place: `t.{method}(...)` written into t, which it returns."
    return write


class WriteMethods:
    # --- out of place -----------------------------------------------------------------------
    def index_put(self, indices, values, accumulate=False):
        _check_put_dtype(self, tuple(indices), values, accumulate, setitem=False)
        return ops.IndexPut.apply(self, values, index=_t._index(tuple(indices)),
                                  accumulate=accumulate)

    def scatter(self, dim, index, src=None, value=None, reduce=None):
        """Write src (or a number) at `index` along dim; reduce="add" adds instead, and
        reduce="multiply" multiplies (scatter_reduce's "prod" including self's values)."""
        if reduce not in (None, "add", "multiply"):
            raise RuntimeError("reduce argument must be either add or multiply.")
        src = value if src is None else src
        if isinstance(src, _NUMBERS):
            src = checked_scalar(src, self._array.dtype)  # PyTorch's range check
        if reduce == "multiply":
            if not isinstance(src, _t.Tensor):
                src = _t.Tensor._wrap(np.full(np.shape(_t.array_of(index)), src,
                                              dtype=self.dtype))
            return self.scatter_reduce(dim, index, src, "prod")
        _same_dtype("scatter_add" if reduce else "scatter", self, src)
        if self.ndim == 0:  # PyTorch's index ops see a 0-d tensor as one of shape (1,)
            return self.reshape(1).scatter(dim, index, src, reduce=reduce).reshape(())
        return ops.Scatter.apply(self, src, dim=dim, index=index, add=reduce == "add")

    def scatter_add(self, dim, index, src):
        return self.scatter(dim, index, src, reduce="add")

    def scatter_reduce(self, dim, index, src, reduce, *, include_self=True):
        _same_dtype("scatter_reduce", self, src)
        if self.ndim == 0:
            return self.reshape(1).scatter_reduce(dim, index, src.reshape(-1), reduce,
                                                  include_self=include_self).reshape(())
        return ops.ScatterReduce.apply(self, src, dim=dim, index=index, reduce=reduce,
                                       include_self=include_self)

    def index_fill(self, dim, index, value):
        if not isinstance(value, _t.Tensor):
            value = checked_scalar(value, self._array.dtype)  # PyTorch's range check
        elif value.dtype != self.dtype:  # a 0-d value of another dtype fills cast, as there
            value = value.to(self.dtype)
        if self.ndim == 0:
            return self.reshape(1).index_fill(dim, index, value).reshape(())
        return self.index_put(_along(self, dim, index, "index_fill"), value)

    def index_add(self, dim, index, source, alpha=1):
        _same_dtype("index_add", self, source)
        n, shape = np.size(_t.array_of(index)), tuple(np.shape(_t.array_of(source)))
        if self.ndim == 0:  # as PyTorch: a 0-d source at one index
            if shape or n != 1:
                raise RuntimeError(f"index_add: a 0-d tensor takes a 0-d source at one index, "
                                   f"got a source of shape {shape} and {n} indices")
            index = index.reshape(1) if isinstance(index, _t.Tensor) else np.reshape(index, 1)
            return self.reshape(1).index_add(dim, index, source.reshape(1), alpha).reshape(())
        d = ops.shape.normalize_dim(dim, self.ndim, "index_add")
        want = self.shape[:d] + (n,) + self.shape[d + 1:]
        if shape != want:
            raise RuntimeError(f"index_add: source of shape {shape} does not match a tensor of "
                               f"shape {self.shape} with {n} indices along dim {d} (expected "
                               f"{want})")
        return self.index_put(_along(self, dim, index, "index_add"),
                              source * alpha if alpha != 1 else source, accumulate=True)

    # --- in place ---------------------------------------------------------------------------
    def _assign(self, name, compute, cast=False):
        """Write `compute(old)`, a tensor of this one's shape, into this tensor's memory; in grad
        mode, record the write (see the module's docstring and autograd/views.py).

        The result must cast to this tensor's dtype under PyTorch's rule (no float into an
        integer tensor, no number into a bool one), unless `cast` (copy_, fill_ convert).
        """
        record = is_grad_enabled()
        root, chain = view_chain(self)
        if record and self._split_output is not None and self._requires_grad:
            multi_output_error(name, self)
        if record and root._requires_grad and root.grad_fn is None:
            what = "a leaf Variable" if root is self else "a view of a leaf Variable"
            raise RuntimeError(f"{name}: {what} that requires grad is being used in an in-place "
                               f"operation. (A graph is being recorded: wrap the update in "
                               f"minigrad.no_grad().)")
        target = _writable(name, self)
        old = self
        if record:  # a copy with the graph so far: an op of `compute` may save the old values
            old = _t.Tensor._wrap(self._array.copy())
            old.grad_fn, old._requires_grad = self.grad_fn, self._requires_grad
            old._acc = self._acc  # (an output's edge, if self is one of several: op.py)
        out = compute(old)
        if record and self._split_output is not None and out._requires_grad:
            multi_output_error(name, self)
        if record and out._requires_grad and out.grad_fn is None:  # a leaf (copy_(y)): a node
            out = out.expand(out.shape)                              # to record as the writer
        if out.shape != self.shape:
            raise RuntimeError(f"{name}: output with shape {list(self.shape)} doesn't match the "
                               f"broadcast shape {list(out.shape)}")
        if out.dtype != self.dtype:
            if not cast and not np.can_cast(out.dtype, self.dtype, casting="same_kind"):
                raise RuntimeError(f"{name}: result type {out.dtype} can't be cast to the "
                                   f"desired output type {self.dtype}")
            if record and out.grad_fn is not None:
                out = out.to(self.dtype)
        node = out.grad_fn if record else None
        changed = record and (node is not None or root.grad_fn is not None)
        if changed and not chain and self._array.base is not None and node is not None \
                and not self._owns_memory:
            what = ("A view was created in no_grad mode and is being modified inplace with grad "
                    "mode enabled: " if self._plain_base is not None else "")
            raise RuntimeError(f"{name}: {what}this tensor of shape {self.shape} is a view of "
                               f"another tensor's memory made outside the graph (under no_grad, or by "
                               f"detach or .data), so the gradient of an in-place write cannot "
                               f"reach that tensor; take the view in grad mode, clone() it "
                               f"first, or write it out of place (x = x + v)")
        if changed and (chain or node is None):
            # the root's new graph: its old one with the written region replaced (with nothing
            # to replace it by, gradient still reaches the old values outside that region)
            node = ops.CopySlices.apply(root if chain else old, out, chain=chain).grad_fn
        np.copyto(target, out._array, casting="unsafe")
        bump_version(self)
        if changed:
            adopt_node(root, node)
            rebase_views(root)
        return self

    def __setitem__(self, index, value):
        if isinstance(value, int) and not -2 ** 63 <= value < 2 ** 63:
            raise ValueError("Overflow when unpacking long long")  # PyTorch's, for any dtype
        if isinstance(value, _NUMBERS):
            value = checked_written(value, self._array.dtype)  # PyTorch's range check
        _check_put_dtype(self, index, value, False, setitem=True)
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

    def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
        return self._assign("scatter_reduce_", lambda old: old.scatter_reduce(
            dim, index, src, reduce, include_self=include_self))

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

    # PyTorch's in-place math: the out-of-place result written into this tensor's memory,
    # so a float result into an integer tensor is refused as there (exp_ of int64)
    abs_, neg_, sign_ = _in_place("abs"), _in_place("neg"), _in_place("sign")
    exp_, expm1_, log_ = _in_place("exp"), _in_place("expm1"), _in_place("log")
    log1p_, sqrt_, rsqrt_ = _in_place("log1p"), _in_place("sqrt"), _in_place("rsqrt")
    sigmoid_, tanh_ = _in_place("sigmoid"), _in_place("tanh")
    sin_, cos_, tan_ = _in_place("sin"), _in_place("cos"), _in_place("tan")
    reciprocal_, square_, pow_ = _in_place("reciprocal"), _in_place("square"), _in_place("pow")
    floor_, ceil_, trunc_ = _in_place("floor"), _in_place("ceil"), _in_place("trunc")
    round_ = _in_place("round")
    clamp_min_, clamp_max_ = _in_place("clamp_min"), _in_place("clamp_max")
    floor_divide_, remainder_ = _in_place("floor_divide"), _in_place("remainder")
    addmm_, baddbmm_ = _in_place("addmm"), _in_place("baddbmm")
    addcmul_, addcdiv_ = _in_place("addcmul"), _in_place("addcdiv")
    erf_, erfc_, erfinv_ = _in_place("erf"), _in_place("erfc"), _in_place("erfinv")
    log2_, log10_, exp2_ = _in_place("log2"), _in_place("log10"), _in_place("exp2")
    fmod_, nan_to_num_ = _in_place("fmod"), _in_place("nan_to_num")
    asin_, acos_, atan_ = _in_place("asin"), _in_place("acos"), _in_place("atan")
    sinh_, cosh_, asinh_ = _in_place("sinh"), _in_place("cosh"), _in_place("asinh")
    acosh_, atanh_ = _in_place("acosh"), _in_place("atanh")
    atan2_, hypot_ = _in_place("atan2"), _in_place("hypot")
    arcsin_, arccos_, arctan_, arctan2_ = asin_, acos_, atan_, atan2_
    arcsinh_, arccosh_, arctanh_ = asinh_, acosh_, atanh_
    cumsum_, cumprod_ = _in_place("cumsum"), _in_place("cumprod")
    # comparisons and logic write their bools converted to this tensor's dtype (1 and 0)
    eq_, ne_, lt_, le_ = _in_place("eq"), _in_place("ne"), _in_place("lt"), _in_place("le")
    gt_, ge_, logical_not_ = _in_place("gt"), _in_place("ge"), _in_place("logical_not")
    logical_and_, logical_or_ = _in_place("logical_and"), _in_place("logical_or")
    logical_xor_, bitwise_not_ = _in_place("logical_xor"), _in_place("bitwise_not")
    bitwise_and_, bitwise_or_ = _in_place("bitwise_and"), _in_place("bitwise_or")
    bitwise_xor_ = _in_place("bitwise_xor")

    def add_(self, other, alpha=1):
        return self._assign("add_", lambda old: old + (other if alpha == 1 else other * alpha))

    def sub_(self, other, alpha=1):
        return self._assign("sub_", lambda old: old - (other if alpha == 1 else other * alpha))

    def mul_(self, other):
        return self._assign("mul_", lambda old: old * other)

    def div_(self, other, *, rounding_mode=None):
        return self._assign("div_", lambda old: old.div(other, rounding_mode=rounding_mode))

    def __iadd__(self, o): return self.add_(o)
    def __isub__(self, o): return self.sub_(o)
    def __imul__(self, o): return self.mul_(o)
    def __itruediv__(self, o): return self.div_(o)

    def lerp_(self, end, weight):
        return self._assign("lerp_", lambda old: old.lerp(end, weight))

    def copy_(self, src, non_blocking=False):
        """Write `src` (broadcast to this shape, converted to this dtype); its graph is kept.
        `non_blocking` changes nothing: every copy here is a synchronous CPU copy."""
        return self._assign("copy_", lambda old: _source("copy_", src, old.shape), cast=True)

    def fill_(self, value):
        if isinstance(value, _t.Tensor) and value.ndim:
            raise RuntimeError(f"fill_: only supports a 0-dimension value tensor, got one of "
                               f"shape {value.shape}")
        if not isinstance(value, _t.Tensor):
            value = checked_scalar(value, self._array.dtype)  # PyTorch's range check
        return self._assign("fill_", lambda old: _source("fill_", value, old.shape), cast=True)

    def zero_(self):
        return self._assign("zero_", lambda old: _source("zero_", 0, old.shape), cast=True)

    # --- random fills (initialisers write these into weights under no_grad) --------------
    def _inplace(self, name, fn):
        if is_grad_enabled() and self.requires_grad:
            raise RuntimeError(f"{name}: a tensor that requires grad cannot be changed in place "
                               f"while recording a graph; wrap the update in minigrad.no_grad()")
        fn(self._array)
        bump_version(self)
        return self

    def normal_(self, mean=0.0, std=1.0, generator=None):
        from .random import engine
        from .random_draws import fill_normal
        return self._inplace("normal_", lambda d: fill_normal(engine(generator), d, mean, std))

    def uniform_(self, a=0.0, b=1.0, generator=None):
        from .random import engine
        from .random_draws import fill_uniform
        return self._inplace("uniform_", lambda d: fill_uniform(engine(generator), d, a, b))
