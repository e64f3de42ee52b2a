"""PyTorch's recurrent layers: `RNN`, `GRU`, `LSTM`, and their one-step cells `RNNCell`,
`GRUCell`, `LSTMCell`.

Each is a thin front: the equations and fused gates of one step are in rnn_steps.py, the
parameters, checks and the driver over time, layers and directions (batch_first, packed
sequences, dropout between layers) in recurrent.py. The parameters have PyTorch's names and
shapes (`weight_ih` (G*H, D), `weight_hh` (G*H, H), `bias_ih`, `bias_hh` (G*H,) with G = 1, 3,
4 gate blocks; the layers add `_l{k}` and `_reverse`, and `weight_hr` with proj_size), so a
`state_dict` loads into PyTorch's layer unchanged, and back.
"""
from __future__ import annotations

from .recurrent import RNNBase, RNNCellBase

__all__ = ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNCell"]


def _rnn_mode(nonlinearity, who):
    if nonlinearity not in ("tanh", "relu"):
        raise ValueError(f"{who}: Unknown nonlinearity {nonlinearity!r}. Select from 'tanh' or "
                         "'relu'.")
    return "RNN_" + nonlinearity.upper()


class RNNCell(RNNCellBase):
    """One Elman step: h' = act(W_ih x + b_ih + W_hh h + b_hh), act tanh or relu.
    forward(input (B, D) or (D,), hx (B, H) or (H,), zeros if None) -> h' (B, H) or (H,)."""

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        mode = _rnn_mode(nonlinearity, "RNNCell")
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity, self._mode = nonlinearity, mode

    def forward(self, input, hx=None):
        return self._run(self._mode, input, None if hx is None else [hx])[0]


class GRUCell(RNNCellBase):
    """One GRU step (gates r, z, n): forward(input (B, D) or (D,), hx (B, H) or (H,), zeros if
    None) -> h' (B, H) or (H,)."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        return self._run("GRU", input, None if hx is None else [hx])[0]


class LSTMCell(RNNCellBase):
    """One LSTM step (gates i, f, g, o): forward(input (B, D) or (D,), hx=(h, c) each (B, H)
    or unbatched (H,), zeros if None) -> (h', c')."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        if hx is not None and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
            raise TypeError(f"LSTMCell: hx must be a tuple (h, c), got {type(hx).__name__}")
        return tuple(self._run("LSTM", input, hx))


class RNN(RNNBase):
    """Multi-layer (bidirectional) Elman RNN with tanh or relu, PyTorch's `nn.RNN`:
    forward(input, hx) -> (output, h_n); shapes in `RNNBase.forward`."""

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, device=None, dtype=None):
        super().__init__(_rnn_mode(nonlinearity, "RNN"), input_size, hidden_size, num_layers,
                         bias, batch_first, dropout, bidirectional, 0, device, dtype)
        self.nonlinearity = nonlinearity


class GRU(RNNBase):
    """Multi-layer (bidirectional) GRU, PyTorch's `nn.GRU`: forward(input, hx) ->
    (output, h_n); shapes in `RNNBase.forward`."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None):
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, 0, device, dtype)


class LSTM(RNNBase):
    """Multi-layer (bidirectional) LSTM, PyTorch's `nn.LSTM`: forward(input, (h_0, c_0)) ->
    (output, (h_n, c_n)); shapes in `RNNBase.forward`. With proj_size P > 0 the output and h
    are (..., P), c stays (..., H)."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, proj_size, device, dtype)
