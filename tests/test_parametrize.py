"""nn.utils.parametrize and parametrizations (weight_norm, spectral_norm, orthogonal), the
legacy weight_norm and spectral_norm, and fusion: float64 gradient checks, and PyTorch's
values, gradients, state-dict keys, training/eval behaviour and errors."""
import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck
from minigrad.nn.utils import parametrize
from minigrad.nn.utils.parametrizations import _Orthogonal, _SpectralNorm, _WeightNorm

rng = np.random.default_rng(3)
W3 = rng.standard_normal((2, 3)).astype(np.float32)


def f64(*shape):
    return mg.tensor(rng.standard_normal(shape), requires_grad=True)


def copy_weights(lib, module, arrays):
    with lib.no_grad():
        for p, a in zip(module.parameters(), arrays):
            p.copy_(lib.tensor(a))
    return module


@pytest.mark.parametrize("dim", [0, 1, None, 2])
def test_weight_norm_gradcheck(dim):
    v = f64(3, 4, 2)
    g_shape = {0: (3, 1, 1), 1: (1, 4, 1), 2: (1, 1, 2), None: ()}[dim]
    g = mg.tensor(rng.uniform(0.5, 2, g_shape), requires_grad=True)
    assert gradcheck(lambda g, v: _WeightNorm(dim)(g, v), (g, v))


def test_spectral_norm_gradcheck_in_eval():
    w = f64(4, 3, 2)
    sn = _SpectralNorm(w.detach(), dim=1).double()
    sn.eval()  # no power iteration: sigma is a function of the weight alone
    assert gradcheck(sn, (w,))
    assert gradcheck(_SpectralNorm(f64(5).detach()), (f64(5),))  # 1-d: normalised


@pytest.mark.parametrize("kind, shape", [("matrix_exp", (3, 3)), ("cayley", (3, 3)),
                                         ("matrix_exp", (4, 2)), ("cayley", (2, 4)),
                                         ("householder", (4, 3)), ("householder", (2, 3, 2))])
def test_orthogonal_maps_gradcheck_and_orthogonality(kind, shape):
    x = f64(*shape)
    if kind == "householder":  # the diagonal holds the signs (as its right_inverse leaves it)
        a = x.detach().numpy().copy()
        idx = np.arange(min(shape[-2:]))
        a[..., idx, idx] = np.where(a[..., idx, idx] < 0, -1.5, 1.5)  # int(): -1, 1
        x = mg.tensor(a, requires_grad=True)
    orth = _Orthogonal(x.detach(), kind, use_trivialization=False)
    assert gradcheck(orth, (x,))
    q = orth(x).detach()
    small = min(shape[-2:])
    gram = q.mT @ q if shape[-2] >= shape[-1] else q @ q.mT
    np.testing.assert_allclose(gram.numpy(), np.broadcast_to(np.eye(small), gram.shape),
                               atol=1e-10)


def test_spectral_norm_loads_pytorchs_state_and_follows_its_training_and_eval(torch):
    w = rng.standard_normal((5, 3, 2, 2)).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)
    x = rng.standard_normal((2, 5, 4, 4)).astype(np.float32)
    mods = {}
    for lib in (torch, mg):
        conv = copy_weights(lib, lib.nn.ConvTranspose2d(5, 3, 2), [w, b])
        mods[lib.__name__] = lib.nn.utils.parametrizations.spectral_norm(conv,
                                                                         n_power_iterations=3)
    t, m = mods["torch"], mods["minigrad"]
    assert m.parametrizations.weight[0].dim == 1  # transposed convolutions: dim 1
    m.load_state_dict({k: v.numpy() for k, v in t.state_dict().items()})
    for mode in ("train", "train", "eval", "eval"):
        getattr(t, mode)()
        getattr(m, mode)()
        yt, ym = t(torch.tensor(x)), m(mg.tensor(x))
        np.testing.assert_allclose(ym.detach().numpy(), yt.detach().numpy(), rtol=1e-4,
                                   atol=1e-5)
        for k, v in t.state_dict().items():
            np.testing.assert_allclose(m.state_dict()[k].numpy(), v.numpy(), rtol=1e-4,
                                       atol=1e-6, err_msg=f"{mode} {k}")


