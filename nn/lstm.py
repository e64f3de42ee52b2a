"""Long short-term memory: `LSTMCell` and the multi-layer, bidirectional `LSTM`, PyTorch's.

An LSTM carries two states: the cell c_t, changed only by gated addition, and the output
h_t. PyTorch's equations, gates stacked in the weights in the order i, f, g, o:

    i_t = sigmoid(W_ii x_t + b_ii + W_hi h_{t-1} + b_hi)      input gate
    f_t = sigmoid(W_if x_t + b_if + W_hf h_{t-1} + b_hf)      forget gate
    g_t = tanh(W_ig x_t + b_ig + W_hg h_{t-1} + b_hg)         candidate cell
    o_t = sigmoid(W_io x_t + b_io + W_ho h_{t-1} + b_ho)      output gate
    c_t = f_t * c_{t-1} + i_t * g_t
    h_t = o_t * tanh(c_t)              (with proj_size P: h_t = W_hr (o_t * tanh(c_t)), (B, P))

Since c_t = f_t c_{t-1} + ..., the gradient reaches c_{t-1} multiplied by f_t alone, not by a
weight matrix: with the forget gate open it survives hundreds of steps.

Parameters as PyTorch's: `weight_ih` (4H, D), `weight_hh` (4H, H) (or (4H, P)), `bias_ih`,
`bias_hh` (4H,), `weight_hr` (P, H) with proj_size; the layer adds `_l{k}` and `_reverse`.

The gate arithmetic after the two matmuls is one fused op (`LSTMGates`, backward by hand,
checked by gradcheck), so a step records a matmul, the gates and two slices.
"""
from __future__ import annotations

import numpy as np

from minigrad.autograd import Function
from minigrad.ops.elementwise import sigmoid

from . import functional as F
from .recurrent import RNNBase, _CellBase, _keep

__all__ = ["LSTM", "LSTMCell"]


class LSTMGates(Function):
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


def _lstm_step(gi, state, weight_hh, bias_hh, weight_hr=None, keep=None):
    """gi (B, 4H), state (h (B, H_out), c (B, H)) -> (h', c')."""
    h, c = state
    H = c.shape[-1]
    hc = LSTMGates.apply(gi, F.linear(h, weight_hh, bias_hh), c, keep=keep)
    h_new, c_new = hc[..., :H], hc[..., H:]
    if weight_hr is not None:
        h_new = F.linear(h_new, weight_hr)
    return _keep(keep, h_new, h), c_new


class LSTMCell(_CellBase):
    """One LSTM step: forward(input (B, D) or (D,), hx=(h (B, H), c (B, H)) or unbatched
    (H,) each, zeros if None) -> (h', c')."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(_lstm_step, 4, input_size, hidden_size, bias, device, dtype)

    def forward(self, input, hx=None):
        if hx is not None and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
            raise TypeError(f"LSTMCell: hx must be a tuple (h, c), got {type(hx).__name__}")
        return tuple(self._run(input, hx, 2))


class LSTM(RNNBase):
    """Multi-layer (bidirectional) LSTM, PyTorch's `nn.LSTM`: forward(input, (h_0, c_0)) ->
    (output, (h_n, c_n)); shapes in `RNNBase.forward`. With proj_size P > 0 the output and h
    are (..., P), c stays (..., H)."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__("LSTM", _lstm_step, 4, input_size, hidden_size, num_layers, bias,
                         batch_first, dropout, bidirectional, proj_size, device, dtype)
