"""Whole Jacobians and Hessians as functions: `jacrev`, `jacfwd` and `hessian`, as in
`torch.func`.

For an output o and a differentiated argument x the Jacobian has shape o.shape + x.shape.
jacrev builds it row by row, one vector-Jacobian product per output element (one backward
pass each); jacfwd column by column, one Jacobian-vector product per input element (see
`forward`). Both give the same numbers; which is cheaper depends on whether the function has
fewer outputs or inputs. PyTorch batches the products with vmap; minigrad runs them one after
the other, so `chunk_size` changes nothing but is checked and accepted.

The result nests as PyTorch's: by the output's structure, then by argnums (a tuple when it is
a tuple), then by each argument's structure (a dict of parameters gives a dict).
"""
from __future__ import annotations

import functools

import minigrad

from minigrad.autograd.function import running_transform

from .forward import Linearization
from .pytree import tree_unflatten
from .randomness import Draws, check_randomness
from .reverse import _output_leaves, _release_tensors, _track_args
from .tracking import Level, check_argnums, gradients, split_aux


def _setup(func, argnums, has_aux, args, kwargs, fn, kinds):
    nums = check_argnums(argnums, len(args))
    level = Level()
    args, flat, specs = _track_args(level, args, nums)
    with minigrad.enable_grad(), running_transform(*kinds):  # what PyTorch's would run
        output = func(*args, **kwargs)
    output, aux = split_aux(output, has_aux, fn)
    outs, out_spec = _output_leaves(output, fn)
    return level, flat, specs, outs, out_spec, aux


def _assemble(table, flat, specs, argnums, out_spec):
    """table[i][j]: the Jacobian of output i by flat input j -> PyTorch's nesting."""
    per_output = []
    for row in table:
        per_arg, at = [], 0
        for leaves, spec in zip(flat, specs):
            per_arg.append(tree_unflatten(row[at:at + len(leaves)], spec))
            at += len(leaves)
        per_output.append(per_arg[0] if isinstance(argnums, int) else tuple(per_arg))
    return tree_unflatten(per_output, out_spec)


def _block(parts, o, x, dim):
    """The stacked rows (dim 0) or columns (dim -1) as a Jacobian of shape o + x."""
    if not parts:
        return minigrad.zeros(tuple(o.shape) + tuple(x.shape), dtype=x.dtype)
    with minigrad.enable_grad():
        return minigrad.stack(parts, dim=dim).reshape(tuple(o.shape) + tuple(x.shape))


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The Jacobian of `func` with respect to the arguments `argnums` names, by reverse mode."""
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        level, flat, specs, outs, out_spec, aux = _setup(func, argnums, has_aux, args, kwargs,
                                                         "vjp(f, *primals)", ("grad",))
        inputs = [x for leaves in flat for x in leaves]
        table = []
        for o in outs:
            eye = minigrad.eye(o.numel(), dtype=o.dtype)
            rows = [gradients(level, [o], inputs, [eye[k].reshape(o.shape)], True)
                    for k in range(o.numel())]
            table.append([_block([r[j] for r in rows], o, x, 0) for j, x in enumerate(inputs)])
        jac = _assemble(table, flat, specs, argnums, out_spec)
        if has_aux:
            return jac, _release_tensors(level, aux, "vjp(f, *primals)")
        return jac
    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian of `func` with respect to the arguments `argnums` names, by forward mode.
    `randomness` is vmap's (PyTorch vmaps the products): 'error' refuses a random op."""
    check_randomness(randomness)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        draws = Draws(randomness)
        fn = "jvp(f, primals, tangents)"
        level, flat, specs, outs, out_spec, aux = _setup(func, argnums, has_aux, args, kwargs,
                                                         fn, ("vmap", "jvp"))
        draws.after()
        inputs = [x for leaves in flat for x in leaves]
        lin = Linearization(level, inputs, outs)
        zeros = [minigrad.zeros_like(x) for x in inputs]
        columns = [[[] for _ in inputs] for _ in outs]  # [output][input]: J e_k per k
        for j, x in enumerate(inputs):
            eye = minigrad.eye(x.numel(), dtype=x.dtype)
            for k in range(x.numel()):
                tangents = zeros[:j] + [eye[k].reshape(x.shape)] + zeros[j + 1:]
                for i, col in enumerate(lin.apply(tangents)):
                    columns[i][j].append(col)
        table = [[_block(columns[i][j], o, x, -1) for j, x in enumerate(inputs)]
                 for i, o in enumerate(outs)]
        jac = _assemble(table, flat, specs, argnums, out_spec)
        if has_aux:
            return jac, _release_tensors(level, aux, fn)
        return jac
    return wrapper


def hessian(func, argnums=0):
    """The Hessian of a scalar `func`: jacfwd of jacrev, as PyTorch computes it."""
    return jacfwd(jacrev(func, argnums), argnums)


__all__ = ["hessian", "jacfwd", "jacrev"]
