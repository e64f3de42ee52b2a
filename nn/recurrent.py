"""The machinery every recurrent layer shares: PyTorch's parameters and checks, and the driver
that runs a step function (rnn_steps.py) over time, layers and directions.

`RNNBase(mode, ...)` is PyTorch's base class of `RNN`, `GRU` and `LSTM`; `mode` ('RNN_TANH',
'RNN_RELU', 'GRU' or 'LSTM') picks the step and the number of gate blocks stacked in the
weights. The driver computes every step's input projection W_ih x_t + b_ih with ONE matmul
before the loop (it does not depend on the state); only the W_hh h_{t-1} part runs step by
step, so a step is a handful of graph nodes.

Layout as PyTorch's: input (T, B, D) ((B, T, D) if batch_first, (T, D) unbatched, or a
PackedSequence); layer k > 0 reads layer k-1's output (both directions concatenated), with
dropout in between while training (never after the last layer); parameters `weight_ih_l{k}`,
`weight_hh_l{k}`, `bias_ih_l{k}`, `bias_hh_l{k}` (+ `weight_hr_l{k}` with proj_size), `_reverse`
for the backward direction, all drawn from U(-1/sqrt(H), 1/sqrt(H)). So a `state_dict` loads
into PyTorch's layer unchanged, and back.

Padding without packing (a minigrad extension): `mask` (B, T), True at real steps, or
`lengths` (B,). At a padded step the state is carried over and the output is zero, which is
what a PackedSequence gives, without having to pack.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from minigrad.functional import cat, dropout, stack
from minigrad.tensor import Tensor, array_of

from . import functional as F
from . import init
from .module import Module, Parameter, factory_dtype
from .rnn_steps import STEPS
from .utils.rnn import PackedSequence, _gather_rows, _padded_index


def _weights(gates, input_size, hidden_size, bias, dtype, proj_size=0):
    """(weight_ih, weight_hh, bias_ih, bias_hh, weight_hr) with `gates` blocks of H rows."""
    G, H_out = gates * hidden_size, proj_size or hidden_size
    return (Parameter(np.empty((G, input_size), dtype)),
            Parameter(np.empty((G, H_out), dtype)),
            Parameter(np.empty(G, dtype)) if bias else None,
            Parameter(np.empty(G, dtype)) if bias else None,
            Parameter(np.empty((proj_size, hidden_size), dtype)) if proj_size else None)


def _uniform_init(module, hidden_size):
    bound = 1.0 / math.sqrt(hidden_size)
    for p in module.parameters():
        init.uniform_(p, -bound, bound)


def _zeros(B, size, dtype):
    return Tensor._wrap(np.zeros((B, size), dtype))


# --- cells -----------------------------------------------------------------------------------

class RNNCellBase(Module):
    """PyTorch's base class of the cells: `num_chunks` gate blocks of `hidden_size` rows each
    in `weight_ih` (G*H, D), `weight_hh` (G*H, H), `bias_ih` and `bias_hh` (G*H,)."""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        dtype = factory_dtype(device, dtype, type(self).__name__)
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.weight_ih, self.weight_hh, bias_ih, bias_hh, _ = _weights(
            num_chunks, input_size, hidden_size, bias, dtype)
        self.register_parameter("bias_ih", bias_ih)
        self.register_parameter("bias_hh", bias_hh)
        self.reset_parameters()

    def reset_parameters(self):
        _uniform_init(self, self.hidden_size)

    def _run(self, mode, input, hx):
        """One step of `mode` (a key of STEPS): input (B, D) or (D,); hx None or the states,
        each (B, H) or (H,) -> the new states, as a list."""
        name, (step, _) = type(self).__name__, STEPS[mode]
        n_states = 2 if mode == "LSTM" else 1
        if input.ndim not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.ndim}D instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"{name}: input has inconsistent input_size: got "
                               f"{input.shape[-1]} expected {self.input_size}")
        unbatched = input.ndim == 1
        x = input.unsqueeze(0) if unbatched else input
        B = x.shape[0]
        if hx is None:
            hx = [_zeros(B, self.hidden_size, x.dtype)] * n_states
        else:
            for i, h in enumerate(hx):
                if h.ndim != input.ndim:
                    raise RuntimeError(f"{name}: hidden{i} must be {input.ndim}-D like the "
                                       f"input (shape {tuple(input.shape)}), got shape "
                                       f"{tuple(h.shape)}")
            hx = [h.unsqueeze(0) if unbatched else h for h in hx]
        for i, h in enumerate(hx):
            if h.shape[0] != B:
                raise RuntimeError(f"{name}: Input batch size {B} doesn't match hidden{i} batch "
                                   f"size {h.shape[0]}")
            if h.shape[1] != self.hidden_size:
                raise RuntimeError(f"{name}: hidden{i} has inconsistent hidden_size: got "
                                   f"{h.shape[1]}, expected {self.hidden_size}")
        gi = F.linear(x, self.weight_ih, self.bias_ih)
        state = step(gi, tuple(hx), self.weight_hh, self.bias_hh, None, None)
        return [s[0] for s in state] if unbatched else list(state)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}" + ("" if self.bias else ", bias=False")
        nonlinearity = getattr(self, "nonlinearity", "tanh")
        return s + ("" if nonlinearity == "tanh" else f", nonlinearity={nonlinearity}")


# --- layers ----------------------------------------------------------------------------------

def _as_mask(mask, lengths, B, T, who):
    """A bool (B, T) array, True at real steps, from `mask` or `lengths` (None: all real)."""
    if mask is not None and lengths is not None:
        raise ValueError(f"{who}: pass mask or lengths, not both")
    if lengths is not None:
        mask = np.arange(T)[None, :] < np.asarray(array_of(lengths)).reshape(-1, 1)
    if mask is None:
        return None
    mask = np.asarray(array_of(mask), dtype=bool)
    if mask.shape != (B, T):
        raise ValueError(f"{who}: mask must have shape (batch, time) = {(B, T)}, got "
                         f"{mask.shape}")
    return None if mask.all() else mask


def _repack(output, index, like):
    """The rows of output (T, B, *) at the real steps, in `like`'s packed order."""
    T, B = index.shape
    n = like.data.shape[0]
    real = index < n
    order = np.empty(n, np.int64)
    order[index[real]] = np.arange(T * B).reshape(T, B)[real]
    data = output.reshape(T * B, *output.shape[2:])[order]
    return PackedSequence(data, like.batch_sizes, like.sorted_indices, like.unsorted_indices)


