"""The simplex, matrix and structural transforms and biject_to / transform_to against
torch.distributions: forward and inverse values, log |det J|, shapes, domains and codomains,
gradients in float32 and float64, the errors; float64 gradient checks; a TransformedDistribution
of a Normal through StickBreaking / CorrCholesky has PyTorch's log_prob."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck
from minigrad.distributions import biject_to, constraints, transform_to, transforms as T

from test_distributions import _compare

rng = np.random.default_rng(23)
V = rng.standard_normal((4, 3))        # vectors: (4, 3) -> simplex (4, 4), corr (4, 3, 3)
M = rng.standard_normal((2, 3, 3))     # square matrices
W = rng.standard_normal((3, 2, 4))     # for reshape / cat / stack


def _roundtrip(t, x):
    """y, the inverse of y, and log |det J| where the transform is bijective."""
    y = t(x)
    return [y, t.inv(y)] + ([t.log_abs_det_jacobian(x, y)] if t.bijective else [])


def _vector_transforms(lib, v, m, w):
    Tr = lib.distributions.transforms
    out = []
    for t in (Tr.StickBreakingTransform(), Tr.CorrCholeskyTransform()):
        out += _roundtrip(t, v)
        out += _roundtrip(t, v[0])  # an unbatched vector
    soft = Tr.SoftmaxTransform()
    out += [soft(v), soft.inv(soft(v)), soft(m)]
    out += [Tr.StickBreakingTransform().inv(soft(v))]
    return out


def _matrix_transforms(lib, v, m, w):
    Tr = lib.distributions.transforms
    low, pd = Tr.LowerCholeskyTransform(), Tr.PositiveDefiniteTransform()
    return [low(m), low.inv(low(m)), pd(m), pd.inv(pd(m)), low(m[0])]


def _structured(lib, v, m, w):
    Tr = lib.distributions.transforms
    out = _roundtrip(Tr.ReshapeTransform((2, 4), (8,)), w)
    out += _roundtrip(Tr.ReshapeTransform((4,), (2, 2)), w)
    out += _roundtrip(Tr.IndependentTransform(Tr.ExpTransform(), 2), w)
    out += _roundtrip(Tr.IndependentTransform(Tr.StickBreakingTransform(), 1), w)
    exp, sig = Tr.ExpTransform(), Tr.SigmoidTransform()
    out += _roundtrip(Tr.CatTransform([exp, sig, Tr.identity_transform], 0, [1, 1, 1]), w)
    out += _roundtrip(Tr.CatTransform([exp, sig], -1, [3, 1]), w)
    out += _roundtrip(Tr.CatTransform([Tr.IndependentTransform(exp, 1), sig], -1, [2, 2]), w)
    out += _roundtrip(Tr.CatTransform([Tr.IndependentTransform(exp, 1), sig], 0, [2, 1]), w)
    out += _roundtrip(Tr.StackTransform([exp, sig], 1), w)
    out += _roundtrip(Tr.StackTransform([exp, sig, Tr.AffineTransform(1.0, 2.0)], 0), w)
    return out


def _registries(lib, v, m, w):
    D = lib.distributions
    C = D.constraints
    out = []
    for c in (C.real, C.positive, C.nonnegative, C.greater_than(-1.5), C.greater_than_eq(2.0),
              C.less_than(0.5), C.unit_interval, C.interval(-2.0, 3.0),
              C.half_open_interval(1.0, 4.0), C.simplex, C.real_vector,
              C.independent(C.positive, 1), C.corr_cholesky,
              C.cat([C.positive, C.unit_interval], -1, [3, 1]),
              C.stack([C.positive, C.real], 1)):
        for registry in (D.biject_to, D.transform_to):
            out += _roundtrip(registry(c), w if type(c).__name__ in ("_Cat", "_Stack") else v)
    for c in (C.lower_cholesky, C.positive_definite, C.positive_semidefinite):
        t = D.transform_to(c)
        out += [t(m), t.inv(t(m))]
    out += [D.transform_to(C.interval(v[0, 0] - 3.0, v[0, 1] + 3.0))(v)]  # tensor bounds
    return out


def _distributions(lib, v, m, w):
    D = lib.distributions
    Tr = D.transforms
    base = D.Normal(v, 1.0)
    sb = D.TransformedDistribution(D.Independent(base, 1), Tr.StickBreakingTransform())
    simplex = Tr.StickBreakingTransform()(v * 0.5)
    corr = D.TransformedDistribution(D.Independent(base, 1), Tr.CorrCholeskyTransform())
    factor = Tr.CorrCholeskyTransform()(v * 0.7)
    resh = D.TransformedDistribution(D.Independent(base, 2), Tr.ReshapeTransform((4, 3), (2, 6)))
    return [sb.log_prob(simplex), corr.log_prob(factor), resh.log_prob(v.reshape(2, 6) * 0.3)]


PROGRAMS = {"vector": _vector_transforms, "matrix": _matrix_transforms,
            "structured": _structured, "registries": _registries,
            "distributions": _distributions}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_torch(torch, name, dtype):
    # the inverse of PositiveDefinite goes through a Cholesky factorisation, which float32
    # rounds differently in the two libraries
    _compare(torch, PROGRAMS[name], [V, M, W], dtype,
             grad_tol=2e-4 if dtype == "float32" and name in ("matrix", "registries") else None)


def _pairs(lib):
    Tr, C = lib.distributions.transforms, lib.distributions.constraints
    exp = Tr.ExpTransform()
    return [Tr.SoftmaxTransform(), Tr.StickBreakingTransform(), Tr.LowerCholeskyTransform(),
            Tr.PositiveDefiniteTransform(), Tr.CorrCholeskyTransform(),
            Tr.ReshapeTransform((2, 3), (6,)), Tr.IndependentTransform(exp, 2),
            Tr.CatTransform([exp, Tr.IndependentTransform(exp, 1)], -1, [2, 4]),
            Tr.StackTransform([exp, Tr.SigmoidTransform()], -1),
            lib.distributions.biject_to(C.cat([C.positive, C.simplex], -1, [1, 3])),
            lib.distributions.transform_to(C.independent(C.interval(0.0, 2.0), 1))]


SHAPES = [(6,), (4, 6), (2, 3, 6), (3, 3), (5, 2, 3), (2, 6), (4, 2)]


def test_shapes_flags_and_constraints_match_torch(torch):
    for tm, tt in zip(_pairs(mg), _pairs(torch)):
        for attr in ("bijective", "event_dim"):
            try:
                expected = getattr(tt, attr)
            except ValueError:  # domain and codomain of different event dims
                with pytest.raises(ValueError):
                    getattr(tm, attr)
                continue
            assert getattr(tm, attr) == expected, (tt, attr)
        assert tm.domain.event_dim == tt.domain.event_dim, tt
        assert tm.codomain.event_dim == tt.codomain.event_dim, tt
        assert repr(tm.codomain) == repr(tt.codomain), tt
        assert tm == tm and tm.inv.inv is tm
        for shape in SHAPES:
            for name in ("forward_shape", "inverse_shape"):
                try:
                    expected = tuple(getattr(tt, name)(torch.Size(shape)))
                except (ValueError, IndexError):
                    with pytest.raises((ValueError, IndexError)):
                        getattr(tm, name)(shape)
                    continue
                assert tuple(getattr(tm, name)(shape)) == expected, (tt, name, shape)


def test_new_constraints_match_torch(torch):
    C, TC = constraints, torch.distributions.constraints
    tril = np.linalg.cholesky(M @ np.swapaxes(M, -1, -2) + np.eye(3))
    corr = tril / np.linalg.norm(tril, axis=-1, keepdims=True)
    psd = np.stack([M[0] @ M[0].T, np.diag([1.0, 0.0, 2.0])])
    values = [corr, tril, M, psd, psd + M * 1e-3, W, np.abs(W), W[..., :3, :3]]
    pairs = [(C.corr_cholesky, TC.corr_cholesky), (C.square, TC.square),
             (C.symmetric, TC.symmetric), (C.positive_semidefinite, TC.positive_semidefinite),
             (C.cat([C.positive, C.real], -1, [2, 1]), TC.cat([TC.positive, TC.real], -1, [2, 1])),
             (C.stack([C.positive, C.real], -2), TC.stack([TC.positive, TC.real], -2))]
    for cm, ct in pairs:
        assert cm.event_dim == ct.event_dim and repr(cm) == repr(ct)
        for v in values:
            try:
                expected = ct.check(torch.tensor(v)).numpy()
            except (RuntimeError, IndexError, AssertionError):
                continue  # shapes that constraint does not take
            np.testing.assert_array_equal(np.asarray(cm.check(v)), expected, err_msg=repr(ct))


def test_errors_match_torch(torch):
    for lib in (torch, mg):
        D = lib.distributions
        Tr, C = D.transforms, D.constraints
        with pytest.raises(ValueError, match="different numbers of elements"):
            Tr.ReshapeTransform((2, 3), (5,))
        with pytest.raises(ValueError, match="Shape mismatch"):
            Tr.ReshapeTransform((2, 3), (6,)).forward_shape((4, 3, 2))
        with pytest.raises(ValueError, match="Too few dimensions"):
            Tr.StickBreakingTransform().forward_shape(())
        with pytest.raises(ValueError, match="lower-diagonal"):
            Tr.CorrCholeskyTransform().forward_shape((4,))
        with pytest.raises(ValueError, match="not square"):
            Tr.CorrCholeskyTransform().inverse_shape((3, 4))
        with pytest.raises(AssertionError):
            Tr.CatTransform([Tr.ExpTransform()], 0, [2])(lib.ones(3))
        with pytest.raises(AssertionError):
            Tr.StackTransform([Tr.ExpTransform()] * 2, 0)(lib.ones(3, 2))
        with pytest.raises(NotImplementedError, match="Cannot transform _LowerCholesky"):
            D.biject_to(C.lower_cholesky)
        with pytest.raises(NotImplementedError, match="Cannot transform _Boolean"):
            D.transform_to(C.boolean)
        with pytest.raises(TypeError, match="Constraint subclass or instance"):
            D.biject_to.register(int, lambda c: None)


def test_register_a_new_constraint():
    class Band(constraints.Constraint):
        def check(self, value):
            return (value > 1) & (value < 5)

    transform_to.register(Band, lambda c: T.ComposeTransform([T.SigmoidTransform(),
                                                              T.AffineTransform(1.0, 4.0)]))
    y = transform_to(Band())(mg.tensor([-3.0, 0.0, 3.0]))
    assert Band().check(y.numpy()).all()
    with pytest.raises(NotImplementedError):
        biject_to(Band())


def test_gradchecks():
    v = mg.tensor(V[:2], requires_grad=True)
    m = mg.tensor(M, requires_grad=True)
    w = mg.tensor(W, requires_grad=True)

    def vector(v):
        out = []
        for t in (T.StickBreakingTransform(), T.CorrCholeskyTransform(), T.SoftmaxTransform()):
            y = t(v)
            out += [y.sum(), t.inv(y).sum()]
            if t.bijective:
                out.append(t.log_abs_det_jacobian(v, y).sum())
        return sum(o * (i + 1) for i, o in enumerate(out))

    def matrix(m):
        pd = T.PositiveDefiniteTransform()
        return pd(m).sum() + pd.inv(pd(m) + 0.0).sum() + T.LowerCholeskyTransform()(m).sum()

    def structured(w):
        exp, sig = T.ExpTransform(), T.SigmoidTransform()
        out = 0
        for t in (T.CatTransform([T.IndependentTransform(exp, 1), sig], -1, [2, 2]),
                  T.StackTransform([exp, sig], 1), T.ReshapeTransform((2, 4), (8,)),
                  T.IndependentTransform(sig, 1), biject_to(constraints.simplex)):
            y = t(w)
            out = out + y.sum() + t.inv(y).sum() + t.log_abs_det_jacobian(w, y).sum()
        return out

    assert gradcheck(vector, [v])
    assert gradcheck(matrix, [m])
    assert gradcheck(structured, [w])


def test_cache_returns_the_x_given():
    for t in (T.StickBreakingTransform(cache_size=1), T.CorrCholeskyTransform(cache_size=1),
              T.CatTransform([T.ExpTransform()], 0, [4], cache_size=1),
              T.ReshapeTransform((3,), (3, 1)).with_cache(),
              T.IndependentTransform(T.TanhTransform(), 1, cache_size=1)):
        x = mg.tensor(V)
        assert t.inv(t(x)) is x


def test_constraint_checks_take_tensors_as_in_torch(torch):
    C, TC = constraints, torch.distributions.constraints
    simplex = np.abs(W) / np.abs(W).sum(-1, keepdims=True)
    for cm, ct, v in ((C.simplex, TC.simplex, simplex), (C.simplex, TC.simplex, W),
                      (C.positive, TC.positive, W), (C.unit_interval, TC.unit_interval, simplex),
                      (C.corr_cholesky, TC.corr_cholesky, T.CorrCholeskyTransform()(
                          mg.tensor(V)).numpy()), (C.real_vector, TC.real_vector, V),
                      (C.independent(C.positive, 2), TC.independent(TC.positive, 2), W)):
        got, want = cm.check(mg.tensor(v)), ct.check(torch.tensor(v))
        assert isinstance(got, mg.Tensor) and got.dtype == mg.bool
        np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=repr(ct))
        assert bool(got.all()) == bool(want.all())
