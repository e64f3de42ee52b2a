"""`minigrad.autograd.functional`: Jacobians, Hessians and their products with vectors, as
`torch.autograd.functional` (same names, arguments and result structure).

Each is a few calls of `autograd.grad`:
- vjp, v^T J: one backward pass with v as the output gradient (reverse mode's natural product);
- jvp, J v: the "double-vjp" trick: u -> u^T J is linear in u, so its gradient with respect
  to u, taken at any u, in the direction v, is J v (two backward passes, the first recorded);
- jacobian: one vjp per output element (strategy="reverse-mode") or one forward-mode jvp per
  input element (strategy="forward-mode", see `forward_ad`);
- hessian: the Jacobian of the gradient; vhp and hvp: the vjp of the gradient.

`inputs` is a Tensor or a tuple of Tensors, and `func` returns a Tensor or a tuple; results
mirror that structure, as PyTorch's. Without `create_graph` the results are detached.
"""
from __future__ import annotations

import numpy as np

from ..grad_mode import enable_grad
from . import op as autograd_op
from .gradients import grad


def _tuple(x, what, fn):
    """(is_tuple, x as a tuple of Tensors)."""
    is_tuple = isinstance(x, (tuple, list))
    xs = tuple(x) if is_tuple else (x,)
    for i, t in enumerate(xs):
        if not isinstance(t, autograd_op.Tensor):
            raise TypeError(f"{fn}: the {what} must be Tensors or a tuple of Tensors, got "
                            f"{type(t).__name__} at position {i}")
    return is_tuple, xs


def _prepare(inputs, create_graph):
    """Fresh tensors requiring grad, or (create_graph) views that keep the inputs' graph."""
    return tuple(x.reshape(x.shape) if create_graph and x.requires_grad
                 else x.detach().requires_grad_(True) for x in inputs)


def _finish(xs, create_graph):
    return tuple(None if x is None else (x if create_graph else x.detach()) for x in xs)


def _mirror(is_tuple, xs):
    return xs if is_tuple else xs[0]


def _check_v(v, like, fn):
    if v is None:
        if any(t.numel() != 1 for t in like):
            raise RuntimeError(f"{fn}: the vector v can only be None if the input to the "
                               f"user-provided function is a single Tensor with a single "
                               f"element")
        return tuple(autograd_op.Tensor._wrap(np.ones(t.shape, t.dtype)) for t in like)
    _, vs = _tuple(v, "v", fn)
    if len(vs) != len(like) or any(a.shape != b.shape for a, b in zip(vs, like)):
        raise RuntimeError(f"{fn}: v has shapes {[tuple(a.shape) for a in vs]}, which do not "
                           f"match {[tuple(b.shape) for b in like]}")
    return vs


def _grads(fn, outputs, inputs, vs, create_graph, strict, what="input"):
    """grad(outputs, inputs, vs) with unused inputs as zeros (or an error when strict)."""
    live = [(o, v) for o, v in zip(outputs, vs) if o.requires_grad]
    if not live:
        gs = (None,) * len(inputs)
    else:
        gs = grad([o for o, _ in live], inputs, [v for _, v in live], retain_graph=True,
                  create_graph=create_graph, allow_unused=True)
    return _or_zeros(gs, inputs, strict, _INDEPENDENT_OF_INPUT, fn=fn, what=what)


_INDEPENDENT_OF_INPUT = ("{fn}: the output of the user-provided function is independent of "
                         "{what} {i}. This is not allowed in strict mode.")
_INDEPENDENT_OF_INPUTS = ("{fn}: the gradient of output {i} with respect to the inputs is "
                          "independent of them. This is not allowed in strict mode.")


def _or_zeros(gs, like, strict, message, **names):
    """`gs` with each None (a gradient nothing led to) as zeros shaped like its match in `like`;
    under `strict`, a None is an error: `message` formatted with `names` and its position i."""
    out = []
    for i, (g, x) in enumerate(zip(gs, like)):
        if g is None:
            if strict:
                raise RuntimeError(message.format(i=i, **names))
            g = autograd_op.Tensor._wrap(np.zeros(x.shape, x.dtype))
        out.append(g)
    return tuple(out)


