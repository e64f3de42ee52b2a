"""The pruning methods of `torch.nn.utils.prune`: each computes a mask for a tensor, and is
the forward pre-hook that applies it.

`BasePruningMethod.apply` moves `module.weight` to the parameter `weight_orig`, adds the
buffer `weight_mask` and makes `weight` a plain attribute equal to `weight_orig *
weight_mask`, recomputed before every call; a second pruning of the same tensor acts on the
entries the first left (a `PruningContainer`). The methods: `Identity`, `RandomUnstructured`,
`L1Unstructured`, `RandomStructured`, `LnStructured` and `CustomFromMask`; the functions that
apply them by name, and global pruning, are in prune.py.
"""
from __future__ import annotations

import numbers
from abc import ABC, abstractmethod

import minigrad

__all__ = ["BasePruningMethod", "CustomFromMask", "Identity", "L1Unstructured", "LnStructured",
           "PruningContainer", "RandomStructured", "RandomUnstructured"]


class BasePruningMethod(ABC):
    """A way to compute a mask; an instance is also the forward pre-hook of the tensor it
    prunes. Subclasses define `compute_mask(t, default_mask)` and `PRUNING_TYPE`
    ("unstructured", "structured" with a `dim`, or "global")."""

    _tensor_name = None

    def __call__(self, module, inputs):
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """The new mask of `t`, given the mask of earlier prunings (ones at first)."""

    def apply_mask(self, module):
        assert self._tensor_name is not None, \
            f"Module {module} has to be pruned"  # an internal misuse, as PyTorch's assert
        orig = getattr(module, self._tensor_name + "_orig")
        mask = getattr(module, self._tensor_name + "_mask")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Prune `module.<name>` with `cls(*args, **kwargs)`, on the entries earlier
        prunings left; `importance_scores` (the tensor's shape) rank the entries instead of
        the tensor itself. Returns the method (or the container now holding it)."""
        method = _composite_method(cls, module, name, *args, **kwargs)
        orig = getattr(module, name)
        if importance_scores is not None:
            if importance_scores.shape != orig.shape:
                raise AssertionError(f"importance_scores should have the same shape as "
                                     f"parameter {name} of {module}")
        else:
            importance_scores = orig
        if not isinstance(method, PruningContainer):
            delattr(module, name)
            module.register_parameter(name + "_orig", orig)
            default_mask = minigrad.ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            with minigrad.no_grad():
                mask = method.compute_mask(importance_scores.detach(), default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if not isinstance(method, PruningContainer):
                orig = getattr(module, name + "_orig")
                delattr(module, name + "_orig")
                if name in module.__dict__:
                    delattr(module, name)
                module.register_parameter(name, orig)
            raise
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """`t` with this method's mask applied (not attached to any module)."""
        if importance_scores is not None and importance_scores.shape != t.shape:
            raise AssertionError("importance_scores should have the same shape as tensor t")
        scores = importance_scores if importance_scores is not None else t
        default_mask = default_mask if default_mask is not None else minigrad.ones_like(t)
        with minigrad.no_grad():
            mask = self.compute_mask(scores.detach(), default_mask=default_mask)
        return t * mask

    def remove(self, module):
        """Make the pruning permanent: `<name>` becomes a parameter holding orig * mask."""
        assert self._tensor_name is not None, \
            f"Module {module} has to be pruned before pruning can be removed"
        weight = self.apply_mask(module)
        if self._tensor_name in module.__dict__:
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = weight.detach()._array
        delattr(module, self._tensor_name + "_orig")
        delattr(module, self._tensor_name + "_mask")
        setattr(module, self._tensor_name, orig)


def _composite_method(cls, module, name, *args, **kwargs):
    """The new method, or a container holding the tensor's earlier method and the new one
    (their hook is taken off the module; `apply` registers the result)."""
    old, keys = None, []
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            old = hook
            keys.append(key)
    assert len(keys) <= 1, (f"Avoid adding multiple pruning hooks to the same tensor {name} "
                            f"of module {module}. Use a PruningContainer.")
    for key in keys:
        del module._forward_pre_hooks[key]
    method = cls(*args, **kwargs)
    method._tensor_name = name
    if old is not None:
        if not isinstance(old, PruningContainer):
            old = PruningContainer(old)
        old.add_pruning_method(method)
        method = old
    return method


class PruningContainer(BasePruningMethod):
    """The pruning methods applied one after another to one tensor."""

    PRUNING_TYPE = None

    def __init__(self, *args):
        self._pruning_methods = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method):
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError(f"Can only add pruning methods acting on the parameter named "
                             f"'{self._tensor_name}' to PruningContainer {self}. Found "
                             f"'{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        """The last method's mask computed on the entries (unstructured), the channels
        (structured) or the whole tensor (global) the earlier masks kept."""
        method = self._pruning_methods[-1]
        mask = default_mask.to(dtype=t.dtype)
        if method.PRUNING_TYPE == "unstructured":
            slc = mask == 1
        elif method.PRUNING_TYPE == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError('Pruning methods of PRUNING_TYPE "structured" need to '
                                     'have the attribute `dim` defined.')
            dim = method.dim + t.ndim if method.dim < 0 else method.dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {t.ndim}")
            keep = mask.sum(dim=[d for d in range(t.ndim) if d != dim]) != 0
            slc = tuple(keep if d == dim else slice(None) for d in range(t.ndim))
        elif method.PRUNING_TYPE == "global":
            slc = tuple(slice(None) for _ in range(t.ndim))
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {method.PRUNING_TYPE}")
        partial = method.compute_mask(t[slc], default_mask=mask[slc])
        mask[slc] = partial.to(dtype=mask.dtype)
        return mask


class Identity(BasePruningMethod):
    """Prunes nothing: the mask is all ones."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


class _Unstructured(BasePruningMethod):
    """Prunes the `amount` entries (a count, or a fraction) of the largest scores (smallest
    if not `_largest`)."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _validate_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        k = _count(self.amount, t.numel())
        mask = default_mask.clone()
        if k:
            order = minigrad.topk(self._scores(t).reshape(-1), k=k, largest=self._largest)
            mask.view(-1)[order.indices] = 0
        return mask


class RandomUnstructured(_Unstructured):
    """Prunes `amount` entries chosen at random."""

    _largest = True

    def _scores(self, t):
        return minigrad.rand_like(t)

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(_Unstructured):
    """Prunes the `amount` entries of smallest absolute value."""

    _largest = False

    def _scores(self, t):
        return t.abs()

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prunes `amount` channels along `dim`, chosen at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1):
        _validate_amount_init(amount)
        self.amount, self.dim = amount, dim

    def compute_mask(self, t, default_mask):
        size = _channels(t, self.dim)
        k = _count(self.amount, size)
        if not k:
            return default_mask
        prob = minigrad.rand(size)
        keep = prob > minigrad.kthvalue(prob, k=k).values
        return _channel_mask(t, self.dim, keep) * default_mask.to(dtype=t.dtype)

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes the `amount` channels along `dim` of smallest L`n` norm."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim=-1):
        _validate_amount_init(amount)
        self.amount, self.n, self.dim = amount, n, dim

    def compute_mask(self, t, default_mask):
        size = _channels(t, self.dim)
        k = _count(self.amount, size)
        if not k:
            return default_mask
        dim = self.dim % t.ndim
        norm = minigrad.norm(t, p=self.n, dim=[d for d in range(t.ndim) if d != dim])
        keep = minigrad.topk(norm, k=size - k, largest=True).indices
        return _channel_mask(t, self.dim, keep) * default_mask.to(dtype=t.dtype)

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(module, name, amount=amount, n=n, dim=dim,
                             importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes where the given `mask` is 0."""

    PRUNING_TYPE = "global"

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        assert default_mask.shape == self.mask.shape, "the mask must have the tensor's shape"
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


def _channel_mask(t, dim, keep):
    mask = minigrad.zeros_like(t)
    mask[tuple(keep if d == dim % t.ndim else slice(None) for d in range(t.ndim))] = 1
    return mask


def _channels(t, dim):
    if t.ndim <= 1:
        raise ValueError(f"Structured pruning can only be applied to multidimensional tensors. "
                         f"Found tensor of shape {t.shape} with {t.ndim} dims")
    if dim >= t.ndim:
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")
    return t.shape[dim]


def _validate_amount_init(amount):
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
            not isinstance(amount, numbers.Integral) and not 0.0 <= float(amount) <= 1.0):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a "
                         f"non-negative integer")


def _count(amount, size):
    """How many of `size` entries or channels to prune; an int may not exceed `size`."""
    if isinstance(amount, numbers.Integral):
        if amount > size:
            raise ValueError(f"amount={amount} should be smaller than the number of parameters "
                             f"to prune={size}")
        return amount
    return round(amount * size)
