"""Basic layers: Linear, Embedding, Dropout, the activations and Identity."""
from __future__ import annotations

import math

import numpy as np

from minigrad.ops import Linear as _LinearOp

from . import functional as F
from . import init
from .functional_embedding import norm_options_repr
from .module import Module, Parameter, factory_dtype


class Identity(Module):
    """Returns its input unchanged (a placeholder where a layer is optional). Any arguments
    are accepted and ignored, as PyTorch's, so that it can stand in for the layer it replaces
    (`nn.Identity(dim)` where `nn.LayerNorm(dim)` would be)."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """y = x W^T + b: x (..., in_features) -> (..., out_features)."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        dtype = factory_dtype(device, dtype, "Linear")
        self.in_features, self.out_features = in_features, out_features
        self.weight = Parameter(np.empty((out_features, in_features), dtype=dtype))
        self.bias = Parameter(np.empty(out_features, dtype=dtype)) if bias else None
        self.reset_parameters()

    def reset_parameters(self):
        # PyTorch's default: kaiming_uniform_(a=sqrt(5)), i.e. U(-1/sqrt(in), 1/sqrt(in))
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features) if self.in_features else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        # F.linear's own op, called as F.linear calls it: a layer is called for every token
        # a model samples, and F.linear's out= wrapper and the call into it are a tenth of
        # a small layer's time
        if self.bias is None:
            return _LinearOp.apply(input, self.weight)
        return _LinearOp.apply(input, self.weight, self.bias)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class NonDynamicallyQuantizableLinear(Linear):
    """A Linear under the name PyTorch gives a MultiheadAttention's output projection (its
    quantization tools leave it alone), so that `print(model)` shows what PyTorch's does."""


class Embedding(Module):
    """A lookup table: integer ids (...) -> rows of weight (..., embedding_dim).

    With `max_norm`, each forward first scales the rows it looks up down to that
    `norm_type`-norm, in the weight itself (see `F.embedding`); `scale_grad_by_freq` divides
    each id's gradient by its count in the batch. `_weight` (num_embeddings, embedding_dim)
    and `_freeze` are PyTorch's arguments for a given table (see `from_pretrained`): the layer
    then keeps that table, its padding row untouched."""

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None,
                 norm_type=2.0, scale_grad_by_freq=False, sparse=False, _weight=None,
                 _freeze=False, device=None, dtype=None):
        super().__init__()
        if sparse:
            raise NotImplementedError("Embedding: sparse=True (a sparse gradient) is not "
                                      "supported by minigrad, whose gradients are dense")
        dtype = factory_dtype(device, dtype, "Embedding")
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        padding_idx = F._padding_row(padding_idx, num_embeddings, "Embedding")
        self.padding_idx = padding_idx
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            self.weight = Parameter(np.empty((num_embeddings, embedding_dim), dtype=dtype),
                                    requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ValueError(f"Embedding: shape of weight {tuple(_weight.shape)} does not "
                                 f"match num_embeddings and embedding_dim "
                                 f"({num_embeddings}, {embedding_dim})")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None,
                        norm_type=2.0, scale_grad_by_freq=False, sparse=False):
        """An Embedding holding the (V, D) table `embeddings` (sharing its memory, as in
        PyTorch), frozen (requires_grad False) unless freeze=False; the padding row keeps its
        values and gets no gradient."""
        if embeddings.ndim != 2:
            raise ValueError(f"Embedding.from_pretrained: embeddings must be 2-dimensional "
                             f"(num_embeddings, embedding_dim), got shape "
                             f"{tuple(embeddings.shape)}")
        rows, cols = embeddings.shape
        return cls(rows, cols, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse,
                   _weight=embeddings, _freeze=freeze, dtype=embeddings.dtype)

    def reset_parameters(self):
        init.normal_(self.weight)  # N(0, 1), as PyTorch
        if self.padding_idx is not None:
            self.weight._array[self.padding_idx] = 0

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s + norm_options_repr(self)


class Dropout(Module):
    """Zero elements with probability p while training, scaling the rest by 1/(1-p)."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if not 0.0 <= p < 1.0:
            raise ValueError(f"Dropout: p must be in [0, 1), got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        if not self.training and not self.inplace and 0.0 <= self.p < 1.0:
            # F.dropout's answer in evaluation, the input itself, without its three calls:
            # a model calls every Dropout for every sampled token
            return input
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class ReLU(Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class GELU(Module):
    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return input.gelu(self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class Tanh(Module):
    def forward(self, input):
        return input.tanh()


class Sigmoid(Module):
    def forward(self, input):
        return input.sigmoid()


class LeakyReLU(Module):
    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class Softmax(Module):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"
