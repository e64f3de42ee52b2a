"""One time step of each recurrent layer: PyTorch's equations, and the fused ops.

A recurrent network reads a sequence x_1..x_T one element at a time and carries a state that
summarises everything read so far; the same weights are used at every step.

Elman RNN (`RNN`, `RNNCell`), with tanh or relu:

    h_t = tanh(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh)       (or relu)

GRU (`GRU`, `GRUCell`), PyTorch's equations, gates stacked in the order r, z, n:

    r_t = sigmoid(W_ir x_t + b_ir + W_hr h_{t-1} + b_hr)          reset gate
    z_t = sigmoid(W_iz x_t + b_iz + W_hz h_{t-1} + b_hz)          update gate
    n_t = tanh(W_in x_t + b_in + r_t * (W_hn h_{t-1} + b_hn))     candidate state
    h_t = (1 - z_t) * n_t + z_t * h_{t-1}

The update gate lets h_t copy h_{t-1} almost unchanged, so gradients survive many steps (the
plain RNN's gradient shrinks or explodes by a factor of W_hh per step).

LSTM (`LSTM`, `LSTMCell`): two states, the cell c_t, changed only by gated addition, and the
output h_t. PyTorch's equations, gates stacked in the weights in the order i, f, g, o:

    i_t = sigmoid(W_ii x_t + b_ii + W_hi h_{t-1} + b_hi)      input gate
    f_t = sigmoid(W_if x_t + b_if + W_hf h_{t-1} + b_hf)      forget gate
    g_t = tanh(W_ig x_t + b_ig + W_hg h_{t-1} + b_hg)         candidate cell
    o_t = sigmoid(W_io x_t + b_io + W_ho h_{t-1} + b_ho)      output gate
    c_t = f_t * c_{t-1} + i_t * g_t
    h_t = o_t * tanh(c_t)              (with proj_size P: h_t = W_hr (o_t * tanh(c_t)), (B, P))

Since c_t = f_t c_{t-1} + ..., the gradient reaches c_{t-1} multiplied by f_t alone, not by a
weight matrix: with the forget gate open it survives hundreds of steps.

Every step function has one signature, (gi, state, weight_hh, bias_hh, weight_hr, keep) ->
new state, where gi (B, G*H) is the step's input projection W_ih x_t + b_ih (the driver in
recurrent.py computes it for all steps at once), state is (h,) or for the LSTM (h, c), and
keep (B, 1) bool is False where the step is padding and the state is carried over.

The gate arithmetic after the two matmuls is one fused op for the GRU (`GRUGates`) and the
LSTM (`LSTMGates`), each backward derived by hand and checked by gradcheck, so a step records
a few graph nodes instead of twenty. Their forward-mode rules (the same chain rule, pushed
forward: tangents of gi, gh and the state in, the new state's out) are registered beside them
for `forward_ad`, and so are their tensor-level rules for `create_graph=True`: the same
backward written with differentiable ops, on the gate values the first-order backward keeps
(rebuilt as ops of the pre-activations with `SigmoidValue` and `TanhValue`), so the gates can
be differentiated twice without keeping anything more.
"""
from __future__ import annotations

import numpy as np

from minigrad.autograd.op import Op
from minigrad.functional import cat, where
from minigrad.graph_rules import constant, rule, saved_input
from minigrad.graph_rules_elementwise import SigmoidValue, TanhValue
from minigrad.jvp_rules import jvp_rule
from minigrad.kernels.reference import sigmoid  # NumPy: an exported GRU or LSTM step is traced op by op

from . import functional as F


def _keep(keep, new, old):
    """`new` where the step is real, `old` where it is padding (keep None: all real)."""
    return new if keep is None else where(keep, new, old)


def _rnn_tanh_step(gi, state, weight_hh, bias_hh, weight_hr=None, keep=None):
    h = state[0]
    return (_keep(keep, (gi + F.linear(h, weight_hh, bias_hh)).tanh(), h),)


def _rnn_relu_step(gi, state, weight_hh, bias_hh, weight_hr=None, keep=None):
    h = state[0]
    return (_keep(keep, (gi + F.linear(h, weight_hh, bias_hh)).relu(), h),)


def _gru_step(gi, state, weight_hh, bias_hh, weight_hr=None, keep=None):
    """gi (B, 3H), h (B, H) -> h' (B, H): one matmul, then the gates in one fused op."""
    h = state[0]
    return (GRUGates.apply(gi, F.linear(h, weight_hh, bias_hh), h, keep=keep),)


