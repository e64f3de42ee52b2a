"""Tensor methods of linear algebra under PyTorch's names: the matrix products (mm, bmm, dot,
outer, and the BLAS names mv, addmv, ger, addr, addbmm, addmm, baddbmm, inner, vdot) and the
decompositions and solvers (det, inverse, cholesky, svd, qr, triangular_solve, ...).

Each method calls the function of the same name in the module that computes it (linalg*.py,
matrix_vector.py, composite.py, tensor_products.py), imported on first call: those modules'
ops import the rule tables, which import the tensor. `Tensor` inherits these (see tensor.py).
"""
from __future__ import annotations

import numpy as np

from . import tensor as _t
from .errors import ShapeError


def _matrix_product(name, ndim, a, b):
    """mm and bmm: matmul restricted to 2-D (or batched 3-D) operands, as in PyTorch."""
    if a.ndim != ndim or np.ndim(_t.array_of(b)) != ndim:
        raise ShapeError(f"{name}: expects two {ndim}-D tensors, got shapes {a.shape} and "
                         f"{np.shape(_t.array_of(b))}")
    return a @ b


class LinalgMethods:
    def det(self):
        from .linalg_det import det
        return det(self)

    def logdet(self):
        from .linalg_det import logdet
        return logdet(self)

    def slogdet(self):
        from .linalg_det import slogdet
        return slogdet(self)

    def inverse(self):
        from .linalg_inverse import inverse
        return inverse(self)

    def pinverse(self, rcond=1e-15):
        from .linalg_pinv import pinverse
        return pinverse(self, rcond)

    def matrix_exp(self):
        from .linalg_matrix_exp import matrix_exp
        return matrix_exp(self)

    def matrix_power(self, n):
        from .linalg_products import matrix_power
        return matrix_power(self, n)

    def cholesky(self, upper=False):
        from .linalg_legacy import cholesky
        return cholesky(self, upper)

    def cholesky_solve(self, input2, upper=False):
        from .linalg_cholesky_solve import cholesky_solve
        return cholesky_solve(self, input2, upper)

    def cholesky_inverse(self, upper=False):
        from .linalg_cholesky_solve import cholesky_inverse
        return cholesky_inverse(self, upper)

    def lu_solve(self, LU_data, LU_pivots):
        from .linalg_legacy import lu_solve
        return lu_solve(self, LU_data, LU_pivots)

    def svd(self, some=True, compute_uv=True):
        from .linalg_legacy import svd
        return svd(self, some, compute_uv)

    def qr(self, some=True):
        from .linalg_legacy import qr
        return qr(self, some)

    def orgqr(self, input2):
        from .linalg_householder import householder_product
        return householder_product(self, input2)

    def geqrf(self):
        from .linalg_householder import geqrf
        return geqrf(self)

    def ormqr(self, input2, input3, left=True, transpose=False):
        from .linalg_householder import ormqr
        return ormqr(self, input2, input3, left, transpose)

    def triangular_solve(self, A, upper=True, transpose=False, unitriangular=False):
        from .linalg_legacy import triangular_solve
        return triangular_solve(self, A, upper, transpose, unitriangular)

    def cross(self, other, dim=None):
        from .tensor_products import cross
        return cross(self, other, dim)

    def kron(self, other):
        from .tensor_products import kron
        return kron(self, other)

    def mm(self, mat2): return _matrix_product("mm", 2, self, mat2)
    def bmm(self, mat2): return _matrix_product("bmm", 3, self, mat2)

    def dot(self, tensor):
        if self.ndim != 1 or np.ndim(_t.array_of(tensor)) != 1:
            raise ShapeError(f"dot: expects two 1-D tensors, got shapes {self.shape} and "
                             f"{np.shape(_t.array_of(tensor))}")
        return self @ tensor

    def outer(self, vec2):
        if self.ndim != 1 or np.ndim(_t.array_of(vec2)) != 1:
            raise ShapeError(f"outer: expects two 1-D tensors, got shapes {self.shape} and "
                             f"{np.shape(_t.array_of(vec2))}")
        return self.reshape(-1, 1) * vec2.reshape(1, -1)

    def mv(self, vec):
        from .matrix_vector import mv
        return mv(self, vec)

    def addmv(self, mat, vec, *, beta=1, alpha=1):
        from .matrix_vector import addmv
        return addmv(self, mat, vec, beta=beta, alpha=alpha)

    def ger(self, vec2):
        from .matrix_vector import ger
        return ger(self, vec2)

    def addr(self, vec1, vec2, *, beta=1, alpha=1):
        from .matrix_vector import addr
        return addr(self, vec1, vec2, beta=beta, alpha=alpha)

    def addbmm(self, batch1, batch2, *, beta=1, alpha=1):
        from .matrix_vector import addbmm
        return addbmm(self, batch1, batch2, beta=beta, alpha=alpha)

    def inner(self, other):
        from .matrix_vector import inner
        return inner(self, other)

    def vdot(self, other):
        from .matrix_vector import vdot
        return vdot(self, other)

    def addmm(self, mat1, mat2, *, beta=1, alpha=1):
        from .composite import addmm
        return addmm(self, mat1, mat2, beta=beta, alpha=alpha)

    def baddbmm(self, batch1, batch2, *, beta=1, alpha=1):
        from .composite import baddbmm
        return baddbmm(self, batch1, batch2, beta=beta, alpha=alpha)
