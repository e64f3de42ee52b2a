"""What every `minigrad.linalg` function checks first, with PyTorch's messages: a floating-point
input of at least 2 dims whose last two are square; and `LinAlgError`, the error of a matrix
the computation cannot handle (singular, not positive-definite), a `RuntimeError` as
PyTorch's `torch.linalg.LinAlgError` is. And `with_zero_gradient`: a result PyTorch records
in the graph with a zero gradient (slogdet's sign, the count of nonzeros that is the 0-norm)
is recorded so here too, so that it `requires_grad` as there.

The factorizations are NumPy's (LAPACK), which works in float32 and float64 alike, so a
float32 input is computed in float32 as PyTorch's CPU kernels are.
"""
from __future__ import annotations

import numpy as np

from .dtypes import torch_dtype_name

__all__ = ["LinAlgError", "batch_failure", "check_float", "check_matrix", "check_phase_free",
           "check_square",
           "with_zero_gradient"]



class LinAlgError(RuntimeError):
    """A matrix the operation cannot handle: singular, or not positive-definite."""



_COMPLEX = (np.complex64, np.complex128)


def check_float(a: np.ndarray, op: str, half=False, complex=False) -> None:
    """float32 or float64 (LAPACK's), or with `half` float16 too (the norms take it), or with
    `complex` complex64 and complex128 (the ops whose gradients follow the complex convention)."""
    if a.dtype not in (np.float32, np.float64) and not (half and a.dtype == np.float16) and not (
            complex and a.dtype in _COMPLEX):
        raise RuntimeError(f"{op}: Expected a floating point or complex tensor as input. Got "
                           f"{torch_dtype_name(a.dtype)}")


def check_matrix(a: np.ndarray, op: str, half=False, complex=False) -> None:
    """A float (or with `complex`, complex) tensor of shape (*, m, n)."""
    if a.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions.")
    check_float(a, op, half, complex)


def check_square(a: np.ndarray, op: str, complex=False) -> None:
    """A float (or with `complex`, complex) tensor of shape (*, n, n)."""
    check_matrix(a, op, complex=complex)
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"{op}: A must be batches of square matrices, but they are "
                           f"{a.shape[-2]} by {a.shape[-1]} matrices")


def check_phase_free(im_diag, op: str, vectors: str, quantity: str) -> None:
    """Each complex eigen- or singular vector is fixed only up to a phase e^{i phi}; a loss
    that depends on it shows as a nonzero Im(diag(V^H gV)) (for svd: the sum of U's and V's),
    and PyTorch's backward raises, with its tolerance and wording, rather than give a gradient
    that means nothing."""
    if np.any(np.abs(im_diag) > 1e-2):
        raise RuntimeError(f"{op}: The {vectors} in the complex case are specified up to "
                           f"multiplication by e^{{i phi}}. The specified loss function depends "
                           f"on this {quantity}.")


def batch_failure(a: np.ndarray, fn, op: str, what: str) -> LinAlgError:
    """The error for a batch (*, n, n) on which `fn` failed: found again matrix by matrix, so
    that the message names the first failing one as PyTorch's does."""
    where = ""
    if a.ndim > 2:
        for i, m in enumerate(a.reshape(-1, *a.shape[-2:])):
            try:
                fn(m)
            except np.linalg.LinAlgError:
                where = f"(Batch element {i}): "
                break
    return LinAlgError(f"{op}: {where}{what}")


def with_zero_gradient(values, connected):
    """The array `values` as a tensor recorded as a function of `connected` (a tensor of the
    same shape) whose gradient is 0: a `where` that always picks the values."""
    from . import ops
    from .tensor import Tensor
    if not connected.requires_grad:
        return Tensor._wrap(values)
    return ops.Where.apply(np.ones(values.shape, bool), Tensor._wrap(values), connected)