class GRUGates(Op):
    """The GRU equations after the two matmuls: (gi, gh, h) -> h', with gi = W_ih x + b_ih and
    gh = W_hh h + b_hh, each (B, 3H) in gate order r, z, n.

    A step runs T times per layer and direction, so its ten elementwise ops are fused into one
    node. The backward is the chain rule through the equations, with a = pre-activations:

        dn = g (1 - z)               da_n = dn (1 - n^2)
        dz = g (h - n)               da_z = dz z (1 - z)
        dr = da_n gh_n               da_r = dr r (1 - r)
        dgi = [da_r, da_z, da_n]     dgh = [da_r, da_z, da_n * r]     dh = g z
    """

    @staticmethod
    def forward(ctx, gi, gh, h, keep=None):
        H = h.shape[-1]
        r = sigmoid(gi[..., :H] + gh[..., :H])
        z = sigmoid(gi[..., H:2 * H] + gh[..., H:2 * H])
        gh_n = gh[..., 2 * H:]
        n = np.tanh(gi[..., 2 * H:] + r * gh_n)
        out = n + z * (h - n)  # = (1 - z) n + z h, one op fewer
        ctx.save_for_backward(r, z, n, gh_n, h)
        ctx.keep = keep
        return out if keep is None else np.where(keep, out, h)

    @staticmethod
    def backward(ctx, g):
        r, z, n, gh_n, h = ctx.saved
        keep = ctx.keep
        g_new = g if keep is None else np.where(keep, g, 0)  # a kept-over step bypasses the gates
        da_n = g_new * (1 - z) * (1 - n * n)
        da_z = g_new * (h - n) * z * (1 - z)
        da_r = da_n * gh_n * r * (1 - r)
        dh = g_new * z if keep is None else g_new * z + np.where(keep, 0, g)
        return (np.concatenate([da_r, da_z, da_n], -1),
                np.concatenate([da_r, da_z, da_n * r], -1), dh)


def _stand_in(ctx, i, shape, dtype, last=None):
    """A stand-in for input i (B, k*H), whose values the node did not keep: zeros, or `last`
    (B, H) in its last block. The value ops read none of its values; only its gradient
    matters, and it reaches input i's node."""
    array = np.zeros(shape, dtype)
    if last is not None:
        array[..., -last.shape[-1]:] = last
    return saved_input(ctx, i, array)


def _masked(keep, g):
    """The gradient reaching the gates: zero at a kept-over (padding) step."""
    return g if keep is None else where(keep, g, constant(np.zeros((), g.dtype)))


def _bypass(keep, g, d):
    """The state's gradient `d` through the gates, plus `g` itself at a kept-over step."""
    return d if keep is None else d + where(keep, constant(np.zeros((), g.dtype)), g)


@rule(GRUGates)
def _gru_gates(ctx, g):
    """The backward above on Tensors: r, z, n rebuilt from their saved values as ops of the
    pre-activations (stand-ins for gi and gh, whose n block of gh carries the saved gh_n)."""
    r, z, n, gh_n, h = ctx.saved
    H = h.shape[-1]
    shape = h.shape[:-1] + (3 * H,)
    gi, gh = _stand_in(ctx, 0, shape, h.dtype), _stand_in(ctx, 1, shape, h.dtype, gh_n)
    a = gi[..., :2 * H] + gh[..., :2 * H]
    r_t = SigmoidValue.apply(a[..., :H], y=r)
    z_t = SigmoidValue.apply(a[..., H:], y=z)
    gh_n_t = gh[..., 2 * H:]
    n_t = TanhValue.apply(gi[..., 2 * H:] + r_t * gh_n_t, y=n)
    h_t = saved_input(ctx, 2, h)
    g_new = _masked(ctx.keep, g)
    da_n = g_new * (1 - z_t) * (1 - n_t * n_t)
    da_z = g_new * (h_t - n_t) * z_t * (1 - z_t)
    da_r = da_n * gh_n_t * r_t * (1 - r_t)
    return (cat([da_r, da_z, da_n], -1), cat([da_r, da_z, da_n * r_t], -1),
            _bypass(ctx.keep, g, g_new * z_t))


def _tangent(t, shape, dtype):
    """An input's tangent, zeros where it has none."""
    return np.zeros(shape, dtype) if t is None else t


@jvp_rule(GRUGates)
def _gru_gates_jvp(ctx, out, tangents):
    r, z, n, gh_n, h = ctx.saved
    H = h.shape[-1]
    t_gi, t_gh = (_tangent(t, h.shape[:-1] + (3 * H,), h.dtype) for t in tangents[:2])
    t_h = _tangent(tangents[2], h.shape, h.dtype)
    t_a = t_gi + t_gh
    dr = r * (1 - r) * t_a[..., :H]
    dz = z * (1 - z) * t_a[..., H:2 * H]
    dn = (1 - n * n) * (t_gi[..., 2 * H:] + dr * gh_n + r * t_gh[..., 2 * H:])
    t_out = (1 - z) * dn + dz * (h - n) + z * t_h
    return t_out if ctx.keep is None else np.where(ctx.keep, t_out, t_h)


