"""diagonal, diag, trace, tril_indices, triu_indices (minigrad/matrix_parts.py), meshgrid,
tile, hstack, vstack, dstack, column_stack, atleast_1d/2d/3d, block_diag, diag_embed,
cartesian_prod (minigrad/tensor_assembly.py), nansum and nanmean (nan_reductions.py), diff
(differences.py), fmod (ops/truncated.py) and nan_to_num (ops/nonfinite.py) against PyTorch:
values, dtypes, gradients of both orders, errors."""
import warnings

import numpy as np
import pytest

import minigrad as mg
from helpers import same_as_torch
from minigrad.autograd import gradcheck, gradgradcheck

CUBE = np.arange(24.0).reshape(2, 3, 4) / 7 - 1
VECTOR = np.array([1.5, -2.0, 0.25])


@pytest.mark.parametrize("program", [
    lambda L, x, v: L.diagonal(x), lambda L, x, v: x.diagonal(1, 1, 2),
    lambda L, x, v: x.diagonal(-1, -1, 0), lambda L, x, v: x[0].diagonal(7),
    lambda L, x, v: x[0].t().diagonal(), lambda L, x, v: L.diag(v, -1), lambda L, x, v: v.diag(2),
    lambda L, x, v: L.diag(x[1], 1), lambda L, x, v: x[0].trace(),
    lambda L, x, v: L.trace(x[1].t()),
    lambda L, x, v: L.trace(x[0].long()), lambda L, x, v: L.diag(v.int()),
    lambda L, x, v: L.diag(v[:0]), lambda L, x, v: x[:, :0].diagonal(0, 1, 2),
])
def test_matrix_parts_as_pytorch(torch, program):
    same_as_torch(torch, program, CUBE, VECTOR)


def test_triangle_indices_as_pytorch(torch):
    for args, kw in (((3, 4), {}), ((4, 3, 1), {}), ((3, 3, -1), {}), ((0, 3), {}),
                     ((5, 2, -7), {}), ((3, 3), {"dtype": "int32"})):
        for name in ("tril_indices", "triu_indices"):
            want = getattr(torch, name)(*args, **{k: getattr(torch, v) for k, v in kw.items()})
            got = getattr(mg, name)(*args, **{k: getattr(mg, v) for k, v in kw.items()})
            assert str(got.dtype) == str(want.dtype).replace("torch.", "")
            assert got.numpy().tolist() == want.numpy().tolist()


@pytest.mark.parametrize("program", [
    lambda L, x, v: L.meshgrid(v, x[0, 0], indexing="ij"),
    lambda L, x, v: L.meshgrid([v, x[0, 0], v[1]], indexing="xy"),
    lambda L, x, v: L.meshgrid(v, indexing="xy"),
    lambda L, x, v: x[0].tile((2,)), lambda L, x, v: L.tile(v, (2, 1, 3)),
    lambda L, x, v: x.tile(2), lambda L, x, v: v[0].tile((3,)),
    lambda L, x, v: L.hstack([v, v[0], v[:0]]), lambda L, x, v: L.hstack((x, x[:, :1])),
    lambda L, x, v: L.vstack([v, v]), lambda L, x, v: L.vstack([x[0], v[:1].expand(1, 4)]),
    lambda L, x, v: L.vstack([v[0], v[1]]), lambda L, x, v: L.hstack([v.long(), v]),
])
def test_assembly_as_pytorch(torch, program):
    same_as_torch(torch, program, CUBE, VECTOR)


def test_meshgrid_without_indexing_warns_and_is_ij(torch):
    for lib in (torch, mg):
        with pytest.warns(UserWarning, match="indexing"):
            grids = lib.meshgrid(lib.arange(3), lib.arange(2))
        assert [tuple(g.shape) for g in grids] == [(3, 2), (3, 2)]


FMOD = (np.array([5.5, -7.25, 3.0, -0.5, 0.0, 9.0]), np.array([2.0, 2.0, -2.0, 0.3, 1.5, 0.0]))


