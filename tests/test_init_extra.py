"""nn.init.trunc_normal_, sparse_, orthogonal_ and eye_: their values follow PyTorch's
distributions; trunc_normal_ and sparse_ draw PyTorch's very numbers (orthogonal_'s QR rounds
differently)."""
from statistics import NormalDist

import numpy as np
import pytest

import minigrad as mg
from minigrad.nn import init


def test_trunc_normal_stays_in_bounds_with_the_truncated_moments(torch):
    mg.manual_seed(0)
    w = init.trunc_normal_(mg.empty(400, 250), mean=0.1, std=0.5, a=-0.5, b=0.6)
    x = w.numpy()
    assert x.min() >= -0.5 and x.max() <= 0.6 and w.dtype == np.float32
    ref = torch.nn.init.trunc_normal_(torch.empty(400, 250), mean=0.1, std=0.5, a=-0.5,
                                      b=0.6).numpy()
    # the truncated normal's mean and std (closed form), matched by both libraries
    d = NormalDist()
    alpha, beta = (-0.5 - 0.1) / 0.5, (0.6 - 0.1) / 0.5
    z = d.cdf(beta) - d.cdf(alpha)
    mean = 0.1 + 0.5 * (d.pdf(alpha) - d.pdf(beta)) / z
    var = 0.25 * (1 + (alpha * d.pdf(alpha) - beta * d.pdf(beta)) / z
                  - ((d.pdf(alpha) - d.pdf(beta)) / z) ** 2)
    for sample in (x, ref):
        assert abs(sample.mean() - mean) < 0.005 and abs(sample.std() - var ** 0.5) < 0.005
    mg.manual_seed(0)
    again = init.trunc_normal_(mg.empty(400, 250), mean=0.1, std=0.5, a=-0.5, b=0.6)
    np.testing.assert_array_equal(again.numpy(), x)  # seeded: it repeats


@pytest.mark.parametrize("kwargs", [dict(std=0.02), dict(mean=0.1, std=0.5, a=-0.5, b=0.6), dict(),
                                    dict(a=1.5, b=3.0), dict(mean=4.0, a=-1.0, b=1.0)])
@pytest.mark.parametrize("shape", [(3, 5), (64, 33)])
def test_trunc_normal_draws_pytorchs_numbers(torch, kwargs, shape):
    # both of PyTorch's samplers: normals redrawn where outside [a, b] when the interval holds
    # more than 0.3 of the mass, else uniform proposals accepted by the density ratio
    drawn = []
    for lib in (torch, mg):
        lib.manual_seed(0)
        with pytest.warns(UserWarning) if kwargs.get("mean") == 4.0 else _no_warning():
            w = lib.nn.init.trunc_normal_(lib.empty(*shape), **kwargs)
        drawn.append((w.numpy().copy(), lib.rand(3).numpy()))
    np.testing.assert_array_equal(drawn[1][0], drawn[0][0])
    np.testing.assert_array_equal(drawn[1][1], drawn[0][1])  # the stream after them too


def _no_warning():
    import contextlib
    return contextlib.nullcontext()


@pytest.mark.parametrize("shape, sparsity", [((3, 5), 0.4), ((10, 4), 0.1), ((7, 7), 0.9)])
def test_sparse_draws_pytorchs_numbers(torch, shape, sparsity):
    drawn = []
    for lib in (torch, mg):
        lib.manual_seed(1)
        w = lib.nn.init.sparse_(lib.empty(*shape), sparsity, std=0.5)
        drawn.append((w.numpy().copy(), lib.rand(3).numpy()))
    np.testing.assert_array_equal(drawn[1][0], drawn[0][0])
    np.testing.assert_array_equal(drawn[1][1], drawn[0][1])
    zeros = (drawn[1][0] == 0).sum(axis=0)
    assert (zeros == int(np.ceil(sparsity * shape[0]))).all()


def test_sparse_needs_a_matrix():
    with pytest.raises(ValueError, match="2 dimensions"):
        init.sparse_(mg.empty(3), 0.5)


def test_trunc_normal_with_the_usual_transformer_std():
    w = init.trunc_normal_(mg.empty(256, 256), std=0.02)  # bounds +-2 are 100 std away
    assert abs(float(w.std()) - 0.02) < 0.001 and abs(float(w.mean())) < 0.001


@pytest.mark.parametrize("shape", [(20, 50), (50, 20), (8, 3, 5), (1, 1)])
def test_orthogonal_rows_or_columns_are_orthonormal(shape):
    w = init.orthogonal_(mg.empty(*shape), gain=1.5).numpy().reshape(shape[0], -1)
    small = min(w.shape)
    gram = w @ w.T if w.shape[0] == small else w.T @ w
    np.testing.assert_allclose(gram, 2.25 * np.eye(small), atol=1e-5)


def test_eye_and_errors():
    np.testing.assert_array_equal(init.eye_(mg.empty(2, 3)).numpy(), np.eye(2, 3))
    with pytest.raises(ValueError, match=r"eye_: only 2-D tensors are supported, got shape "
                                         r"minigrad.Size\(\[2, 2, 2\]\)"):
        init.eye_(mg.empty(2, 2, 2))
    with pytest.raises(ValueError, match="orthogonal_: only tensors with 2 or more dimensions"):
        init.orthogonal_(mg.empty(3))
    with pytest.raises(ValueError, match="trunc_normal_: a must be below b"):
        init.trunc_normal_(mg.empty(3), a=1.0, b=-1.0)
    with pytest.warns(UserWarning, match="more than 2 std from"):  # far in the tail: sampled
        far = init.trunc_normal_(mg.empty(300), a=10.0, b=11.0).numpy()
    assert far.min() >= 10.0 and far.max() <= 11.0 and far.mean() < 10.2


@pytest.mark.parametrize("shape, groups", [((4, 4, 3), 1), ((6, 2, 3, 3), 2), ((3, 5, 2, 4), 1),
                                           ((4, 2, 3, 2, 3), 2), ((6, 4, 1, 1), 3)])
def test_dirac_is_pytorchs(torch, shape, groups):
    want = torch.nn.init.dirac_(torch.empty(*shape, dtype=torch.float64), groups=groups)
    got = init.dirac_(mg.empty(*shape, dtype=mg.float64), groups=groups)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    x = np.random.default_rng(0).standard_normal((1, shape[1] * groups) + (5,) * (len(shape) - 2))
    conv = {3: "conv1d", 4: "conv2d", 5: "conv3d"}[len(shape)]
    if shape[0] // groups <= shape[1] and all(k % 2 for k in shape[2:]):  # passes input through
        y = getattr(mg.nn.functional, conv)(mg.tensor(x), got, padding="same", groups=groups)
        kept = [g * shape[1] + d for g in range(groups) for d in range(shape[0] // groups)]
        np.testing.assert_array_equal(y.numpy(), x[:, kept])


def test_dirac_errors_name_the_shape(torch):
    for lib in (torch, mg):
        with pytest.raises(ValueError, match="3, 4, or 5 dimensions"):
            lib.nn.init.dirac_(lib.empty(2, 3))
        with pytest.raises(ValueError, match="divisible by groups"):
            lib.nn.init.dirac_(lib.empty(5, 2, 3), groups=2)
