"""Forward-mode products as functions: `jvp` and `linearize`, as in `torch.func`.

    jvp(f, (x,), (t,))      (f(x), J t): the Jacobian-vector product
    linearize(f, x)         (f(x), jvp_fn) with jvp_fn(t) = J t, callable many times

J t is computed by the "double-vjp" trick rather than with dual numbers: u -> u^T J is linear
in u, so the gradient of u^T J with respect to u, taken at u = 0 in the direction t, is J t.
That is one backward pass recorded (u^T J as a function of u) and one more per tangent, on
the same tape as everything else, so jvp composes with every other transform here (grad of a
jvp, jacfwd of a jacrev) and its results equal PyTorch's forward-mode ones.
"""
from __future__ import annotations

import minigrad

from minigrad.autograd.function import running_transform

from .pytree import spec_repr, tree_flatten, tree_unflatten
from .reverse import _output_leaves, _release_tensors, _track_args
from .tracking import Level, split_aux


class Linearization:
    """f's outputs at tracked inputs, with the recorded map u -> u^T J that gives J t."""

    def __init__(self, level, inputs, outs):
        self.level, self.inputs, self.outs = level, inputs, outs
        self.us = [None] * len(outs)
        live = [i for i, o in enumerate(outs) if o.requires_grad]
        self.vjps = [None] * len(inputs)
        if not live:
            return
        with minigrad.enable_grad():
            for i in live:
                self.us[i] = level.track(minigrad.zeros_like(outs[i]))
            gs = minigrad.autograd.grad([outs[i] for i in live], inputs,
                                        [self.us[i] for i in live], retain_graph=True,
                                        create_graph=True, allow_unused=True)
        self.vjps = [g if g is not None and g.requires_grad else None for g in gs]

    def apply(self, tangents):
        """J t for tangents t (one per input): one tensor per output."""
        pairs = [(g, t) for g, t in zip(self.vjps, tangents) if g is not None]
        us = [u for u in self.us if u is not None]
        if not pairs or not us:
            return [minigrad.zeros_like(o) for o in self.outs]
        level = self.level
        create = any(level.reaches_outside(g) or level.reaches_outside(t) for g, t in pairs)
        with minigrad.enable_grad():
            jv = minigrad.autograd.grad([g for g, _ in pairs], us, [t for _, t in pairs],
                                        retain_graph=True, create_graph=create,
                                        allow_unused=True)
        jv = iter(jv)
        return [minigrad.zeros_like(o) if u is None else _zeros_if_none(next(jv), o, level)
                for u, o in zip(self.us, self.outs)]


def _zeros_if_none(t, like, level):
    return minigrad.zeros_like(like) if t is None else level.release(t)


def _check_tangents(primals, tangents, fn="jvp(f, primals, tangents)"):
    xs, x_spec = tree_flatten(tuple(primals))
    ts, t_spec = tree_flatten(tuple(tangents))
    if x_spec != t_spec:
        raise RuntimeError(f"{fn}: Expected primals and tangents to have the same python "
                           f"structure. For example, if primals is a tuple of 3 tensors, "
                           f"tangents also must be. Got primals with structure "
                           f"{spec_repr(x_spec)} and tangents with structure "
                           f"{spec_repr(t_spec)}")
    for x, t in zip(xs, ts):
        if not isinstance(t, minigrad.Tensor):
            raise RuntimeError(f"{fn}: Expected tangents to only contain Tensors, got {type(t)}")
        if isinstance(x, minigrad.Tensor) and t.shape != x.shape:
            raise RuntimeError(f"Trying to set a forward gradient that has a different size than "
                               f"that of the original Tensor, this is not supported. Tensor is "
                               f"of size {list(x.shape)} while the given forward gradient is of "
                               f"size {list(t.shape)}.")
    return ts


def _run(func, primals, has_aux, fn):
    """(level, flat tracked inputs, Linearization, output spec, aux) of func at primals."""
    level = Level()
    args, flat, _ = _track_args(level, primals, range(len(primals)))
    with minigrad.enable_grad(), running_transform("jvp"):
        output = func(*args)
    output, aux = split_aux(output, has_aux, fn)
    outs, out_spec = _output_leaves(output, fn)
    inputs = [x for leaves in flat for x in leaves]
    return level, Linearization(level, inputs, outs), out_spec, aux


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """(func(*primals), J tangents[, aux]); primals and tangents are tuples of the same
    structure, and the product has the output's structure."""
    fn = "jvp(f, primals, tangents)"
    if not isinstance(primals, (tuple, list)):
        raise RuntimeError(f"{fn}: Expected primals to be a tuple. E.g. it should be valid to "
                           f"call f(*primals).")
    if not isinstance(tangents, (tuple, list)):
        raise RuntimeError(f"{fn}: Expected tangents to be a tuple. E.g. it should be valid to "
                           f"call f(*tangents).")
    if strict:
        raise RuntimeError(f"{fn}: strict=True is not implemented")
    ts = _check_tangents(primals, tangents)
    level, lin, out_spec, aux = _run(func, tuple(primals), has_aux, fn)
    value = tree_unflatten([level.release(o) for o in lin.outs], out_spec)
    jv = tree_unflatten(lin.apply(ts), out_spec)
    if has_aux:
        return value, jv, _release_tensors(level, aux, fn)
    return value, jv


def linearize(func, *primals):
    """(func(*primals), jvp_fn): jvp_fn(*tangents) = J tangents, from one recorded pass."""
    level, lin, out_spec, _ = _run(func, primals, False, "linearize(f, *primals)")

    def jvp_fn(*tangents):
        ts = _check_tangents(primals, tangents, "linearize: jvp_fn(*tangents)")
        return tree_unflatten(lin.apply(ts), out_spec)

    return tree_unflatten([level.release(o) for o in lin.outs], out_spec), jvp_fn


__all__ = ["jvp", "linearize"]
