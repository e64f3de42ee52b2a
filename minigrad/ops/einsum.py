"""`einsum`: products and sums written as index equations, e.g. "bhqd,bhkd->bhqk".

The gradient of one operand is itself an einsum: the incoming gradient (with the output's
indices) contracted with the other operands, producing that operand's indices. An index that
occurs in no other operand and not in the output was summed inside the operand alone, so its
gradient is the same for every position along it and is broadcast back.
"""
from __future__ import annotations

import string

import numpy as np

from ..autograd.op import Op
from ..errors import InvalidValueError, ShapeError
from ._util import conj_slope


def parse(equation, ndims):
    """(input index strings, output index string) with every `...` spelled out as letters."""
    eq = equation.replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    ins = lhs.split(",")
    if len(ins) != len(ndims):
        raise InvalidValueError(f"einsum: the equation {equation!r} names {len(ins)} operands but "
                                f"{len(ndims)} were given")
    for s in ins + [out]:
        bad = set(s.replace("...", "")) - set(string.ascii_letters)
        if bad:
            raise InvalidValueError(f"einsum: invalid character(s) {sorted(bad)} in {equation!r}")
    n_ell = [nd - len(s.replace("...", "")) if "..." in s else 0 for s, nd in zip(ins, ndims)]
    free = [c for c in string.ascii_letters if c not in eq]
    ell = "".join(free[:max(n_ell + [0])])
    spelled = []
    for i, (s, nd) in enumerate(zip(ins, ndims)):
        s = s.replace("...", ell[len(ell) - n_ell[i]:] if n_ell[i] else "")
        if len(s) != nd or n_ell[i] < 0:
            raise ShapeError(f"einsum: operand {i} has {nd} dims but {ins[i]!r} in "
                             f"{equation!r} names {len(s)}")
        spelled.append(s)
    if not arrow:  # implicit output: broadcast dims, then the indices used once, sorted
        joined = "".join(spelled)
        out = ell + "".join(sorted(c for c in set(joined) if joined.count(c) == 1 and c not in ell))
    else:
        out = out.replace("...", ell)
    return spelled, out


class Einsum(Op):
    complex_aware = True

    @staticmethod
    def forward(ctx, *operands, equation=""):
        ins, out = parse(equation, [np.ndim(o) for o in operands])
        ctx.ins, ctx.out, ctx.shapes = ins, out, [np.shape(o) for o in operands]
        ctx.save_for_backward(*operands)
        try:
            return np.asarray(np.einsum(f"{','.join(ins)}->{out}", *operands,
                                        optimize=len(operands) > 2))
        except ValueError as e:
            shapes = ", ".join(str(s) for s in ctx.shapes)
            raise ShapeError(f"einsum: {equation!r} does not fit operands of shapes {shapes} "
                             f"({e})") from None

    @staticmethod
    def backward(ctx, g):
        grads = [None] * len(ctx.ins)
        for i, equation, others, summed in gradient_plans(ctx):
            # multilinear: a complex operand's gradient takes the others' conjugates
            gi = np.einsum(equation, g, *[conj_slope(ctx.saved[j]) for j in others],
                           optimize=len(others) > 1)
            gi, shape = np.expand_dims(gi, summed), ctx.shapes[i]
            for ax, n in enumerate(shape):  # size-1 dims that `...` broadcast
                if n == 1 and gi.shape[ax] != 1:
                    gi = gi.sum(axis=ax, keepdims=True)
            grads[i] = np.ascontiguousarray(np.broadcast_to(gi, shape))
        return tuple(grads)


def gradient_plans(ctx):
    """How each needed operand's gradient is computed, the same with arrays or with recorded
    Tensors: (i, the einsum equation over g and the other operands, those operands' positions,
    the axes of operand i to put back as size 1 because their index is summed inside it alone)."""
    ins, out = ctx.ins, ctx.out
    for i, target in enumerate(ins):
        if not ctx.needs_input_grad[i]:
            continue
        if len(set(target)) != len(target):
            raise NotImplementedError(f"einsum: no gradient for an operand with a repeated "
                                      f"index ({target!r}, a diagonal)")
        others = [j for j in range(len(ins)) if j != i]
        avail = set(out).union(*[set(ins[j]) for j in others])
        keep = "".join(c for c in target if c in avail)
        subs = ",".join([out] + [ins[j] for j in others])
        yield (i, f"{subs}->{keep}", others,
               tuple(pos for pos, c in enumerate(target) if c not in avail))
