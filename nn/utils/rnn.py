"""Variable-length sequences for the recurrent layers, as `torch.nn.utils.rnn`.

A batch of sentences of different lengths is either *padded* into one (T, B, *) tensor (the
short ones filled up with `padding_value`), or *packed*: only the real steps, time-major,

    data          rows of step 0 for every sequence, then step 1 for those still running, ...
    batch_sizes   (T,) how many sequences are still running at each step (never increasing)

with the sequences sorted longest first (`sorted_indices` maps sorted position -> original
index, `unsorted_indices` the way back; both None when the caller already sorted them). A
recurrent layer given a `PackedSequence` skips the padded steps, returns its output packed the
same way, and its final states are each sequence's state after its own last real step.

Every conversion here is ONE gather (an integer index into the rows), so gradients flow
through autograd's indexing; the index arithmetic runs in NumPy on the lengths.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from minigrad.functional import cat
from minigrad.tensor import Tensor, array_of

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pack_sequence",
           "pad_packed_sequence", "pad_sequence", "unpack_sequence", "unpad_sequence"]


def _long(a):
    return Tensor._wrap(np.ascontiguousarray(a, dtype=np.int64))


def invert_permutation(permutation):
    """The inverse of an index permutation (B,) int64, or None for None."""
    if permutation is None:
        return None
    p = np.asarray(array_of(permutation))
    inverse = np.empty_like(p)
    inverse[p] = np.arange(p.size, dtype=p.dtype)
    return _long(inverse)


class _Packed(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(_Packed):
    """The real steps of a batch of sequences, time-major: data (N, *), batch_sizes (T,)
    int64, sorted_indices and unsorted_indices (B,) int64 or None. A tuple, as PyTorch's.
    Build it with `pack_padded_sequence` or `pack_sequence`, not by hand."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if batch_sizes is None:
            raise TypeError("PackedSequence: batch_sizes is required (build packed sequences "
                            "with pack_padded_sequence or pack_sequence)")
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        return super().__new__(cls, data, _long(array_of(batch_sizes)), sorted_indices,
                               unsorted_indices)

    def to(self, *args, **kwargs):
        """The same packing with `data` converted by `Tensor.to` (the indices stay int64)."""
        data = self.data.to(*args, **kwargs)
        return self if data is self.data else type(self)(data, *self[1:])

    def cpu(self):
        return self

    def double(self):
        return self.to(dtype=np.float64)

    def float(self):
        return self.to(dtype=np.float32)

    @property
    def is_cuda(self):
        return False

    def is_pinned(self):
        return False


def _lengths_array(lengths, who):
    arr = np.asarray(array_of(lengths))
    if arr.ndim != 1 or arr.dtype.kind not in "iu":
        raise ValueError(f"{who}: lengths must be a 1-D list or tensor of integers, got shape "
                         f"{arr.shape} and dtype {arr.dtype}")
    return arr.astype(np.int64)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch: input (T, B, *) ((B, T, *) if batch_first), lengths (B,) ->
    PackedSequence. With enforce_sorted the lengths must already decrease; otherwise the
    batch is sorted here and the permutation kept, so outputs come back in the input's order."""
    lengths = _lengths_array(lengths, "pack_padded_sequence")
    B, T = (input.shape[0], input.shape[1]) if batch_first else (input.shape[1], input.shape[0])
    if lengths.size != B:
        raise RuntimeError(f"pack_padded_sequence: Expected `len(lengths)` to be equal to "
                           f"batch_size, but got {lengths.size} (batch_size={B})")
    if enforce_sorted:
        if np.any(np.diff(lengths) > 0):
            raise RuntimeError(
                "pack_padded_sequence: `lengths` array must be sorted in decreasing order when "
                "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                "pack_padded_sequence and/or pack_sequence to sidestep this requirement if you "
                f"do not need ONNX exportability. Got lengths {lengths.tolist()}")
        order, sorted_indices = np.arange(B), None
    else:
        order = np.argsort(-lengths, kind="stable")  # PyTorch's sort keeps ties in order too
        sorted_indices = _long(order)
    if B and lengths.min() <= 0:
        raise RuntimeError("pack_padded_sequence: Length of all samples has to be greater than "
                           f"0, but found an element in 'lengths' that is <= 0: {lengths.tolist()}")
    if B and lengths.max() > T:
        raise ValueError(f"pack_padded_sequence: a length of {lengths.max()} is longer than the "
                         f"input's {T} steps (input shape {tuple(input.shape)})")
    sorted_lengths = lengths[order]
    steps = np.arange(sorted_lengths[0] if B else 0)
    running = steps[:, None] < sorted_lengths[None, :]  # (T', B): real steps, sorted order
    t_idx, j_idx = np.nonzero(running)  # row-major: time-major, then sorted position
    b_idx = order[j_idx]
    data = input[b_idx, t_idx] if batch_first else input[t_idx, b_idx]
    return PackedSequence(data, running.sum(1), sorted_indices)