def test_spectral_norm_of_the_weight_is_one_after_iterations():
    m = mg.nn.utils.parametrizations.spectral_norm(mg.nn.Linear(6, 4), n_power_iterations=30)
    m(mg.ones(1, 6))
    assert np.linalg.svd(m.weight.detach().numpy(), compute_uv=False)[0] == \
        pytest.approx(1.0, rel=1e-4)


def test_parametrize_registration_assignment_cache_and_removal(torch):
    class Skew(mg.nn.Module):
        def forward(self, X):
            A = X.triu(1)
            return A - A.T

    m = mg.nn.Linear(3, 3)
    parametrize.register_parametrization(m, "weight", Skew())
    assert type(m).__name__ == "ParametrizedLinear" and parametrize.is_parametrized(m, "weight")
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original"]
    np.testing.assert_allclose(m.weight.detach().numpy(), -m.weight.detach().numpy().T)
    with pytest.raises(RuntimeError, match="does not implement right_inverse"):
        m.weight = mg.zeros(3, 3)
    calls = []
    m.parametrizations.weight[0].register_forward_hook(lambda *a: calls.append(1))
    with parametrize.cached():
        first = m.weight
        assert m.weight is first
    assert len(calls) == 1
    m(mg.ones(2, 3)).sum().backward()  # gradients reach the original through the property
    assert m.parametrizations.weight.original.grad is not None
    w = m.weight.detach().numpy().copy()
    parametrize.remove_parametrizations(m, "weight")
    assert type(m) is mg.nn.Linear and isinstance(m.weight, mg.nn.Parameter)
    np.testing.assert_allclose(m.weight.detach().numpy(), w)
    assert list(m.state_dict()) == ["bias", "weight"]  # registered again, last: PyTorch's order
    with pytest.raises(ValueError, match="does not have a parametrization on weight"):
        parametrize.remove_parametrizations(m, "weight")
    with pytest.raises(ValueError, match="does not have a parameter, a buffer"):
        parametrize.register_parametrization(m, "nope", Skew())


def test_unsafe_and_shape_errors_as_pytorch(torch):
    for lib in (torch, mg):
        class Double(lib.nn.Module):
            def forward(self, X):
                return lib.cat([X, X])
        with pytest.raises(ValueError, match="may not change the shape"):
            lib.nn.utils.parametrize.register_parametrization(lib.nn.Linear(2, 2), "weight",
                                                              Double())
        m = lib.nn.utils.parametrize.register_parametrization(lib.nn.Linear(2, 2), "weight",
                                                              Double(), unsafe=True)
        assert tuple(m.weight.shape) == (4, 2)


def test_weight_norm_remove_leaves_the_weight_and_legacy_state_loads(torch):
    w = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        legacy = torch.nn.utils.weight_norm(copy_weights(torch, torch.nn.Linear(4, 3), [w, b]))
    m = mg.nn.utils.parametrizations.weight_norm(mg.nn.Linear(4, 3))
    m.load_state_dict({k: v.detach().numpy() for k, v in legacy.state_dict().items()})
    x = rng.standard_normal((2, 4)).astype(np.float32)
    np.testing.assert_allclose(m(mg.tensor(x)).detach().numpy(),
                               legacy(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
    parametrize.remove_parametrizations(m, "weight")
    np.testing.assert_allclose(m.weight.detach().numpy(), w, rtol=1e-5, atol=1e-6)
    m2 = mg.nn.utils.parametrizations.weight_norm(mg.nn.Linear(4, 3))
    with pytest.raises(ValueError, match="sequence of tensors"):
        parametrize.remove_parametrizations(m2, "weight", leave_parametrized=False)


def test_orthogonal_assignment_is_exact_and_errors(torch):
    m = mg.nn.utils.parametrizations.orthogonal(mg.nn.Linear(4, 4))
    q = np.linalg.qr(rng.standard_normal((4, 4)))[0].astype(np.float32)
    with mg.no_grad():
        m.weight = mg.tensor(q)
    np.testing.assert_allclose(m.weight.detach().numpy(), q, atol=1e-5)
    for lib in (torch, mg):
        with pytest.raises(ValueError, match="orthogonal_map has to be one of"):
            lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 3), orthogonal_map="qr")
        with pytest.raises(ValueError, match="Expected a matrix or batch of matrices"):
            lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 3), "bias")
        with pytest.raises(ValueError, match="n_power_iterations to be positive"):
            lib.nn.utils.parametrizations.spectral_norm(lib.nn.Linear(3, 3),
                                                        n_power_iterations=0)