def _call(func, xs, fn):
    with enable_grad():
        out = func(*xs)
    return _tuple(out, "outputs of the user-provided function", fn)


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product with v shaped like the output."""
    is_in, xs = _tuple(inputs, "inputs", "vjp")
    xs = _prepare(xs, create_graph)
    is_out, outs = _call(func, xs, "vjp")
    vs = _check_v(v, outs, "vjp")
    with enable_grad():
        gs = _grads("vjp", outs, xs, vs, create_graph, strict)
    return _mirror(is_out, _finish(outs, create_graph)), _mirror(is_in, _finish(gs, create_graph))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product with v shaped like the inputs."""
    is_in, xs = _tuple(inputs, "inputs", "jvp")
    xs = _prepare(xs, create_graph)
    vs = _check_v(v, xs, "jvp")
    is_out, outs = _call(func, xs, "jvp")
    with enable_grad():
        # u^T J as a function of u (any u: it is linear); its gradient in direction v is J v
        us = tuple(autograd_op.Tensor._wrap(np.zeros(o.shape, o.dtype)).requires_grad_(True)
                   for o in outs)
        gs = _grads("jvp", outs, xs, us, True, strict)
        live = [g for g in gs if g.requires_grad]
        if live:
            jv = grad(live, us, [v for g, v in zip(gs, vs) if g.requires_grad],
                      create_graph=create_graph, allow_unused=True)
        else:
            jv = (None,) * len(us)
        jv = _or_zeros(jv, outs, strict, _INDEPENDENT_OF_INPUTS, fn="jvp")
    return _mirror(is_out, _finish(outs, create_graph)), _mirror(is_out, _finish(jv, create_graph))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """d func / d inputs: for output i and input j a Tensor of shape out_i.shape + in_j.shape
    (nested as PyTorch's: by output, then by input, where those are tuples).

    `vectorize` is accepted and computes the same (one product at a time). "forward-mode"
    computes one column per input element with `forward_ad` (PyTorch requires vectorize=True
    for it, and so does minigrad, to take the same arguments)."""
    if strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError(f'jacobian: expected strategy to be either "forward-mode" or '
                         f'"reverse-mode", got {strategy!r}')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError("jacobian: create_graph=True is not supported with "
                                      "strategy=\"forward-mode\"")
        if not vectorize:
            raise NotImplementedError('jacobian: strategy="forward-mode" is only supported '
                                      'with vectorize=True, as in PyTorch')
        return _forward_jacobian(func, inputs, strict)
    is_in, xs = _tuple(inputs, "inputs", "jacobian")
    xs = _prepare(xs, create_graph)
    is_out, outs = _call(func, xs, "jacobian")
    from ..functional import stack
    table = []
    for o in outs:
        rows = []
        for k in range(o.numel()):  # the k-th row of J: the vjp with the k-th unit vector
            with enable_grad():
                rows.append(_grads("jacobian", (o,), xs, (_unit(o, k),), create_graph, strict))
        cols = []
        for j, x in enumerate(xs):
            if rows:
                with enable_grad():
                    col = stack([r[j] for r in rows]).reshape(o.shape + x.shape)
            else:
                col = autograd_op.Tensor._wrap(np.zeros(o.shape + x.shape, x.dtype))
            cols.append(col)
        table.append(_mirror(is_in, _finish(cols, create_graph)))
    return _mirror(is_out, tuple(table))


