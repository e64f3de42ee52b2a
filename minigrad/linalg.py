"""`torch.linalg` as `minigrad.linalg`: norms (`linalg_norms.py`), the inverse and linear
systems (`linalg_inverse.py`), triangular systems (`linalg_triangular.py`), determinants
(`linalg_det.py`), the Cholesky and QR factorizations (`linalg_factor.py`), the singular value
decomposition (`linalg_svd.py`), the eigendecomposition of symmetric matrices
(`linalg_eigh.py`), the pseudo-inverse and the rank (`linalg_pinv.py`), least squares
(`linalg_lstsq.py`), products (`linalg_products.py`) and the cross product
(`tensor_products.py`), computed by NumPy's LAPACK in the input's float dtype, with gradients
of every order and forward-mode tangents. A matrix a computation cannot handle raises
`LinAlgError`, a `RuntimeError`.
"""
from .linalg_checks import LinAlgError
from .linalg_det import det, slogdet
from .linalg_eigh import eigh, eigvalsh
from .linalg_factor import cholesky, qr
from .linalg_inverse import inv, solve
from .linalg_lstsq import lstsq
from .linalg_norms import matrix_norm, norm, vector_norm
from .linalg_pinv import matrix_rank, pinv
from .linalg_products import diagonal, matmul, matrix_power, multi_dot, vecdot
from .linalg_svd import svd, svdvals
from .linalg_triangular import solve_triangular
from .tensor_products import linalg_cross as cross

__all__ = ["LinAlgError", "cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv",
           "lstsq", "matmul", "matrix_norm", "matrix_power", "matrix_rank", "multi_dot", "norm",
           "pinv", "qr", "slogdet", "solve", "solve_triangular", "svd", "svdvals", "vecdot",
           "vector_norm"]
