"""nn.utils.prune against PyTorch's: masks, the state-dict keys (weight_orig, weight_mask),
gradients through the mask, repeated pruning of one tensor, global pruning, removal and the
errors. The random methods are compared by what they must keep and prune."""
import importlib

import numpy as np
import pytest

import minigrad as mg

rng = np.random.default_rng(5)
W = rng.standard_normal((4, 6)).astype(np.float32)
B = rng.standard_normal(4).astype(np.float32)


def linear(lib):
    m = lib.nn.Linear(6, 4)
    with lib.no_grad():
        m.weight.copy_(lib.tensor(W))
        m.bias.copy_(lib.tensor(B))
    return m


def prune_of(lib):
    return importlib.import_module(f"{lib.__name__}.nn.utils.prune")


def pruning_run(lib):
    pr = prune_of(lib)
    m, m2 = linear(lib), linear(lib)
    out = []
    pr.l1_unstructured(m, "weight", amount=0.3)
    out.append(list(m.state_dict()))
    pr.ln_structured(m, "weight", amount=1, n=1, dim=1)
    pr.l1_unstructured(m, "weight", amount=3, importance_scores=lib.tensor(W[::-1].copy()))
    pr.l1_unstructured(m, "bias", amount=0.5)
    hook = [h for h in m._forward_pre_hooks.values() if h._tensor_name == "weight"][0]
    out += [type(hook).__name__, len(hook), m.weight_mask.numpy().copy(),
            m.bias_mask.numpy().copy(), pr.is_pruned(m)]
    m(lib.ones(2, 6)).square().sum().backward()
    out.append(m.weight_orig.grad.numpy().copy())
    pr.remove(m, "weight")
    out += [list(m.state_dict()), m.weight.detach().numpy().copy(), type(m.weight).__name__]
    pr.global_unstructured([(m, "bias"), (m2, "weight"), (m2, "bias")],
                           pruning_method=pr.L1Unstructured, amount=0.4)
    out += [m2.weight_mask.numpy().copy(), m2.bias_mask.numpy().copy(),
            m.bias_mask.numpy().copy()]
    out.append(pr.Identity().prune(lib.tensor(W)).numpy().copy())
    return out


def test_pruning_matches_pytorch(torch):
    for i, (want, got) in enumerate(zip(pruning_run(torch), pruning_run(mg))):
        if isinstance(want, np.ndarray):
            np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=str(i))
        else:
            assert got == want, i


def test_random_methods_prune_what_they_must():
    pr = prune_of(mg)
    m = linear(mg)
    pr.random_structured(m, "weight", amount=2, dim=1)
    kept = m.weight_mask.numpy().any(axis=0)
    assert kept.sum() == 4 and (m.weight_mask.numpy()[:, kept] == 1).all()
    pr.random_unstructured(m, "weight", amount=5)  # 5 more, among the entries still kept
    assert m.weight_mask.numpy().sum() == 16 - 5
    assert (m.weight_mask.numpy()[:, ~kept] == 0).all()
    np.testing.assert_array_equal(m.weight.numpy(), W * m.weight_mask.numpy())


def test_errors_as_pytorch(torch):
    cases = [lambda pr, lib: pr.l1_unstructured(linear(lib), "weight", amount=1.5),
             lambda pr, lib: pr.l1_unstructured(linear(lib), "weight", amount=-1),
             lambda pr, lib: pr.random_unstructured(linear(lib), "weight", amount="a"),
             lambda pr, lib: pr.l1_unstructured(linear(lib), "weight", amount=100),
             lambda pr, lib: pr.ln_structured(linear(lib), "bias", amount=1, n=2, dim=0),
             lambda pr, lib: pr.remove(linear(lib), "weight"),
             lambda pr, lib: pr.global_unstructured([(linear(lib), "weight")],
                                                    pr.RandomStructured, amount=1),
             lambda pr, lib: pr.global_unstructured([(linear(lib), "weight")],
                                                    pr.L1Unstructured, importance_scores=[],
                                                    amount=1)]
    for case in cases:
        errors = []
        for lib in (torch, mg):
            with pytest.raises(Exception) as info:
                case(prune_of(lib), lib)
            errors.append((type(info.value), str(info.value).split(" of module")[0][:50]))
        assert errors[0] == errors[1]


def test_failed_pruning_leaves_the_module_as_it_was():
    pr = prune_of(mg)
    m = linear(mg)
    with pytest.raises(ValueError):
        pr.ln_structured(m, "bias", amount=1, n=2, dim=0)
    assert list(m.state_dict()) == ["weight", "bias"] and not pr.is_pruned(m)
    assert isinstance(m.bias, mg.nn.Parameter)
