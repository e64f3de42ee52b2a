"""The products PyTorch keeps at its top level under BLAS's names, beside `addmm` and
`baddbmm` (`composite.py`): `mv` (matrix times vector), `addmv`, `ger` (`outer`), `addr`
(input plus an outer product), `addbmm` (input plus the sum of a batch of products),
`inner` (products over the last dims) and `vdot` (the dot product of two vectors of one
dtype). Each is composed of matmul, products and sums, so its gradients are theirs; as
PyTorch's, beta=0 ignores the input (its NaN and inf are not propagated).
"""
from __future__ import annotations

import numpy as np

from .composite import _as_tensor, _check_broadcast, _scaled_sum
from .linalg_checks import torch_dtype_name

__all__ = ["addbmm", "addmv", "addr", "ger", "inner", "mv", "vdot"]


def _check_scalars(op, like, beta, alpha):
    """As PyTorch: integer products take integer beta and alpha."""
    if np.dtype(like.dtype).kind in "biu":
        for name, value in (("beta", beta), ("alpha", alpha)):
            if isinstance(value, float):
                raise RuntimeError(f"{op}: For integral input tensors, argument {name} must not "
                                   f"be a floating point number.")


def _check_mv(op, input, mat, vec):
    if mat.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"{op}: vector + matrix @ vector expected, got "
                           f"{1 if input is None else input.ndim}, {mat.ndim}, {vec.ndim}")
    if mat.shape[1] != vec.shape[0] or (input is not None and input.ndim == 1 and
                                        input.shape[0] not in (1, mat.shape[0])):
        size = "" if input is None else f"input ({input.shape[0] if input.ndim else ''}), "
        raise RuntimeError(f"{op}: size mismatch, got {size}mat ({mat.shape[0]}x"
                           f"{mat.shape[1]}), vec ({vec.shape[0]})")
    if mat.dtype != vec.dtype:
        raise RuntimeError(f"{op}: input tensors must have the same dtype, but got "
                           f"{torch_dtype_name(mat.dtype)} and {torch_dtype_name(vec.dtype)}")


def mv(input, vec):
    """(n, m) @ (m,) -> (n,)."""
    _check_mv("mv", None, input, vec)
    return input @ vec


def addmv(input, mat, vec, *, beta=1, alpha=1):
    """beta * input + alpha * (mat @ vec): mat (n, m), vec (m,), input broadcast to (n,)."""
    _check_mv("addmv", input if hasattr(input, "ndim") else None, mat, vec)
    _check_broadcast(input, (mat.shape[0],), "addmv")
    _check_scalars("addmv", mat, beta, alpha)
    return _scaled_sum(_as_tensor(input, mat), mat @ vec, beta, alpha)


def _check_vectors(op, a, b, names=("self", "vec2")):
    for name, v in zip(names, (a, b)):
        if v.ndim != 1:
            raise RuntimeError(f"{op}: Expected 1-D argument {name}, but got {v.ndim}-D")


def ger(input, vec2):
    """`outer`: (n,) and (m,) -> (n, m)."""
    _check_vectors("outer", input, vec2)
    return input.outer(vec2)


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """beta * input + alpha * outer(vec1, vec2): vec1 (n,), vec2 (m,), input broadcast to
    (n, m)."""
    _check_vectors("addr", vec1, vec2, ("vec1", "vec2"))
    _check_broadcast(input, (vec1.shape[0], vec2.shape[0]), "addr")
    _check_scalars("addr", vec1, beta, alpha)
    return _scaled_sum(_as_tensor(input, vec1), vec1.outer(vec2), beta, alpha)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * sum_b batch1[b] @ batch2[b]: batch1 (b, n, m), batch2 (b, m, p),
    input broadcast to (n, p)."""
    for name, m in (("batch1", batch1), ("batch2", batch2)):
        if m.ndim != 3:
            raise RuntimeError(f"addbmm: {name} must be a 3D tensor, got {m.ndim}-D")
    if batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError(f"addbmm: batch1 and batch2 must have same number of batches, got "
                           f"{batch1.shape[0]} and {batch2.shape[0]}")
    if batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"addbmm: batch1 of shape {tuple(batch1.shape)} and batch2 of shape "
                           f"{tuple(batch2.shape)} cannot be multiplied batch by batch")
    _check_broadcast(input, (batch1.shape[1], batch2.shape[2]), "addbmm")
    _check_scalars("addbmm", batch1, beta, alpha)
    return _scaled_sum(_as_tensor(input, batch1), (batch1 @ batch2).sum(0), beta, alpha)


def inner(input, other):
    """Products summed over the last dims: (*a, k) and (*b, k) -> (*a, *b); a 0-d operand
    multiplies."""
    from .tensor_products import tensordot
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input.dtype != other.dtype:
        raise RuntimeError(f"inner: both inputs should have same dtype (got "
                           f"{torch_dtype_name(input.dtype)} and "
                           f"{torch_dtype_name(other.dtype)})")
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but "
                           f"got shapes {list(input.shape)} and {list(other.shape)}")
    return tensordot(input, other, ([-1], [-1]))


def vdot(input, other):
    """The dot product of two vectors (n,) of one dtype, 0-d, the first conjugated (complex
    vectors: sum conj(a_i) b_i, as in PyTorch)."""
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D "
                           f"tensors (vdot)")
    if input.dtype != other.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{torch_dtype_name(input.dtype)} and {torch_dtype_name(other.dtype)}")
    if input.shape[0] != other.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{input.shape[0]}] and "
                           f"src [{other.shape[0]}] to have the same number of elements (vdot)")
    return input.conj() @ other