@pytest.mark.parametrize("program", [
    lambda L, a, b: L.fmod(a, b), lambda L, a, b: a.fmod(2.5), lambda L, a, b: a.fmod(b[:1]),
    lambda L, a, b: L.fmod(a.long(), 3), lambda L, a, b: a.long().fmod(-4),
    lambda L, a, b: L.fmod(a.int(), b.abs().long() + 1), lambda L, a, b: a.float().fmod(b),
    lambda L, a, b: (a * 1).fmod_(b), lambda L, a, b: L.nan_to_num(a / b),
    lambda L, a, b: (a / b).nan_to_num(nan=0.5, posinf=3.0, neginf=-4.0),
    lambda L, a, b: L.nan_to_num((a / b).float()), lambda L, a, b: a.long().nan_to_num(),
    lambda L, a, b: (a / b).nan_to_num_(1.0),
])
def test_fmod_and_nan_to_num_as_pytorch(torch, program):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_as_torch(torch, program, *FMOD)


def test_gradients_of_both_orders():
    rng = np.random.default_rng(0)
    x = mg.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    v = mg.tensor(rng.standard_normal(3), requires_grad=True)
    for fn, args in ((lambda x: x.diagonal(1), [x]), (lambda v: v.diag(-1), [v]),
                     (lambda x: x.trace() * x, [x]), (lambda x: x.tile((2, 1, 2)), [x]),
                     (lambda x, v: mg.meshgrid(v, x[0], indexing="xy")[1] * x[1:2].t(), [x, v]),
                     (lambda x, v: mg.hstack([v, x[1]]) * mg.vstack([x, x]).sum(), [x, v]),
                     (lambda x, v: (mg.column_stack([v, x, v * v])
                                    * mg.dstack([x, x])[..., 1].sum()), [x, v]),
                     (lambda x, v: mg.atleast_3d(v) * mg.atleast_2d(x[0, 0]), [x, v]),
                     (lambda x, v: (mg.block_diag(x, v, x[0, 0])
                                    * mg.diag_embed(x, 1, 0, 2).sum()), [x, v]),
                     (lambda x, v: mg.cartesian_prod(v, x[1]) * v.sum(), [x, v]),
                     (lambda x, v: mg.diff(x * x, 2, 0, append=v.reshape(1, 3).t().expand(3, 4)),
                      [x, v]),
                     (lambda x: mg.nansum(x.masked_fill(x > 1, float("nan")) * x, 1)
                      + mg.nanmean(x.masked_fill(x < -1, float("nan")), 1), [x]),
                     (lambda x, v: mg.fmod(x * 3, v.reshape(3, 1) + 2.5), [x, v]),
                     (lambda x: (x / x.round()).nan_to_num(posinf=2.0) * x, [x])):
        with np.errstate(all="ignore"):
            assert gradcheck(fn, args) and gradgradcheck(fn, args)


def test_errors_as_pytorch(torch):
    for lib in (torch, mg):
        for fn, error in ((lambda: lib.ones(2, 2).diagonal(0, 1, -1), RuntimeError),
                          (lambda: lib.ones(2, 2, 2).diag(), RuntimeError),
                          (lambda: lib.ones(3).trace(), RuntimeError),
                          (lambda: lib.ones(2, 2).diagonal(0, 0, 2), IndexError),
                          (lambda: lib.meshgrid(lib.ones(2, 2), indexing="ij"), RuntimeError),
                          (lambda: lib.meshgrid(lib.ones(2), indexing="yx"), RuntimeError),
                          (lambda: lib.fmod(lib.tensor([3]), 0), RuntimeError),
                          (lambda: lib.vstack([]), RuntimeError)):
            with pytest.raises(error):
                fn()
    with pytest.raises(RuntimeError, match="diag\\(\\): Supports 1D or 2D tensors. Got 3D"):
        mg.ones(2, 2, 2).diag()
    with pytest.raises(RuntimeError, match="fmod: ZeroDivisionError"):
        mg.tensor([3, 4]).fmod(mg.tensor([1, 0]))
