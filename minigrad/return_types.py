"""The named pairs some Tensor methods return, as PyTorch's `torch.return_types`: `t.max(dim)`
gives a `max` whose fields are `values` and `indices`, and likewise `min`, `median`,
`kthvalue`, `sort`, `topk`, `mode`, `nanmedian`, `cummax` and `cummin`; `linalg.slogdet` gives
a `linalg_slogdet` (sign, logabsdet), `linalg.qr` a `linalg_qr` (Q, R), `linalg.svd` a `linalg_svd`
(U, S, Vh) and `linalg.eigh` a `linalg_eigh` (eigenvalues, eigenvectors)."""
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
cummax = _pair("cummax")
cummin = _pair("cummin")
