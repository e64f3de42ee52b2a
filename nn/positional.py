"""Sinusoidal positional encoding (Vaswani et al., 2017, section 3.5).

    PE[pos, 2i]   = sin(pos / 10000^(2i / d_model))
    PE[pos, 2i+1] = cos(pos / 10000^(2i / d_model))

Each pair of dimensions is a clock turning at its own speed, so position 0 is [0, 1, 0, 1, ...]
and the distance between two encodings grows with how far apart the positions are.
"""
from __future__ import annotations

import numpy as np

from minigrad.tensor import Tensor

from . import functional as F
from .module import Module


def sinusoidal_table(max_len, d_model, dtype=np.float32):
    """The (max_len, d_model) table of encodings."""
    pos = np.arange(max_len)[:, None]
    freq = np.power(10000.0, -np.arange(0, d_model, 2) / d_model)
    table = np.zeros((max_len, d_model))
    table[:, 0::2] = np.sin(pos * freq)
    table[:, 1::2] = np.cos(pos * freq[: d_model // 2])
    return table.astype(dtype)


class PositionalEncoding(Module):
    """Adds the sinusoidal encoding to x of shape (B, T, D) (batch_first=True, the default here)
    or (T, B, D) (batch_first=False), then applies dropout."""

    def __init__(self, d_model, max_len=5000, dropout=0.0, batch_first=True):
        super().__init__()
        self.d_model, self.max_len, self.batch_first = d_model, max_len, batch_first
        self.p = dropout
        # not a parameter and not saved in state_dict: it is a fixed function of the position
        self.register_buffer("pe", Tensor._wrap(sinusoidal_table(max_len, d_model)), persistent=False)

    def forward(self, x, offset=0):
        """`offset` shifts the positions (decoding one token at a time starts at t, not 0)."""
        t = x.shape[1] if self.batch_first else x.shape[0]
        if offset + t > self.max_len:
            raise ValueError(f"PositionalEncoding: sequence of length {offset + t} is longer "
                             f"than max_len={self.max_len}; build the encoding with a larger "
                             f"max_len")
        if x.shape[-1] != self.d_model:
            raise ValueError(f"PositionalEncoding: input of shape {x.shape} does not have "
                             f"d_model={self.d_model} features")
        pe = self.pe._array[offset:offset + t].astype(x.dtype, copy=False)
        x = x + (pe if self.batch_first else pe[:, None, :])
        return F.dropout(x, self.p, self.training)

    def extra_repr(self):
        return f"d_model={self.d_model}, max_len={self.max_len}, dropout={self.p}"
