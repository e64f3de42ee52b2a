"""All parameters as one flat vector and back, as in `torch.nn.utils.convert_parameters`."""
from __future__ import annotations

import numpy as np

from minigrad import cat
from minigrad.autograd import bump_version
from minigrad.tensor import Tensor


def _params(parameters):
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def parameters_to_vector(parameters):
    """All parameters flattened and concatenated into one new 1-D tensor `(N,)`, recorded as
    PyTorch's `cat` of their flat views: a penalty computed on it reaches the parameters."""
    return cat([p.reshape(-1) for p in _params(parameters)])


def vector_to_parameters(vec, parameters):
    """Copy consecutive pieces of a 1-D `vec` into the parameters (in place, data kept)."""
    v = np.asarray(vec._array if isinstance(vec, Tensor) else vec)
    params = _params(parameters)
    total = sum(p._array.size for p in params)
    if v.ndim != 1 or v.size != total:
        raise ValueError(f"vector_to_parameters: expected a 1-D vector of {total} elements, "
                         f"got shape {v.shape}")
    i = 0
    for p in params:
        n = p._array.size
        np.copyto(p._array, v[i:i + n].reshape(p._array.shape), casting="unsafe")
        bump_version(p)
        i += n
