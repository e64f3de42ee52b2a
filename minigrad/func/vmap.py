"""`vmap`: a function of one example mapped over a batch, as `torch.func.vmap`.

    vmap(f)(xs)                      stack([f(x) for x in xs])
    vmap(f, in_dims=(None, 0))(w, xs) w shared by every example, xs split along dim 0

PyTorch runs f once on "batched tensors" that carry the batch dim through every op. minigrad
does what that means the plain way: it calls f once per slice and stacks the results (a
loop; the results, shapes and errors are PyTorch's, the speed is not). Because each call is
an ordinary call, vmap composes with everything, grad inside (per-example gradients) or
outside, and vmap inside vmap.

What a loop would do differently, and how it is kept to PyTorch's behaviour:
- random ops: `randomness` is checked on the default generator (see `randomness`);
- an in-place write to a tensor that is not batched (an argument with in_dim None, or a tensor
  the function captures, a module's buffer) would be repeated per slice: it is made once when
  every slice writes the same values, and refused with PyTorch's error when they differ
  (see `writes`);
- out_dims=None asks for an output that is the same for every slice: it must be.
"""
from __future__ import annotations

import functools

import numpy as np

import minigrad

from minigrad.autograd.function import running_transform

from .pytree import broadcast_prefix, spec_repr, tree_flatten, tree_unflatten
from .randomness import Draws, check_randomness
from .writes import Writes, unbatched_tensors

def _name(func):
    return getattr(func, "__name__", type(func).__name__)


def _is_dims(d, allow_none):
    if d is None:
        return allow_none
    if isinstance(d, int) and not isinstance(d, bool):
        return True
    if isinstance(d, (tuple, list)):
        return all(_is_dims(x, True) for x in d)
    return isinstance(d, dict) and all(_is_dims(x, True) for x in d.values())


def _in_dims(func, in_dims, args):
    """One in_dim (an int or None) per leaf of args, with PyTorch's errors."""
    head = f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>)"
    if not isinstance(in_dims, (int, tuple)) or isinstance(in_dims, bool) or \
            not _is_dims(in_dims, False):
        raise ValueError(f"{head}: expected `in_dims` to be int or a (potentially nested) tuple "
                         f"matching the structure of inputs, got: {type(in_dims)}.")
    if not args:
        raise ValueError(f"vmap({_name(func)})(<inputs>): got no inputs. Maybe you forgot to add "
                         f"inputs, or you are trying to vmap over a function with no inputs. "
                         f"The latter is unsupported.")
    dims = broadcast_prefix(in_dims, args)
    if dims is None:
        raise ValueError(f"{head}: in_dims is not compatible with the structure of `inputs`. "
                         f"in_dims has structure {spec_repr(tree_flatten(in_dims)[1])} but "
                         f"inputs has structure {spec_repr(tree_flatten(args)[1])}.")
    leaves, spec = tree_flatten(args)
    for d, x in zip(dims, leaves):
        if d is None:
            continue
        if not isinstance(x, minigrad.Tensor):
            raise ValueError(f"{head}: Got in_dim={d} for an input but the input is of type "
                             f"{type(x)}. We cannot vmap over non-Tensor arguments, please use "
                             f"None as the respective in_dim")
        if not -x.dim() <= d < x.dim():
            raise ValueError(f"{head}: Got in_dim={d} for some input, but that input is a Tensor "
                             f"of dimensionality {x.dim()} so expected in_dim to satisfy "
                             f"{-x.dim()} <= in_dim < {x.dim()}.")
    return leaves, spec, dims


def _batch_size(leaves, dims):
    sizes = [x.shape[d] for x, d in zip(leaves, dims) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if len(set(sizes)) > 1:
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return sizes[0]


def _zero_slice(x, d):
    shape = list(x.shape)
    del shape[d]
    return minigrad.zeros(shape, dtype=x.dtype)


def _check_outputs(func, outs):
    for x in outs:
        if not isinstance(x, minigrad.Tensor):
            raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` must only return "
                             f"Tensors, got type {type(x)}. Did you mean to set out_dims= to "
                             f"None for output?")


def _out_dims(func, out_dims, spec, n):
    if not _is_dims(out_dims, True) or isinstance(out_dims, dict):
        raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an "
                         f"int, None or a python collection of ints representing where in the "
                         f"outputs the vmapped dimension should appear.")
    dims = broadcast_prefix(out_dims, tree_unflatten([0] * n, spec))
    if dims is None:
        raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is "
                         f"not compatible with the structure of `outputs`. out_dims has "
                         f"structure {spec_repr(tree_flatten(out_dims)[1])} but outputs has "
                         f"structure {spec_repr(spec)}.")
    return dims


def _same(values):
    first = values[0]
    if not isinstance(first, minigrad.Tensor):
        return all(v is first or v == first for v in values)
    return all(v is first or (v.shape == first.shape and
                              np.array_equal(v.numpy(), first.numpy(), equal_nan=True))
               for v in values)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """`func` mapped over dim `in_dims` of its arguments; results stacked along `out_dims`.

    in_dims: an int or None for every argument, or a tuple with one per argument (each an int,
    None, or nested like the argument). Keyword arguments are passed to every call unbatched.
    chunk_size: PyTorch's memory bound on one batched call; the loop already calls func one
    example at a time, so it is checked and changes nothing."""
    check_randomness(randomness)
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got "
                         f"{chunk_size})")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        leaves, spec, dims = _in_dims(func, in_dims, args)
        size = _batch_size(leaves, dims)
        writes = Writes(unbatched_tensors(func, leaves, dims))
        draws = Draws(randomness)
        results = []
        for b in range(max(size, 1)):  # an empty batch: one call on zeros gives the shapes
            sliced = [x if d is None else x.select(d, b) if size else _zero_slice(x, d)
                      for x, d in zip(leaves, dims)]
            draws.before()
            with running_transform("vmap"):
                out = func(*tree_unflatten(sliced, spec), **kwargs)
            draws.after()
            writes.after_call()
            results.append(tree_flatten(out))
        writes.finish()
        out_spec = results[0][1]
        dims_out = _out_dims(func, out_dims, out_spec, len(results[0][0]))
        stacked = []
        for i, d in enumerate(dims_out):
            column = [leaves_b[i] for leaves_b, _ in results]
            if d is None:
                if not _same(column):
                    raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` can not return "
                                     f"a BatchedTensor when out_dim is None")
                stacked.append(column[0])
                continue
            _check_outputs(func, column)
            _check_dim(column[0], d)
            stacked.append(minigrad.stack(column, dim=d) if size else _empty(column[0], d))
        return tree_unflatten(stacked, out_spec)
    return wrapper


def _check_dim(example, d):
    ndim = example.dim() + 1
    if not -ndim <= d < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                         f"{ndim - 1}], but got {d})")


def _empty(example, d):
    ndim = example.dim() + 1
    shape = list(example.shape)
    shape.insert(d % ndim, 0)
    return minigrad.zeros(shape, dtype=example.dtype)


__all__ = ["vmap"]