def test_legacy_hooks_refuse_twice_and_remove_errors(torch):
    for lib in (torch, mg):
        m = lib.nn.utils.spectral_norm(lib.nn.Linear(3, 3))
        with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
            lib.nn.utils.spectral_norm(m)
        with pytest.raises(ValueError, match="weight_norm of 'weight' not found"):
            lib.nn.utils.remove_weight_norm(m)
        m.eval()
        u = m.weight_u.clone()
        m(lib.ones(1, 3))
        assert (m.weight_u == u).all()  # eval: no power iteration


def test_fused_conv_bn_gradients_match_pytorch(torch):
    outs = []
    for lib in (torch, mg):
        lib.manual_seed(0)
        conv = copy_weights(lib, lib.nn.Conv1d(2, 3, 3, bias=False),
                            [np.linspace(-1, 1, 18, dtype=np.float32).reshape(3, 2, 3)])
        bn = copy_weights(lib, lib.nn.BatchNorm1d(3), [np.array([1.0, 2.0, 0.5], np.float32),
                                                     np.array([0.1, 0.2, 0.3], np.float32)])
        conv.eval()
        bn.eval()
        fused = lib.nn.utils.fuse_conv_bn_eval(conv, bn)
        x = lib.tensor(np.linspace(0, 1, 20, dtype=np.float32).reshape(1, 2, 10))
        fused(x).square().sum().backward()
        # a conv without bias gets one that requires no grad (PyTorch's choice)
        outs.append((fused.weight.grad.numpy(), fused.bias.requires_grad, fused(x).numpy()
                     if lib is mg else fused(x).detach().numpy()))
    for a, b in zip(*outs):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


def test_transfer_parametrizations_and_params(torch):
    results = []
    for lib in (torch, mg):
        P = lib.nn.utils.parametrize
        src = lib.nn.utils.parametrizations.weight_norm(
            copy_weights(lib, lib.nn.Linear(3, 2), [W3, np.zeros(2, np.float32)]))
        dst = lib.nn.Linear(3, 2)
        P.transfer_parametrizations_and_params(src, dst)
        results.append((P.is_parametrized(dst, "weight"), list(dst.state_dict()),
                        dst.weight.detach().numpy()))
    assert results[0][:2] == results[1][:2]
    np.testing.assert_allclose(results[1][2], results[0][2], rtol=1e-6)


@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (3, 3)])
def test_householder_without_trivialization_stores_pytorchs_original(torch, shape):
    w = rng.standard_normal(shape).astype(np.float32)
    outs = []
    for lib in (torch, mg):
        m = copy_weights(lib, lib.nn.Linear(shape[1], shape[0]), [w])
        lib.nn.utils.parametrizations.orthogonal(m, orthogonal_map="householder",
                                                 use_trivialization=False)
        outs.append((m.parametrizations.weight.original.detach().numpy(),
                     m.weight.detach().numpy(), list(m.state_dict())))
    for want, got in zip(*outs):
        if isinstance(want, list):
            assert got == want
        else:
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_a_parametrized_module_deep_copies_but_does_not_pickle(torch):
    import copy
    import pickle
    seen = {}
    for lib in (torch, mg):
        lib.manual_seed(0)
        P = lib.nn.utils.parametrizations
        model = lib.nn.Sequential(P.weight_norm(lib.nn.Linear(3, 2)), lib.nn.Tanh())
        twin = copy.deepcopy(model)  # as AveragedModel copies the model it averages
        x = lib.ones(1, 3)
        same = lib.equal(twin(x), model(x))
        with lib.no_grad():
            twin[0].parametrizations.weight.original0.mul_(2)  # the copy's own magnitude
        changed = not lib.equal(twin(x), model(x))
        shared = twin[0].parametrizations.weight.original0 is model[0].parametrizations.weight.original0
        with pytest.raises(RuntimeError, match="Serialization of parametrized modules"):
            pickle.dumps(model)
        seen[lib] = (type(twin[0]).__name__, same, changed, shared,
                     sorted(k for k, _ in twin.named_parameters()))
    assert seen[mg] == seen[torch]
    assert seen[mg][1:4] == (True, True, False)
