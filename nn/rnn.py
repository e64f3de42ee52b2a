"""Recurrent layers: `RNNCell`, `GRUCell`, and the multi-layer, bidirectional `RNN` and `GRU`.

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

Efficiency: W_ih x_t does not depend on the hidden state, so a layer computes it for all T
steps with ONE matmul before the loop; only the W_hh h_{t-1} part must run step by step. The
GRU's gate arithmetic after the two matmuls is one fused op (`GRUGates`, its backward derived
by hand and checked by gradcheck), so a step records three graph nodes instead of twenty.

Padding: `mask` (B, T), True at real tokens. At a padded step the hidden state is carried over
unchanged and the output is zero, exactly what PyTorch's packed sequences give for a batch
padded on the right; the reverse direction then starts at each sequence's own last token.
"""
from __future__ import annotations

import math

import numpy as np

from minigrad.functional import cat, dropout, stack, where
from minigrad.autograd import Function
from minigrad.ops.elementwise import sigmoid
from minigrad.tensor import Tensor, array_of

from . import functional as F
from . import init
from .module import Module, Parameter


# --- one step of each cell, on a precomputed input projection gi = W_ih x + b_ih ------------
# `keep` (B, 1) bool or None: where False (a padded step) the old state is carried over.

def _keep(keep, new, old):
    return new if keep is None else where(keep, new, old)


def _rnn_tanh_step(gi, h, weight_hh, bias_hh, keep=None):
    return _keep(keep, (gi + F.linear(h, weight_hh, bias_hh)).tanh(), h)


def _rnn_relu_step(gi, h, weight_hh, bias_hh, keep=None):
    return _keep(keep, (gi + F.linear(h, weight_hh, bias_hh)).relu(), h)


def _gru_step(gi, h, weight_hh, bias_hh, keep=None):
    """gi (B, 3H), h (B, H) -> h' (B, H): one matmul, then the gates in one fused op."""
    return GRUGates.apply(gi, F.linear(h, weight_hh, bias_hh), h, keep=keep)


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


# mode -> (step function, number of gate blocks stacked in the weights)
_STEPS = {"RNN_TANH": (_rnn_tanh_step, 1), "RNN_RELU": (_rnn_relu_step, 1), "GRU": (_gru_step, 3)}


def _rnn_mode(nonlinearity, who):
    if nonlinearity not in ("tanh", "relu"):
        raise ValueError(f"{who}: nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")
    return "RNN_" + nonlinearity.upper()


def _uniform_init(module, hidden_size):
    bound = 1.0 / math.sqrt(hidden_size)
    for p in module.parameters():
        init.uniform_(p, -bound, bound)


def _weights(gates, input_size, hidden_size, bias, dtype):
    """(weight_ih, weight_hh, bias_ih, bias_hh) with `gates` blocks of H rows stacked."""
    G = gates * hidden_size
    return (Parameter(np.empty((G, input_size), dtype)),
            Parameter(np.empty((G, hidden_size), dtype)),
            Parameter(np.empty(G, dtype)) if bias else None,
            Parameter(np.empty(G, dtype)) if bias else None)


# --- cells ------------------------------------------------------------------------------------

class _CellBase(Module):
    """One step of the recurrence named by `mode` (a key of _STEPS)."""

    def __init__(self, mode, input_size, hidden_size, bias=True, dtype=np.float32):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self._step, gates = _STEPS[mode]
        self.weight_ih, self.weight_hh, bias_ih, bias_hh = _weights(
            gates, input_size, hidden_size, bias, dtype)
        self.register_parameter("bias_ih", bias_ih)
        self.register_parameter("bias_hh", bias_hh)
        self.reset_parameters()

    def reset_parameters(self):
        _uniform_init(self, self.hidden_size)

    def forward(self, input, hx=None):
        """input (B, D) or (D,), hx (B, H) or (H,) (zeros if None) -> h' (B, H) or (H,)."""
        if input.ndim not in (1, 2) or input.shape[-1] != self.input_size:
            raise ValueError(f"{type(self).__name__}: input must be (B, {self.input_size}) or "
                             f"({self.input_size},), got shape {input.shape}")
        if hx is None:
            hx = Tensor._wrap(np.zeros(input.shape[:-1] + (self.hidden_size,), input.dtype))
        gi = F.linear(input, self.weight_ih, self.bias_ih)
        return self._step(gi, hx, self.weight_hh, self.bias_hh)

    def extra_repr(self):
        return f"{self.input_size}, {self.hidden_size}" + ("" if self.bias else ", bias=False")


class RNNCell(_CellBase):
    """One Elman step: h' = act(W_ih x + b_ih + W_hh h + b_hh), act tanh or relu."""

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", dtype=np.float32):
        super().__init__(_rnn_mode(nonlinearity, "RNNCell"), input_size, hidden_size, bias, dtype)
        self.nonlinearity = nonlinearity


class GRUCell(_CellBase):
    """One GRU step (gates r, z, n): x (B, D), h (B, H) -> h' (B, H)."""

    def __init__(self, input_size, hidden_size, bias=True, dtype=np.float32):
        super().__init__("GRU", input_size, hidden_size, bias, dtype)


# --- layers -----------------------------------------------------------------------------------

def _as_mask(mask, lengths, B, T):
    """A bool (B, T) array, True at real steps, from `mask` or `lengths` (None: all real)."""
    if mask is not None and lengths is not None:
        raise ValueError("recurrent layer: pass mask or lengths, not both")
    if lengths is not None:
        mask = np.arange(T)[None, :] < np.asarray(array_of(lengths)).reshape(-1, 1)
    if mask is None:
        return None
    mask = np.asarray(array_of(mask), dtype=bool)
    if mask.shape != (B, T):
        raise ValueError(f"recurrent layer: mask must have shape (batch, time) = {(B, T)}, "
                         f"got {mask.shape}")
    return None if mask.all() else mask


