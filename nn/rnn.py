"""The Elman RNN and the GRU: `RNNCell`, `GRUCell`, and the layers `RNN` and `GRU`.

A recurrent network reads a sequence x_1..x_T one element at a time and carries a hidden state
h_t that summarises everything read so far; the same weights are used at every step.

Elman RNN (`RNNCell`):

    h_t = tanh(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh)

GRU (`GRUCell`), PyTorch's equations, gates stacked in the order r, z, n:

    r_t = sigmoid(W_ir x_t + b_ir + W_hr h_{t-1} + b_hr)          reset gate
    z_t = sigmoid(W_iz x_t + b_iz + W_hz h_{t-1} + b_hz)          update gate
    n_t = tanh(W_in x_t + b_in + r_t * (W_hn h_{t-1} + b_hn))     candidate state
    h_t = (1 - z_t) * n_t + z_t * h_{t-1}

The update gate lets h_t copy h_{t-1} almost unchanged, so gradients survive many steps (the
plain RNN's gradient shrinks or explodes by a factor of W_hh per step).

Every weight and bias is drawn from U(-1/sqrt(H), 1/sqrt(H)) as in PyTorch; the layers keep
PyTorch's parameter names and shapes (`weight_ih` (3H, D), `weight_hh` (3H, H), ...; the
layers add `_l{k}` and `_reverse`), so a `state_dict` loads into `torch.nn.GRU` unchanged.

The layers share their driver (multi-layer, bidirectional, batch_first, packed sequences,
PyTorch's checks) with `LSTM`: see `recurrent.py`. The GRU's gate arithmetic after the two
matmuls is one fused op (`GRUGates`, its backward derived by hand and checked by gradcheck), so
a step records three graph nodes instead of twenty.
"""
from __future__ import annotations

import numpy as np

from minigrad.autograd import Function
from minigrad.ops.elementwise import sigmoid

from . import functional as F
from .recurrent import RNNBase, _CellBase, _keep

__all__ = ["GRU", "GRUCell", "RNN", "RNNCell"]


# --- one step of each cell, on a precomputed input projection gi = W_ih x + b_ih ------------
# The signature every layer's step has (see recurrent.py); RNN and GRU have no projection.

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


class GRUGates(Function):
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


def _rnn_step(nonlinearity, who):
    if nonlinearity not in ("tanh", "relu"):
        raise ValueError(f"{who}: Unknown nonlinearity {nonlinearity!r}. Select from 'tanh' or "
                         "'relu'.")
    return _rnn_tanh_step if nonlinearity == "tanh" else _rnn_relu_step


class RNNCell(_CellBase):
    """One Elman step: h' = act(W_ih x + b_ih + W_hh h + b_hh), act tanh or relu.
    forward(input (B, D) or (D,), hx (B, H) or (H,), zeros if None) -> h' (B, H) or (H,)."""

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(_rnn_step(nonlinearity, "RNNCell"), 1, input_size, hidden_size, bias,
                         device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        return self._run(input, None if hx is None else [hx], 1)[0]


class GRUCell(_CellBase):
    """One GRU step (gates r, z, n): forward(input (B, D) or (D,), hx (B, H) or (H,), zeros if
    None) -> h' (B, H) or (H,)."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(_gru_step, 3, input_size, hidden_size, bias, device, dtype)

    def forward(self, input, hx=None):
        return self._run(input, None if hx is None else [hx], 1)[0]


class RNN(RNNBase):
    """Multi-layer (bidirectional) Elman RNN with tanh or relu, PyTorch's `nn.RNN`:
    forward(input, hx) -> (output, h_n); shapes in `RNNBase.forward`."""

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, device=None, dtype=None):
        step = _rnn_step(nonlinearity, "RNN")
        super().__init__("RNN_" + nonlinearity.upper(), step, 1, input_size, hidden_size,
                         num_layers, bias, batch_first, dropout, bidirectional, 0, device, dtype)
        self.nonlinearity = nonlinearity


class GRU(RNNBase):
    """Multi-layer (bidirectional) GRU, PyTorch's `nn.GRU`: forward(input, hx) ->
    (output, h_n); shapes in `RNNBase.forward`."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None):
        super().__init__("GRU", _gru_step, 3, input_size, hidden_size, num_layers, bias,
                         batch_first, dropout, bidirectional, 0, device, dtype)
