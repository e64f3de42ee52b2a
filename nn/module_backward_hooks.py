"""The full backward hooks of one call of a module: the joint identity node on each side.

`register_full_backward_hook` and `register_full_backward_pre_hook` (module_hooks.py) see the
gradients of a call's tensor outputs (`grad_output`) and of its tensor inputs (`grad_input`),
both tuples with None where there is none, and may return replacements. So that a hook sees
every gradient of a side at once, as PyTorch's BackwardHookFunction does, the floating tensors
of each side are packed into one vector (N,), passed through one identity node whose backward
runs the hooks, and unpacked again (`_Pack`, `_JointIdentity`, `_Unpack`); `BackwardHooks` is
what module_hooks.call_with_hooks wraps a call's inputs and outputs with.
"""
from __future__ import annotations

import warnings

import numpy as np

import minigrad
from minigrad.autograd.op import Op
from minigrad.grad_mode import is_grad_enabled
from minigrad.graph_rules import rule
from minigrad.tensor import Tensor

class _Pack(Op):
    """The floating tensors of one side of a call, raveled into one vector: (N,)."""

    @staticmethod
    def forward(ctx, *arrays, dropped):
        ctx.shapes, ctx.dropped = [a.shape for a in arrays], dropped
        dtype = np.result_type(*arrays)
        return np.concatenate([a.ravel().astype(dtype, copy=False) for a in arrays])

    @staticmethod
    def backward(ctx, grad):
        bounds = np.cumsum([0] + [int(np.prod(s)) for s in ctx.shapes])
        # a tensor whose gradient a hook replaced by None gets none, as in PyTorch
        return tuple(None if k in ctx.dropped else grad[a:b].reshape(s)
                     for k, (a, b, s) in enumerate(zip(bounds, bounds[1:], ctx.shapes)))


class _JointIdentity(Op):
    """The vector of `_Pack` passed on unchanged; its backward hands the whole gradient of the
    side to `on_grad`, which may replace it (the hooks run there)."""

    @staticmethod
    def forward(ctx, flat, on_grad):
        ctx.on_grad = on_grad
        return flat.copy()

    @staticmethod
    def backward(ctx, grad):
        return ctx.on_grad(grad)


class _Unpack(Op):
    """Tensor `index` of the side, out of the joint vector: a new tensor, not a view. Its
    backward notes that this tensor received a gradient (None is passed on for the others)."""

    @staticmethod
    def forward(ctx, flat, start, shape, dtype, index, reached):
        ctx.size, ctx.start, ctx.index, ctx.reached = flat.size, start, index, reached
        stop = start + int(np.prod(shape))
        return flat[start:stop].reshape(shape).astype(dtype)

    @staticmethod
    def backward(ctx, grad):
        ctx.reached.add(ctx.index)
        full = np.zeros(ctx.size, grad.dtype)
        full[ctx.start:ctx.start + grad.size] = grad.ravel()
        return full


# the same three backward passes on tensors, for create_graph=True (gradient penalties through
# hooked modules). The hooks see the gradients' values; what they change is added as a
# constant, so a gradient the hooks leave alone stays differentiable.

@rule(_Pack)
def _pack_rule(ctx, g):
    bounds = np.cumsum([0] + [int(np.prod(s)) for s in ctx.shapes])
    return tuple(None if k in ctx.dropped else g[a:b].reshape(s)
                 for k, (a, b, s) in enumerate(zip(bounds, bounds[1:], ctx.shapes)))


@rule(_JointIdentity)
def _joint_rule(ctx, g):
    new = ctx.on_grad(g._array)
    return g if new is g._array else g + Tensor._wrap(new - g._array)


@rule(_Unpack)
def _unpack_rule(ctx, g):
    ctx.reached.add(ctx.index)
    flat = g.reshape(-1)
    before = minigrad.zeros(ctx.start, dtype=flat.dtype)
    after = minigrad.zeros(ctx.size - ctx.start - flat.numel(), dtype=flat.dtype)
    return minigrad.cat([before, flat, after])


