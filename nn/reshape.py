"""Layers that only reshape: Flatten and Unflatten (as torch.nn's), for `nn.Sequential` stacks
that go from a feature map to a vector and back."""
from __future__ import annotations

from .module import Module


class Flatten(Module):
    """(B, d1, ..., dk) -> (B, d1*...*dk) by default: dims start_dim..end_dim merged into one."""

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Dim `dim` of size prod(unflattened_size) split into `unflattened_size`, e.g.
    (B, 16) -> (B, 4, 4) for Unflatten(1, (4, 4)); one entry may be -1."""

    def __init__(self, dim, unflattened_size):
        super().__init__()
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError(f"Unflatten: unflattened_size must be a tuple of ints, but found "
                            f"type {type(unflattened_size).__name__}")
        for i, size in enumerate(unflattened_size):
            if not isinstance(size, int):
                raise TypeError(f"Unflatten: unflattened_size must be a tuple of ints, but "
                                f"found element of type {type(size).__name__} at pos {i}")
        self.dim, self.unflattened_size = dim, unflattened_size

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