class _RecurrentLayers(Module):
    """Stacked, optionally bidirectional recurrent layers built from one step function."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, dtype=np.float32):
        super().__init__()
        if num_layers < 1:
            raise ValueError(f"{type(self).__name__}: num_layers must be >= 1, got {num_layers}")
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"{type(self).__name__}: dropout must be in [0, 1), got {dropout}")
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, dropout
        self.bidirectional = bidirectional
        self.num_directions = 2 if bidirectional else 1
        self._step, gates = _STEPS[mode]
        for layer in range(num_layers):
            d_in = input_size if layer == 0 else hidden_size * self.num_directions
            for suffix in ("", "_reverse")[:self.num_directions]:
                w_ih, w_hh, b_ih, b_hh = _weights(gates, d_in, hidden_size, bias, dtype)
                tail = f"_l{layer}{suffix}"
                setattr(self, "weight_ih" + tail, w_ih)
                setattr(self, "weight_hh" + tail, w_hh)
                if bias:
                    setattr(self, "bias_ih" + tail, b_ih)
                    setattr(self, "bias_hh" + tail, b_hh)
        self.reset_parameters()

    def reset_parameters(self):
        _uniform_init(self, self.hidden_size)

    def _params(self, layer, reverse):
        tail = f"_l{layer}" + ("_reverse" if reverse else "")
        get = lambda name: getattr(self, name + tail, None)  # noqa: E731
        return get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh")

    def forward(self, input, h0=None, mask=None, lengths=None):
        """Run every layer over the sequence; returns (output, h_n).

        input (T, B, D) ((B, T, D) if batch_first; or unbatched (T, D)); h0 (L*dirs, B, H),
        zeros if None; mask (B, T) bool, True at real steps, or lengths (B,) ints.
        output (T, B, dirs*H) (batch_first: (B, T, dirs*H)), zero at padded steps;
        h_n (L*dirs, B, H): each layer's and direction's last real hidden state.
        """
        unbatched = input.ndim == 2
        if unbatched:
            input = input.unsqueeze(1)
            h0 = h0.unsqueeze(1) if h0 is not None else None
        elif self.batch_first:
            input = input.transpose(0, 1)
        if input.ndim != 3 or input.shape[-1] != self.input_size:
            raise ValueError(f"{type(self).__name__}: input must be (T, B, {self.input_size}) "
                             f"(batch_first={self.batch_first}), got shape {input.shape}")
        T, B, _ = input.shape
        n_states = self.num_layers * self.num_directions
        if h0 is not None and tuple(h0.shape) != (n_states, B, self.hidden_size):
            raise ValueError(f"{type(self).__name__}: h0 must have shape "
                             f"{(n_states, B, self.hidden_size)}, got {h0.shape}")
        steps = _as_mask(mask, lengths, B, T)
        steps = None if steps is None else steps.T[:, :, None]  # (T, B, 1), to broadcast over H
        x, finals = input, []
        for layer in range(self.num_layers):
            if layer > 0 and self.dropout > 0:  # between layers only, as in PyTorch
                x = dropout(x, self.dropout, self.training)
            outs = []
            for d in range(self.num_directions):
                k = layer * self.num_directions + d
                h = (h0[k] if h0 is not None else
                     Tensor._wrap(np.zeros((B, self.hidden_size), input.dtype)))
                out, h = self._run_direction(x, h, self._params(layer, d == 1), steps, d == 1)
                outs.append(out)
                finals.append(h)
            x = outs[0] if len(outs) == 1 else cat(outs, dim=-1)
        h_n = stack(finals, dim=0)
        if unbatched:
            return x[:, 0], h_n[:, 0]
        return (x.transpose(0, 1) if self.batch_first else x), h_n

    def _run_direction(self, x, h, params, steps, reverse):
        """x (T, B, D) -> (outputs (T, B, H) in time order, last hidden state (B, H))."""
        w_ih, w_hh, b_ih, b_hh = params
        gi = F.linear(x, w_ih, b_ih)  # every step's input projection in one matmul
        T = x.shape[0]
        outs = [None] * T
        for t in (range(T - 1, -1, -1) if reverse else range(T)):
            h = outs[t] = self._step(gi[t], h, w_hh, b_hh, None if steps is None else steps[t])
        out = stack(outs, dim=0)
        # a padded step's output is the carried-over state: zero it, as packed sequences do
        return (out if steps is None else out.masked_fill(~steps, 0.0)), h

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        for name, default in (("num_layers", 1), ("bias", True), ("batch_first", False),
                              ("dropout", 0.0), ("bidirectional", False)):
            if getattr(self, name) != default:
                s += f", {name}={getattr(self, name)}"
        return s


class GRU(_RecurrentLayers):
    """Multi-layer (bidirectional) GRU, PyTorch's `nn.GRU`: forward(input, h0) -> (output, h_n)."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, dtype=np.float32):
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, dtype)


class RNN(_RecurrentLayers):
    """Multi-layer (bidirectional) Elman RNN with tanh or relu, PyTorch's `nn.RNN`."""

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, dtype=np.float32):
        super().__init__(_rnn_mode(nonlinearity, "RNN"), input_size, hidden_size, num_layers,
                         bias, batch_first, dropout, bidirectional, dtype)
        self.nonlinearity = nonlinearity
