"""`zeta(x, q)`, Hurwitz's zeta function sum_k (q + k)^-x for real x and q (Riemann's at
q = 1), as torch.special.zeta: elementwise and broadcast, either argument a number.

It follows the algorithm PyTorch's follows (Cephes' zeta), vectorised, so that the two agree
to rounding and at the edges: inf at x = 1 and at q = 0, -1, -2, ...; NaN for x < 1 and for a
non-integer x with q < 0 (NaN at q = +inf too); otherwise the sum's terms up to q + k > 9
(at least nine), stopped once a term is below 2^-53 of the sum, then Euler-Maclaurin's tail
with the Bernoulli numbers' coefficients below.
Computed in float64 and rounded to the operands' dtype (integers give the default float).

Its gradient in q is -x zeta(x + 1, q); as in PyTorch, there is none in x: backward raises
where x requires grad.
"""
from __future__ import annotations

import numpy as np

from . import dtypes
from .autograd.op import Op
from .graph_rules import rule, saved_input
from .error_functions import _no_half
from .ops._sloped import with_numbers

__all__ = ["zeta"]

_MACHEP = 1.11022302462515654042e-16
# (2k)! / B_2k, k = 1..12
_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
      -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
      1.8152105401943546773e17, -7.1661652561756670113e18)


def zeta_array(x, q):
    """zeta(x, q) of two float64 arrays of one shape."""
    out = np.full(x.shape, np.nan)
    with np.errstate(all="ignore"):
        pole = (x == 1) | ((q <= 0) & (q == np.floor(q)) & (x > 1))
        out[pole] = np.inf
        ok = (x > 1) & ~pole & ~((q < 0) & (x != np.floor(x)))
        out[ok] = _euler_maclaurin(x[ok], q[ok])
    return out


def _euler_maclaurin(x, q):
    s, a, b = q ** -x, q.copy(), np.zeros_like(q)
    live, tail, i = np.ones(q.shape, bool), np.zeros(q.shape, bool), 0
    while live.any():  # the direct sum, all in step (i is common to those still summing)
        step = live & ((i < 9) | (a <= 9.0))
        tail |= live & ~step  # out of terms without converging: on to the tail
        live = step
        i += 1
        a[live] += 1.0
        b[live] = a[live] ** -x[live]
        s[live] += b[live]
        live &= ~(np.abs(b / s) < _MACHEP)
    w = a[tail]
    xs, bs, ss = x[tail], b[tail], s[tail]
    ss = ss + bs * w / (xs - 1) - 0.5 * bs
    fac, k = np.ones_like(w), 0.0
    going = np.ones(w.shape, bool)
    for coefficient in _A:
        fac = np.where(going, fac * (xs + k), fac)
        bs = np.where(going, bs / w, bs)
        t = fac * bs / coefficient
        ss = np.where(going, ss + t, ss)
        going &= ~(np.abs(t / ss) < _MACHEP)
        k += 1.0
        fac = np.where(going, fac * (xs + k), fac)
        bs = np.where(going, bs / w, bs)
        k += 1.0
    s[tail] = ss
    return s


def _zeta(x, q):
    """zeta of two arrays broadcast together, in float64, rounded to their dtype."""
    shape = np.broadcast_shapes(x.shape, q.shape)
    xs, qs = (np.broadcast_to(v, shape).astype(np.float64) for v in (x, q))
    return zeta_array(xs, qs).astype(np.result_type(x, q), copy=False)


class Zeta(Op):
    @staticmethod
    def forward(ctx, x, q):
        ctx.save_for_backward(x, q)
        return _zeta(x, q)

    @staticmethod
    def backward(ctx, g):
        x, q = ctx.saved
        if ctx.needs_input_grad[0]:
            raise NotImplementedError("the derivative for 'zeta' is not implemented.")
        return None, g * -x * _zeta(x + 1, q)


@rule(Zeta)
def _zeta_rule(ctx, g):
    if ctx.needs_input_grad[0]:
        raise NotImplementedError("the derivative for 'zeta' is not implemented.")
    x, q = (saved_input(ctx, i, a) for i, a in enumerate(ctx.saved))
    return None, g * -x * Zeta.apply(x + 1, q)


def zeta(input, other):
    """Hurwitz's zeta(x, q) = sum_k (q + k)^-x, elementwise and broadcast (input is x, other
    is q; either may be a number, not both)."""
    from .tensor_operators import binary
    _no_half("zeta", np.empty(0, dtypes.computation_dtype((input, other), "zeta", True)))
    return binary(Zeta, "zeta", *with_numbers("zeta", input, other), floats=True)