class LSTMGates(Op):
    """(gi, gh, c) -> [o * tanh(c'), c'] (B, 2H), with gi = W_ih x + b_ih and gh = W_hh h + b_hh
    each (B, 4H) in gate order i, f, g, o, and c' = f c + i g. Where `keep` (B, 1) is False
    the cell is carried over: c' = c (the h half is replaced by the caller).

    Backward, with dh and dc the two halves of the incoming gradient:

        dc' = dc + dh o (1 - tanh(c')^2)
        da_i = dc' g i (1 - i)      da_f = dc' c f (1 - f)
        da_g = dc' i (1 - g^2)      da_o = dh tanh(c') o (1 - o)
        dgi = dgh = [da_i, da_f, da_g, da_o]       dc = dc' f
    """

    @staticmethod
    def forward(ctx, gi, gh, c, keep=None):
        H = c.shape[-1]
        a = gi + gh
        i, f, o = sigmoid(a[..., :H]), sigmoid(a[..., H:2 * H]), sigmoid(a[..., 3 * H:])
        g = np.tanh(a[..., 2 * H:3 * H])
        c_new = f * c + i * g
        tc = np.tanh(c_new)
        ctx.save_for_backward(i, f, g, o, tc, c)
        ctx.keep = keep
        return np.concatenate([o * tc, c_new if keep is None else np.where(keep, c_new, c)], -1)

    @staticmethod
    def backward(ctx, grad):
        i, f, g, o, tc, c = ctx.saved
        keep, H = ctx.keep, c.shape[-1]
        dh, dc_out = grad[..., :H], grad[..., H:]
        dc_new = dc_out if keep is None else np.where(keep, dc_out, 0)
        dc_new = dc_new + dh * o * (1 - tc * tc)
        da = np.concatenate([dc_new * g * i * (1 - i), dc_new * c * f * (1 - f),
                             dc_new * i * (1 - g * g), dh * tc * o * (1 - o)], -1)
        dc = dc_new * f if keep is None else dc_new * f + np.where(keep, 0, dc_out)
        # gi and gh get equal gradients; two arrays, since the engine may keep either as a .grad
        return da, (da.copy() if all(ctx.needs_input_grad[:2]) else da), dc


@rule(LSTMGates)
def _lstm_gates(ctx, grad):
    """The backward above on Tensors: the gates and tanh(c') rebuilt from their saved values
    as ops of the pre-activations (stand-ins for gi and gh) and of c."""
    i, f, g, o, tc, c = ctx.saved
    H = c.shape[-1]
    shape = c.shape[:-1] + (4 * H,)
    a = _stand_in(ctx, 0, shape, c.dtype) + _stand_in(ctx, 1, shape, c.dtype)  # a = gi + gh
    i_t, f_t = SigmoidValue.apply(a[..., :H], y=i), SigmoidValue.apply(a[..., H:2 * H], y=f)
    g_t = TanhValue.apply(a[..., 2 * H:3 * H], y=g)
    o_t = SigmoidValue.apply(a[..., 3 * H:], y=o)
    c_t = saved_input(ctx, 2, c)
    tc_t = TanhValue.apply(f_t * c_t + i_t * g_t, y=tc)
    dh, dc_out = grad[..., :H], grad[..., H:]
    dc_new = _masked(ctx.keep, dc_out) + dh * o_t * (1 - tc_t * tc_t)
    da = cat([dc_new * g_t * i_t * (1 - i_t), dc_new * c_t * f_t * (1 - f_t),
              dc_new * i_t * (1 - g_t * g_t), dh * tc_t * o_t * (1 - o_t)], -1)
    return da, da, _bypass(ctx.keep, dc_out, dc_new * f_t)


@jvp_rule(LSTMGates)
def _lstm_gates_jvp(ctx, out, tangents):
    i, f, g, o, tc, c = ctx.saved
    H = c.shape[-1]
    t_a = sum(_tangent(t, c.shape[:-1] + (4 * H,), c.dtype) for t in tangents[:2])
    t_c = _tangent(tangents[2], c.shape, c.dtype)
    di, df = i * (1 - i) * t_a[..., :H], f * (1 - f) * t_a[..., H:2 * H]
    dg, do = (1 - g * g) * t_a[..., 2 * H:3 * H], o * (1 - o) * t_a[..., 3 * H:]
    dc_new = df * c + f * t_c + di * g + i * dg
    dh = do * tc + o * (1 - tc * tc) * dc_new
    return np.concatenate([dh, dc_new if ctx.keep is None else np.where(ctx.keep, dc_new, t_c)],
                          -1)


def _lstm_step(gi, state, weight_hh, bias_hh, weight_hr=None, keep=None):
    """gi (B, 4H), state (h (B, H_out), c (B, H)) -> (h', c')."""
    h, c = state
    H = c.shape[-1]
    hc = LSTMGates.apply(gi, F.linear(h, weight_hh, bias_hh), c, keep=keep)
    h_new, c_new = hc[..., :H], hc[..., H:]
    if weight_hr is not None:
        h_new = F.linear(h_new, weight_hr)
    return _keep(keep, h_new, h), c_new


# mode (PyTorch's name) -> (step function, number of gate blocks stacked in the weights)
STEPS = {"RNN_TANH": (_rnn_tanh_step, 1), "RNN_RELU": (_rnn_relu_step, 1),
         "GRU": (_gru_step, 3), "LSTM": (_lstm_step, 4)}