def _padded_index(sequence, total_length=None):
    """(index (T, B) into the packed rows, N where padded; lengths (B,) in the batch's order)."""
    batch_sizes = np.asarray(array_of(sequence.batch_sizes))
    B = int(batch_sizes[0]) if batch_sizes.size else 0
    T = batch_sizes.size if total_length is None else total_length
    starts = np.concatenate([[0], np.cumsum(batch_sizes)])
    j = np.arange(B)
    sorted_lengths = (batch_sizes[:, None] > j[None, :]).sum(0)
    index = np.full((T, B), starts[-1], np.int64)
    index[:batch_sizes.size] = np.where(j[None, :] < batch_sizes[:, None],
                                        starts[:-1, None] + j[None, :], starts[-1])
    if sequence.unsorted_indices is not None:
        back = np.asarray(array_of(sequence.unsorted_indices))
        index, sorted_lengths = index[:, back], sorted_lengths[back]
    return index, sorted_lengths


def _gather_rows(rows, index, padding_value):
    """rows (N, *) -> (index.shape, *) with index N selecting a row of `padding_value`."""
    pad = Tensor._wrap(np.full((1,) + tuple(rows.shape[1:]), padding_value, rows.dtype))
    return cat([rows, pad], dim=0)[index]


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Undo `pack_padded_sequence`: PackedSequence -> (padded (T, B, *) ((B, T, *) if
    batch_first), lengths (B,) int64), in the order the batch had before packing. T is the
    longest length, or `total_length` (which must not be shorter)."""
    longest = len(sequence.batch_sizes)
    if total_length is not None and total_length < longest:
        raise ValueError("pad_packed_sequence: Expected total_length to be at least the length "
                         f"of the longest sequence in input, but got total_length={total_length} "
                         f"and max sequence length being {longest}")
    index, lengths = _padded_index(sequence, total_length)
    padded = _gather_rows(sequence.data, index.T if batch_first else index, padding_value)
    return padded, _long(lengths)


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """A list of B tensors (L_i, *) -> one (max L, B, *) tensor ((B, max L, *) if batch_first),
    each sequence followed (padding_side 'right') or preceded ('left') by `padding_value`."""
    if padding_side not in ("left", "right"):
        raise RuntimeError("pad_sequence: Expected padding_side to be one of left or right, but "
                           f"got {padding_side}.")
    if isinstance(sequences, Tensor):
        sequences = sequences.unbind(0)
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("pad_sequence: received an empty list of sequences")
    tails = {tuple(s.shape[1:]) for s in sequences}
    if len(tails) > 1 or sequences[0].ndim == 0:
        raise RuntimeError("pad_sequence: every sequence must be (L, *) with the same trailing "
                           f"dims, got shapes {[tuple(s.shape) for s in sequences]}")
    lengths = np.array([s.shape[0] for s in sequences], np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    t = np.arange(lengths.max())[:, None]
    shift = lengths.max() - lengths if padding_side == "left" else 0
    pos = t - shift  # (T, B) position inside each sequence
    index = np.where((pos >= 0) & (pos < lengths), starts + pos, lengths.sum())
    # row-major either way, as PyTorch's result (a transposed index would give a transposed
    # tensor, which `view` refuses to flatten)
    index = np.ascontiguousarray(index.T) if batch_first else index
    return _gather_rows(cat(sequences, dim=0), index, padding_value)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """Undo `pad_sequence` (right padding): (T, B, *) and lengths (B,) -> B tensors (L_i, *)."""
    lengths = _lengths_array(lengths, "unpad_sequence")
    x = padded_sequences if batch_first else padded_sequences.transpose(0, 1)
    return [x[b, :int(n)] for b, n in enumerate(lengths)]


def pack_sequence(sequences, enforce_sorted=True):
    """A list of B tensors (L_i, *) -> PackedSequence (pad_sequence, then pack it)."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """Undo `pack_sequence`: PackedSequence -> the list of B tensors (L_i, *)."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
