"""The named pairs some Tensor methods return, as PyTorch's `torch.return_types`: `t.max(dim)`
gives a `max` whose fields are `values` and `indices`, and likewise `min`, `median`,
`kthvalue`, `sort`, `topk`, `mode`, `nanmedian`, `cummax` and `cummin`; `linalg.slogdet` gives
a `linalg_slogdet` (sign, logabsdet), `linalg.qr` a `linalg_qr` (Q, R), `linalg.svd` a `linalg_svd`
(U, S, Vh), `linalg.eigh` a `linalg_eigh` and `linalg.eig` a `linalg_eig` (eigenvalues,
eigenvectors), `linalg.lstsq` a
`linalg_lstsq` (solution, residuals, rank, singular_values), the `_ex` forms their result
and `info`, and the LU functions their factors; `aminmax` its (min, max); the older top-level `svd`, `qr`, `geqrf`,
`lu_unpack` and `triangular_solve` theirs; `frexp` its (mantissa, exponent) and `histogram`
its (hist, bin_edges). Each prints as PyTorch's, one field a line, with minigrad's module:
`minigrad.return_types.topk(\nvalues=tensor([3., 2.]),\nindices=tensor([0, 2]))`."""
from __future__ import annotations

from collections import namedtuple


def _result(name, fields):
    """A named tuple whose repr is PyTorch's structseq repr (with minigrad's module name)."""
    cls = namedtuple(name, fields, module=__name__)

    def __repr__(self):
        body = ",\n".join(f"{field}={value!r}" for field, value in zip(self._fields, self))
        return f"minigrad.return_types.{name}(\n{body})"
    cls.__repr__ = __repr__
    return cls


def _pair(name):
    return _result(name, ["values", "indices"])


max = _pair("max")  # noqa: A001  (PyTorch's names, which shadow builtins only in this module)
min = _pair("min")  # noqa: A001
median = _pair("median")
kthvalue = _pair("kthvalue")
sort = _pair("sort")
topk = _pair("topk")
mode = _pair("mode")
nanmedian = _pair("nanmedian")
linalg_slogdet = _result("linalg_slogdet", ["sign", "logabsdet"])
linalg_qr = _result("linalg_qr", ["Q", "R"])
linalg_svd = _result("linalg_svd", ["U", "S", "Vh"])
linalg_eigh = _result("linalg_eigh", ["eigenvalues", "eigenvectors"])
linalg_eig = _result("linalg_eig", ["eigenvalues", "eigenvectors"])
linalg_lstsq = _result("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])
linalg_inv_ex = _result("linalg_inv_ex", ["inverse", "info"])
linalg_cholesky_ex = _result("linalg_cholesky_ex", ["L", "info"])
linalg_solve_ex = _result("linalg_solve_ex", ["result", "info"])
linalg_lu_factor = _result("linalg_lu_factor", ["LU", "pivots"])
linalg_lu_factor_ex = _result("linalg_lu_factor_ex", ["LU", "pivots", "info"])
linalg_lu = _result("linalg_lu", ["P", "L", "U"])
lu_unpack = _result("lu_unpack", ["P", "L", "U"])
svd = _result("svd", ["U", "S", "V"])
qr = _result("qr", ["Q", "R"])
geqrf = _result("geqrf", ["a", "tau"])
triangular_solve = _result("triangular_solve", ["solution", "cloned_coefficient"])
cummax = _pair("cummax")
cummin = _pair("cummin")
aminmax = _result("aminmax", ["min", "max"])
frexp = _result("frexp", ["mantissa", "exponent"])
histogram = _result("histogram", ["hist", "bin_edges"])