class _Side:
    """One side (inputs or outputs) of a hooked call: which positions are floating tensors
    that pass through the joint node, and where each lies in the joint vector."""

    def __init__(self, values, on_grad):
        self.n = len(values)
        self.index = [i for i, v in enumerate(values) if isinstance(v, Tensor)
                      and v._array.dtype.kind == "f"]
        self.wrapped = is_grad_enabled() and any(values[i].requires_grad for i in self.index)
        self.reached, self.dropped = set(), set()
        if not self.wrapped:
            self.values = tuple(values)
            return
        tensors = [values[i] for i in self.index]
        joint = _JointIdentity.apply(_Pack.apply(*tensors, dropped=self.dropped),
                                     on_grad=on_grad)
        self.starts = np.cumsum([0] + [t.numel() for t in tensors])
        out = list(values)
        for k, (i, t) in enumerate(zip(self.index, tensors)):
            out[i] = _Unpack.apply(joint, start=int(self.starts[k]), shape=t.shape,
                                   dtype=t._array.dtype, index=k, reached=self.reached)
        self.shapes = [t.shape for t in tensors]
        self.requires_grad = [t.requires_grad for t in tensors]
        self.values = tuple(out)

    def split(self, flat, zeros):
        """The side's gradients as a tuple in positional order, None where none arrived
        (zeros instead, with `zeros`, for a tensor that requires grad: PyTorch's
        grad_input)."""
        res = [None] * self.n
        for k, i in enumerate(self.index):
            if k in self.reached or (zeros and self.requires_grad[k]):
                a = self.starts[k]
                res[i] = Tensor._wrap(flat[a:a + int(np.prod(self.shapes[k]))]
                                      .reshape(self.shapes[k]).copy())
        self.reached.clear()
        return tuple(res)

    def join(self, grads, flat):
        """The joint gradient with the side's tensors' gradients replaced by `grads`."""
        flat = flat.copy()
        self.dropped.clear()
        for k, i in enumerate(self.index):
            a, shape = self.starts[k], self.shapes[k]
            g = grads[i]
            if g is None:
                self.dropped.add(k)
            flat[a:a + int(np.prod(shape))] = 0 if g is None else np.broadcast_to(
                np.asarray(g._array if isinstance(g, Tensor) else g), shape).ravel()
        return flat


class BackwardHooks:
    """The full backward hooks and pre-hooks of one call of `module` (PyTorch's BackwardHook)."""

    def __init__(self, module, hooks, pre_hooks):
        self.module, self.hooks, self.pre_hooks = module, hooks, pre_hooks
        self.inputs = self.outputs = self.grad_outputs = None

    def wrap_inputs(self, args):
        self.inputs = _Side(args, self._on_grad_input)
        return self.inputs.values

    def wrap_outputs(self, result):
        single = not isinstance(result, tuple)
        self.outputs = _Side((result,) if single else result, self._on_grad_output)
        return self.outputs.values[0] if single else self.outputs.values

    def _on_grad_output(self, flat):
        self.grad_outputs = self.outputs.split(flat, zeros=False)
        for hook in self.pre_hooks:
            new = hook(self.module, self.grad_outputs)
            if new is None:
                continue
            if len(new) != len(self.grad_outputs):
                raise RuntimeError(f"Backward pre hook returned an invalid number of "
                                   f"grad_output, got {len(new)}, but expected "
                                   f"{len(self.grad_outputs)}")
            self.grad_outputs = tuple(new)
        if not self.inputs.wrapped and self.hooks:
            # nothing reaches the inputs' node: the hooks run now, with no gradient to return
            warnings.warn("Full backward hook is firing when gradients are computed with "
                          "respect to module outputs since no inputs require gradients. See "
                          "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                          "#torch.nn.Module.register_full_backward_hook for more details.")
            grad_inputs = (None,) * self.inputs.n
            for hook in self.hooks:
                res = hook(self.module, grad_inputs, self.grad_outputs)
                if res is not None and not (isinstance(res, tuple)
                                            and all(r is None for r in res)):
                    raise RuntimeError("Backward hook for Modules where no input requires "
                                       "gradient should always return None or None for all "
                                       "gradients.")
        return self.outputs.join(self.grad_outputs, flat)

    def _on_grad_input(self, flat):
        if self.grad_outputs is None:
            return flat  # a gradient that reached the inputs without passing the outputs
        res = self.inputs.split(flat, zeros=True)
        for hook in self.hooks:
            out = hook(self.module, res, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(res):
                raise RuntimeError(f"Backward hook returned an invalid number of grad_input, "
                                   f"got {len(out)}, but expected {len(res)}")
            res = tuple(out)
        self.grad_outputs = None
        return self.inputs.join(res, flat)
