"""Reverse mode as functions: `grad`, `grad_and_value` and `vjp`, as in `torch.func`.

    grad(f)(x)              df/dx of a function f returning a scalar Tensor
    grad(f, argnums=(0, 1)) the gradients with respect to several arguments, as a tuple
    vjp(f, x)               (f(x), vjp_fn) with vjp_fn(v) = v^T J, callable many times

Arguments may be nested tuples, lists and dicts of tensors (a dict of parameters, say), and
each gradient has its argument's structure. Each call runs one forward and one backward pass
on minigrad's tape (see `tracking`); transforms compose because an inner one records its
backward pass whenever an outer one differentiates through it.
"""
from __future__ import annotations

import functools

import minigrad

from minigrad.autograd.function import running_transform

from .pytree import spec_repr, tree_flatten, tree_map, tree_unflatten
from .tracking import Level, check_argnums, gradients, split_aux


def _track_args(level, args, argnums):
    """(args with the differentiated ones tracked, their flat leaves, their specs)."""
    args = list(args)
    flat, specs = [], []
    for a in argnums:
        leaves, spec = tree_flatten(args[a])
        leaves = [level.track(x) for x in leaves]
        args[a] = tree_unflatten(leaves, spec)
        flat.append(leaves)
        specs.append(spec)
    return args, flat, specs


def grad_and_value(func, argnums=0, has_aux=False):
    """A function returning (gradient, value) of `func` (or ((gradient), (value, aux)) with
    `has_aux`): `func` must return a scalar Tensor (and its aux)."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = check_argnums(argnums, len(args))
        level = Level()
        args, flat, specs = _track_args(level, args, nums)
        with minigrad.enable_grad(), running_transform("grad"):
            output = func(*args, **kwargs)
        output, aux = split_aux(output, has_aux, "grad_and_value(f)(*args)")
        if not isinstance(output, minigrad.Tensor):
            raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a "
                               f"Tensor, got {type(output)}")
        if output.dim() != 0:
            raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a scalar "
                               f"Tensor, got tensor with {output.dim()} dims. Maybe you wanted "
                               f"to use the vjp or jacrev APIs instead?")
        inputs = [x for leaves in flat for x in leaves]
        gs = gradients(level, [output], inputs, [minigrad.ones_like(output)], False)
        per_arg, at = [], 0
        for leaves, spec in zip(flat, specs):
            per_arg.append(tree_unflatten(gs[at:at + len(leaves)], spec))
            at += len(leaves)
        g = per_arg[0] if isinstance(argnums, int) else tuple(per_arg)
        value = level.release(output)
        if has_aux:
            return g, (value, _release_tensors(level, aux, "grad_and_value(f)(*args)"))
        return g, value
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """A function returning the gradient of `func` (a scalar Tensor) with respect to the
    arguments `argnums` names (or (gradient, aux) with `has_aux`)."""
    inner = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = inner(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return wrapper


def _release_tensors(level, tree, fn):
    def release(x):
        if not isinstance(x, minigrad.Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(x)}")
        return level.release(x)
    return tree_map(release, tree)


def _output_leaves(output, fn):
    leaves, spec = tree_flatten(output)
    for x in leaves:
        if not isinstance(x, minigrad.Tensor):
            raise RuntimeError(f"{fn}: expected f(*primals) to return only tensors, got "
                               f"unsupported type {type(x)}")
    return leaves, spec


def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn[, aux]): vjp_fn(cotangents), with cotangents shaped like the
    output, returns v^T J as a tuple with one entry per primal (each shaped like it)."""
    level = Level()
    args, flat, specs = _track_args(level, primals, range(len(primals)))
    with minigrad.enable_grad(), running_transform("grad"):
        output = func(*args)
    output, aux = split_aux(output, has_aux, "vjp(f, *primals)")
    outs, out_spec = _output_leaves(output, "vjp(f, *primals)")
    inputs = [x for leaves in flat for x in leaves]

    def vjp_fn(cotangents):
        vs, v_spec = tree_flatten(cotangents)
        if v_spec != out_spec:
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as "
                               f"pytree structure of outputs to the function. cotangents: "
                               f"{spec_repr(v_spec)}, primal output: {spec_repr(out_spec)}")
        for i, (v, o) in enumerate(zip(vs, outs)):
            if not isinstance(v, minigrad.Tensor):
                raise RuntimeError(f"Expected tensors, got unsupported type {type(v)}")
            if v.shape != o.shape:
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                                   f"{v.shape!r} and output[{i}] has a shape of {o.shape!r}.")
        gs = gradients(level, outs, inputs, vs, True)
        result, at = [], 0
        for leaves, spec in zip(flat, specs):
            result.append(tree_unflatten(gs[at:at + len(leaves)], spec))
            at += len(leaves)
        return tuple(result)

    value = tree_unflatten([level.release(o) for o in outs], out_spec)
    if has_aux:
        return value, vjp_fn, _release_tensors(level, aux, "vjp(f, *primals)")
    return value, vjp_fn


__all__ = ["grad", "grad_and_value", "vjp"]
