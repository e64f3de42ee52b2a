"""`torch.linalg` as `minigrad.linalg`: norms (`linalg_norms.py`) and the condition number
(`linalg_cond.py`), the inverse and linear systems (`linalg_inverse.py`, their forms with
`info` in `linalg_ex.py`, their tensor forms in `linalg_tensor.py`), triangular systems
(`linalg_triangular.py`), determinants (`linalg_det.py`), the Cholesky and QR factorizations
(`linalg_factor.py`) and the product of Householder reflections that forms QR's Q
(`linalg_householder.py`), the LU factorization (`linalg_lu.py`), the singular value decomposition
(`linalg_svd.py`), the eigendecomposition of symmetric matrices (`linalg_eigh.py`) and of
general ones, complex (`linalg_eig.py`), the
pseudo-inverse and the rank (`linalg_pinv.py`), least squares (`linalg_lstsq.py`), the
matrix exponential (`linalg_matrix_exp.py`), products (`linalg_products.py`), the
Vandermonde matrix (`linalg_vander.py`) and the cross product (`tensor_products.py`),
computed by NumPy's LAPACK (or in NumPy) in the input's float dtype, with gradients of every
order; complex input (inv, solve, det, slogdet, the norms, svd, svdvals, qr, cholesky, eigh,
eigvalsh, eig, eigvals) has first derivatives in PyTorch's complex convention. A matrix a
computation cannot handle raises `LinAlgError`, a `RuntimeError`.
"""
from . import out_arg as _out_arg
from .out_names import OUT_NAMES as _OUT_NAMES
from .linalg_checks import LinAlgError
from .linalg_cond import cond
from .linalg_det import det, slogdet
from .linalg_eig import eig, eigvals
from .linalg_eigh import eigh, eigvalsh
from .linalg_ex import cholesky_ex, inv_ex, solve_ex
from .linalg_factor import cholesky, qr
from .linalg_householder import householder_product
from .linalg_inverse import inv, solve
from .linalg_lstsq import lstsq
from .linalg_lu import lu, lu_factor, lu_factor_ex, lu_solve
from .linalg_matrix_exp import matrix_exp
from .linalg_norms import matrix_norm, norm, vector_norm
from .linalg_pinv import matrix_rank, pinv
from .linalg_products import diagonal, matmul, matrix_power, multi_dot, vecdot
from .linalg_svd import svd, svdvals
from .linalg_tensor import tensorinv, tensorsolve
from .linalg_triangular import solve_triangular
from .linalg_vander import vander
from .tensor_products import linalg_cross as cross

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eig",
           "eigh", "eigvals", "eigvalsh", "householder_product", "inv", "inv_ex", "lstsq", "lu",
           "lu_factor", "lu_factor_ex", "lu_solve", "matmul", "matrix_exp", "matrix_norm",
           "matrix_power", "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet", "solve",
           "solve_ex", "solve_triangular", "svd", "svdvals", "tensorinv", "tensorsolve", "vander",
           "vecdot", "vector_norm"]

# PyTorch's out= on every function here whose PyTorch counterpart takes it (out_arg.py)
globals().update(_out_arg.accept_out(globals(), _OUT_NAMES['linalg'], 'linalg_'))
