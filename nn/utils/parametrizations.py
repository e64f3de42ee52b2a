"""`torch.nn.utils.parametrizations`: weight_norm, spectral_norm and orthogonal, each a module
registered with `parametrize.register_parametrization`, so their state-dict keys are
PyTorch's (`parametrizations.weight.original0`/`original1` for weight_norm's g and v,
`parametrizations.weight.original` and `parametrizations.weight.0._u`/`_v` for spectral_norm)
and a PyTorch checkpoint loads into the same numbers.
"""
from __future__ import annotations

import minigrad
from minigrad import linalg
from minigrad.grad_mode import no_grad
from minigrad.tensor import Tensor

from .. import functional as F
from ..conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..module import Module
from . import parametrize

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


# --- weight norm ------------------------------------------------------------------------------

def norm_except_dim(v, pow=2, dim=0):
    """The `pow`-norm of `v` over every dim but `dim`, kept as size-1 dims (so it broadcasts
    against v); over the whole tensor (0-d) when dim is -1, as PyTorch's."""
    if dim == -1:
        return linalg.vector_norm(v, pow)
    dims = [d for d in range(v.ndim) if d != dim]
    return linalg.vector_norm(v, pow, dim=dims, keepdim=True) if dims else v.abs()


def weight_norm_of(v, g, dim):
    """PyTorch's `_weight_norm`: v scaled to norm g along `dim`, v * (g / ||v||)."""
    return v * (g / norm_except_dim(v, 2, dim))


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return weight_norm_of(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Parametrize `module.<name>` as g * v / ||v|| (norm over every dim but `dim`; the whole
    tensor for dim=None): `original0` is g, `original1` is v. A state dict of the legacy
    `nn.utils.weight_norm` (`weight_g`, `weight_v`) loads into it."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def compat_hook(state_dict, prefix, local_metadata, strict, missing_keys,
                    unexpected_keys, error_msgs):
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(compat_hook)
    return module


# --- spectral norm ----------------------------------------------------------------------------

def weight_matrix(weight, dim):
    """`weight` as a matrix (C_dim, rest): `dim` first, the other dims flattened."""
    if dim != 0:
        weight = weight.permute(dim, *(d for d in range(weight.ndim) if d != dim))
    return weight.flatten(1)


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = weight_matrix(weight, self.dim)
            h, w = weight_mat.shape
            with no_grad():
                u = minigrad.empty(h, dtype=weight.dtype).normal_(0, 1)
                v = minigrad.empty(w, dtype=weight.dtype).normal_(0, 1)
                self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
                self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _power_method(self, weight_mat, n_power_iterations):
        """Refine the estimates u, v of the top singular vectors, in place (the buffers)."""
        with no_grad():
            for _ in range(n_power_iterations):
                self._u.copy_(F.normalize(minigrad.mv(weight_mat, self._v), dim=0,
                                          eps=self.eps))
                self._v.copy_(F.normalize(minigrad.mv(weight_mat.H, self._u), dim=0,
                                          eps=self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = weight_matrix(weight, self.dim)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = minigrad.vdot(u, minigrad.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Parametrize `module.<name>` as W / sigma(W), sigma estimated by power iteration with
    the buffers u and v (`n_power_iterations` steps per forward in training, none in eval).
    `dim` (default 0, 1 for transposed convolutions) is the output dim."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


# --- orthogonal -------------------------------------------------------------------------------

_MAPS = ("matrix_exp", "cayley", "householder")


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X, n, k = X.mT, k, n
        if self.orthogonal_map in ("matrix_exp", "cayley"):
            X = X.tril()
            if n != k:
                X = minigrad.cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)],
                                 dim=-1)
            A = X - X.mH
            if self.orthogonal_map == "matrix_exp":
                Q = linalg.matrix_exp(A)
            else:
                eye = minigrad.eye(n, dtype=A.dtype)
                Q = linalg.solve(eye - 0.5 * A, eye + 0.5 * A)
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = linalg.householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if "base" in self._buffers:
            Q = self.base @ Q
        return Q.mT if transposed else Q

    def right_inverse(self, Q):
        with no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q):
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        Q_init = Q
        n, k = Q.shape[-2], Q.shape[-1]
        transpose = n < k
        if transpose:
            Q, n, k = Q.mT, k, n
        if "base" not in self._buffers:
            if self.orthogonal_map in ("matrix_exp", "cayley"):
                raise NotImplementedError("It is not possible to assign to the matrix "
                                          "exponential or the Cayley parametrizations when "
                                          "use_trivialization=False.")
            A, tau = minigrad.geqrf(Q)
            # the diagonal becomes the signs PyTorch's forward multiplies by (flipped where
            # tau is 0, the reflection left out)
            sign = A.diagonal(dim1=-2, dim2=-1).sign() * (1.0 - 2.0 * (tau == 0.0).to(A.dtype))
            eye = minigrad.eye(n, k, dtype=A.dtype)
            A = A * (1.0 - eye) + eye * sign.unsqueeze(-2)
            return A.mT if transpose else A
        if n == k:
            Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
        else:
            N = minigrad.randn(*(tuple(Q.shape[:-2]) + (n, n - k)), dtype=Q.dtype)
            Q = _make_orthogonal(minigrad.cat([Q, N], dim=-1))
        self.base = Q
        return minigrad.zeros_like(Q_init) - minigrad.eye(*Q_init.shape[-2:], dtype=Q_init.dtype)


def _is_orthogonal(Q):
    n, k = Q.shape[-2], Q.shape[-1]
    eye = minigrad.eye(k, dtype=Q.dtype)
    return minigrad.allclose(Q.mH @ Q, eye, atol=10.0 * n * minigrad.finfo(Q.dtype).eps)


def _make_orthogonal(A):
    X, tau = minigrad.geqrf(A)
    Q = linalg.householder_product(X, tau)
    return Q * X.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Parametrize the matrix (or batch of matrices) `module.<name>` to be orthogonal (its
    columns or rows orthonormal), through "matrix_exp" or "cayley" of a skew-symmetric matrix
    or a "householder" product (the default for a non-square matrix). With
    `use_trivialization`, the buffer `base` holds the orthogonal matrix the map starts from,
    so that assigning any orthogonal matrix to the weight is exact."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of "
                         f"{weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.shape[-2] == weight.shape[-1] else "householder"
    if orthogonal_map not in _MAPS:
        raise ValueError(f'orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