def _forward_jacobian(func, inputs, strict):
    """One forward-mode pass per input element k: the tangent e_k (the k-th unit vector) of
    that input gives column k of every output's Jacobian."""
    from . import forward_ad
    is_in, xs = _tuple(inputs, "inputs", "jacobian")
    xs = tuple(x.detach() for x in xs)
    is_out, outs = _call(func, xs, "jacobian")
    columns = [[[] for _ in xs] for _ in outs]  # [output i][input j]: arrays or None
    for j, x in enumerate(xs):
        for k in range(x.numel()):
            with forward_ad.dual_level(), enable_grad():  # forward mode records its ops
                duals = [forward_ad.make_dual(t, _unit(t, k) if i == j else
                                              np.zeros(t.shape, t.dtype))
                         for i, t in enumerate(xs)]
                _, res = _tuple(func(*duals), "outputs of the user-provided function",
                                "jacobian")
                for i, r in enumerate(res):
                    t = forward_ad.unpack_dual(r).tangent
                    columns[i][j].append(None if t is None else t.numpy())
    table = []
    for i, o in enumerate(outs):
        row = []
        for j, x in enumerate(xs):
            cols = columns[i][j]
            if strict and cols and all(c is None for c in cols):
                raise RuntimeError(f"jacobian: the output {i} of the user-provided function is "
                                   f"independent of input {j}. This is not allowed in strict "
                                   f"mode.")
            cols = [np.zeros(o.shape, o.dtype) if c is None else c for c in cols]
            arr = np.stack(cols, -1) if cols else np.zeros(o.shape + (0,), o.dtype)
            row.append(autograd_op.Tensor._wrap(arr.reshape(o.shape + x.shape)))
        table.append(_mirror(is_in, tuple(row)))
    return _mirror(is_out, tuple(table))


def _unit(like, k):
    """The k-th unit vector, shaped like `like`."""
    e = np.zeros(like.numel(), like.dtype)
    e[k] = 1
    return autograd_op.Tensor._wrap(e.reshape(like.shape))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The matrix of second derivatives of a scalar `func`: for inputs i and j a Tensor of
    shape in_i.shape + in_j.shape. It is the Jacobian of the gradient."""
    is_in, xs = _tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy != "reverse-mode":
        raise NotImplementedError('hessian: only outer_jacobian_strategy="reverse-mode" is '
                                  'supported')

    def gradient(*args):
        is_out, outs = _call(func, args, "hessian")
        if len(outs) != 1 or outs[0].numel() != 1:
            raise RuntimeError(f"hessian: the function given to hessian should return a single "
                               f"Tensor with a single element, got shapes "
                               f"{[tuple(o.shape) for o in outs]}")
        ones = (autograd_op.Tensor._wrap(np.ones(outs[0].shape, outs[0].dtype)),)
        with enable_grad():
            return _mirror(is_in, _grads("hessian", outs, args, ones, True, strict))

    return jacobian(gradient, _mirror(is_in, xs), create_graph=create_graph, strict=strict)


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H) for a scalar `func`, v shaped like the inputs."""
    return _hessian_product("vhp", func, inputs, v, create_graph, strict)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v) for a scalar `func`: H is symmetric, so it equals v^T H (PyTorch
    computes it by the double-vjp trick; the values are the same)."""
    return _hessian_product("hvp", func, inputs, v, create_graph, strict)


def _hessian_product(fn, func, inputs, v, create_graph, strict):
    is_in, xs = _tuple(inputs, "inputs", fn)
    xs = _prepare(xs, create_graph)
    vs = _check_v(v, xs, fn)
    is_out, outs = _call(func, xs, fn)
    if is_out or outs[0].numel() != 1:
        raise RuntimeError(f"{fn}: the function given to {fn} should return a single Tensor "
                           f"with a single element, got shapes {[tuple(o.shape) for o in outs]}")
    with enable_grad():
        ones = (autograd_op.Tensor._wrap(np.ones(outs[0].shape, outs[0].dtype)),)
        gs = _grads(fn, outs, xs, ones, True, strict)
        live = [(g, v) for g, v in zip(gs, vs) if g.requires_grad]
        if live:
            hv = grad([g for g, _ in live], xs, [v for _, v in live],
                      create_graph=create_graph, allow_unused=True)
        else:
            hv = (None,) * len(xs)
        hv = _or_zeros(hv, xs, strict, _INDEPENDENT_OF_INPUTS, fn=fn)
    return _finish(outs, create_graph)[0], _mirror(is_in, _finish(hv, create_graph))


__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]
