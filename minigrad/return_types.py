"""The named pairs some Tensor methods return, as PyTorch's `torch.return_types`: `t.max(dim)`
gives a `max` whose fields are `values` and `indices`, and likewise `min`, `median`,
`kthvalue`, `sort`, `topk`, `mode`, `nanmedian`, `cummax` and `cummin`; `linalg.slogdet` gives
a `linalg_slogdet` (sign, logabsdet), `linalg.qr` a `linalg_qr` (Q, R), `linalg.svd` a `linalg_svd`
(U, S, Vh), `linalg.eigh` a `linalg_eigh` and `linalg.eig` a `linalg_eig` (eigenvalues,
eigenvectors), `linalg.lstsq` a
`linalg_lstsq` (solution, residuals, rank, singular_values), the `_ex` forms their result
and `info`, and the LU functions their factors; `aminmax` its (min, max); the older top-level `svd`, `qr`, `geqrf`,
`lu_unpack` and `triangular_solve` theirs; `frexp` its (mantissa, exponent) and `histogram`
its (hist, bin_edges)."""
from __future__ import annotations

from collections import namedtuple


def _pair(name):
    return namedtuple(name, ["values", "indices"], module=__name__)


max = _pair("max")  # noqa: A001  (PyTorch's names, which shadow builtins only in this module)
min = _pair("min")  # noqa: A001
median = _pair("median")
kthvalue = _pair("kthvalue")
sort = _pair("sort")
topk = _pair("topk")
mode = _pair("mode")
nanmedian = _pair("nanmedian")
linalg_slogdet = namedtuple("linalg_slogdet", ["sign", "logabsdet"], module=__name__)
linalg_qr = namedtuple("linalg_qr", ["Q", "R"], module=__name__)
linalg_svd = namedtuple("linalg_svd", ["U", "S", "Vh"], module=__name__)
linalg_eigh = namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"], module=__name__)
linalg_eig = namedtuple("linalg_eig", ["eigenvalues", "eigenvectors"], module=__name__)
linalg_lstsq = namedtuple("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"],
                          module=__name__)
linalg_inv_ex = namedtuple("linalg_inv_ex", ["inverse", "info"], module=__name__)
linalg_cholesky_ex = namedtuple("linalg_cholesky_ex", ["L", "info"], module=__name__)
linalg_solve_ex = namedtuple("linalg_solve_ex", ["result", "info"], module=__name__)
linalg_lu_factor = namedtuple("linalg_lu_factor", ["LU", "pivots"], module=__name__)
linalg_lu_factor_ex = namedtuple("linalg_lu_factor_ex", ["LU", "pivots", "info"],
                                 module=__name__)
linalg_lu = namedtuple("linalg_lu", ["P", "L", "U"], module=__name__)
lu_unpack = namedtuple("lu_unpack", ["P", "L", "U"], module=__name__)
svd = namedtuple("svd", ["U", "S", "V"], module=__name__)
qr = namedtuple("qr", ["Q", "R"], module=__name__)
geqrf = namedtuple("geqrf", ["a", "tau"], module=__name__)
triangular_solve = namedtuple("triangular_solve", ["solution", "cloned_coefficient"],
                              module=__name__)
cummax = _pair("cummax")
cummin = _pair("cummin")
aminmax = namedtuple("aminmax", ["min", "max"], module=__name__)
frexp = namedtuple("frexp", ["mantissa", "exponent"], module=__name__)
histogram = namedtuple("histogram", ["hist", "bin_edges"], module=__name__)