class RNNBase(Module):
    """Stacked, optionally bidirectional recurrent layers running the step of `mode`
    (PyTorch's: 'RNN_TANH', 'RNN_RELU', 'GRU' or 'LSTM')."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        name = type(self).__name__
        if mode not in STEPS:
            raise ValueError(f"{name}: Unrecognized RNN mode: {mode!r} (one of {sorted(STEPS)})")
        step, gates = STEPS[mode]
        dtype = factory_dtype(device, dtype, name)
        if not isinstance(dropout, (int, float)) or not 0.0 <= dropout <= 1.0:
            raise ValueError(f"{name}: dropout should be a number in range [0, 1] representing "
                             f"the probability of an element being zeroed, got {dropout}")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=3)
        if not isinstance(hidden_size, int) or hidden_size <= 0:
            raise ValueError(f"{name}: hidden_size must be greater than zero, got {hidden_size}")
        if not isinstance(num_layers, int) or num_layers <= 0:
            raise ValueError(f"{name}: num_layers must be greater than zero, got {num_layers}")
        if proj_size < 0:
            raise ValueError(f"{name}: proj_size should be a positive integer or zero to "
                             f"disable projections, got {proj_size}")
        if proj_size and mode != "LSTM":
            raise ValueError(f"{name}: proj_size argument is only supported for LSTM, not RNN "
                             "or GRU")
        if proj_size >= hidden_size:
            raise ValueError(f"{name}: proj_size has to be smaller than hidden_size, got "
                             f"proj_size={proj_size} and hidden_size={hidden_size}")
        self.mode, self._step = mode, step
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        self.num_directions = 2 if bidirectional else 1
        out_size = proj_size or hidden_size
        self._all_weights = []
        for layer in range(num_layers):
            d_in = input_size if layer == 0 else out_size * self.num_directions
            for suffix in ("", "_reverse")[:self.num_directions]:
                names = []
                for kind, p in zip(("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr"),
                                   _weights(gates, d_in, hidden_size, bias, dtype, proj_size)):
                    if p is not None:
                        names.append(f"{kind}_l{layer}{suffix}")
                        setattr(self, names[-1], p)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self):
        _uniform_init(self, self.hidden_size)

    @property
    def all_weights(self):
        """Per layer and direction, its parameters in PyTorch's order."""
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def flatten_parameters(self):
        """PyTorch packs the weights into one cuDNN buffer here; on the CPU nothing to do."""

    def _params(self, layer, reverse):
        tail = f"_l{layer}" + ("_reverse" if reverse else "")
        return tuple(getattr(self, name + tail, None)
                     for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr"))

    def _state_sizes(self):
        out = self.proj_size or self.hidden_size
        return (out, self.hidden_size) if self.mode == "LSTM" else (out,)

    def _check_hx(self, hx, batched, B):
        """hx as a tuple of (L*dirs, B, size) tensors, each checked as PyTorch checks it."""
        name, lstm = type(self).__name__, self.mode == "LSTM"
        if hx is None:
            return None
        if lstm and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
            raise TypeError(f"{name}: hx must be a tuple (h_0, c_0), got {type(hx).__name__}")
        states = tuple(hx) if lstm else (hx,)
        want = 3 if batched else 2
        if any(s.ndim != want for s in states):
            dims = ", ".join(f"{s.ndim}-D" for s in states)
            kind = "batched 3-D" if batched else "unbatched 2-D"
            what = (f"hx and cx should also be {want}-D but got ({dims}) tensors" if lstm else
                    f"hx should also be {want}-D but got {dims} tensor")
            raise RuntimeError(f"{name}: For {kind} input, {what}")
        if not batched:
            states = tuple(s.unsqueeze(1) for s in states)
        L = self.num_layers * self.num_directions
        for i, (s, size) in enumerate(zip(states, self._state_sizes())):
            if tuple(s.shape) != (L, B, size):
                which = f"hidden[{i}]" if lstm else "hidden"
                raise RuntimeError(f"{name}: Expected {which} size {(L, B, size)}, got "
                                   f"{list(s.shape)}")
        return states

    def forward(self, input, hx=None, mask=None, lengths=None):
        """Run every layer over the sequence; returns (output, h_n), or for LSTM
        (output, (h_n, c_n)).

        input (T, B, D) ((B, T, D) if batch_first), unbatched (T, D), or a PackedSequence;
        hx (L*dirs, B, H_out) (LSTM: a tuple (h_0, c_0) with c_0 (L*dirs, B, H)), zeros if
        None; H_out is proj_size if set, else hidden_size. mask (B, T) bool, True at real
        steps, or lengths (B,): padding without packing (minigrad only).
        output (T, B, dirs*H_out) (batch_first: (B, T, dirs*H_out)), zero at padded steps,
        packed like the input if it was packed; h_n (L*dirs, B, H_out): each layer's and
        direction's state after the last real step.
        """
        name = type(self).__name__
        packed = isinstance(input, PackedSequence)
        if packed:
            if mask is not None or lengths is not None:
                raise ValueError(f"{name}: a PackedSequence carries its lengths; do not pass "
                                 "mask or lengths with it")
            index, seq_lengths = _padded_index(input)
            x = _gather_rows(input.data, index, 0.0)  # (T, B, D), the batch's own order
            steps = np.arange(index.shape[0])[:, None] < seq_lengths[None, :]
            steps = None if steps.all() else steps
            unbatched = False
        else:
            if input.ndim not in (2, 3):
                raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.ndim}D "
                                 "instead")
            unbatched = input.ndim == 2
            x = input.unsqueeze(1) if unbatched else (
                input.transpose(0, 1) if self.batch_first else input)
            steps = _as_mask(mask, lengths, x.shape[1], x.shape[0], name)
            steps = None if steps is None else steps.T
        if x.shape[-1] != self.input_size:
            raise RuntimeError(f"{name}: input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {x.shape[-1]} (input of shape "
                               f"{tuple(x.shape if packed else input.shape)})")
        hx = self._check_hx(hx, not unbatched, x.shape[1])
        output, finals = self._run_layers(x, hx, None if steps is None else steps[:, :, None])
        if unbatched:
            output, finals = output[:, 0], tuple(f[:, 0] for f in finals)
        elif packed:
            output = _repack(output, index, input)
        elif self.batch_first:
            output = output.transpose(0, 1)
        return output, (finals if self.mode == "LSTM" else finals[0])

    def _run_layers(self, x, hx, steps):
        """x (T, B, D), hx tuple of (L*dirs, B, size) or None, steps (T, B, 1) bool or None
        -> (output (T, B, dirs*H_out), tuple of final states (L*dirs, B, size))."""
        B, sizes = x.shape[1], self._state_sizes()
        finals = [[] for _ in sizes]
        for layer in range(self.num_layers):
            if layer > 0 and self.dropout > 0 and self.training:  # between layers, as PyTorch
                x = x * 0.0 if self.dropout == 1.0 else dropout(x, self.dropout)
            outs = []
            for d in range(self.num_directions):
                k = layer * self.num_directions + d
                state = (tuple(s[k] for s in hx) if hx is not None else
                         tuple(_zeros(B, size, x.dtype) for size in sizes))
                out, state = self._run_direction(x, state, self._params(layer, d == 1), steps,
                                                 d == 1)
                outs.append(out)
                for f, s in zip(finals, state):
                    f.append(s)
            x = outs[0] if len(outs) == 1 else cat(outs, dim=-1)
        return x, tuple(stack(f, dim=0) for f in finals)

    def _run_direction(self, x, state, params, steps, reverse):
        """x (T, B, D) -> (outputs (T, B, H_out) in time order, the final state tuple)."""
        w_ih, w_hh, b_ih, b_hh, w_hr = params
        gi = F.linear(x, w_ih, b_ih)  # every step's input projection in one matmul
        T = x.shape[0]
        outs = [None] * T
        for t in (range(T - 1, -1, -1) if reverse else range(T)):
            state = self._step(gi[t], state, w_hh, b_hh, w_hr, None if steps is None else steps[t])
            outs[t] = state[0]
        out = stack(outs, dim=0)
        # a padded step's output is the carried-over state: zero it, as packed sequences do
        return (out if steps is None else out.masked_fill(~steps, 0.0)), state

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        for name, default in (("proj_size", 0), ("num_layers", 1), ("bias", True),
                              ("batch_first", False), ("dropout", 0.0),
                              ("bidirectional", False)):
            if getattr(self, name) != default:
                s += f", {name}={getattr(self, name)}"
        return s
