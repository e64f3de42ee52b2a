"""The activation and loss modules and functions that follow torch.nn's: values, dtypes,
gradients (also at the kinks) and errors against PyTorch, and float64 gradient checks."""
import numpy as np
import pytest

import minigrad as mg
from minigrad import nn
from minigrad.autograd import gradcheck
from minigrad.nn import functional as F

# points on both sides of every kink (0, +-1, +-3, 6) and the kinks themselves
KINKS = np.array([-7.0, -3.5, -3.0, -2.5, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0, 3.5, 6.0, 6.5])

ACTIVATIONS = {  # name: (minigrad call, PyTorch call), lib given
    "logsigmoid": lambda lib, x: lib.nn.functional.logsigmoid(x),
    "relu6": lambda lib, x: lib.nn.functional.relu6(x),
    "hardtanh": lambda lib, x: lib.nn.functional.hardtanh(x),
    "hardtanh(-2,3)": lambda lib, x: lib.nn.functional.hardtanh(x, -2.0, 3.0),
    "hardsigmoid": lambda lib, x: lib.nn.functional.hardsigmoid(x),
    "hardswish": lambda lib, x: lib.nn.functional.hardswish(x),
    "mish": lambda lib, x: lib.nn.functional.mish(x),
    "softsign": lambda lib, x: lib.nn.functional.softsign(x),
    "glu": lambda lib, x: lib.nn.functional.glu(x),
    "glu(0)": lambda lib, x: lib.nn.functional.glu(x.reshape(2, 7), 0),
    "SiLU": lambda lib, x: lib.nn.SiLU()(x),
    "Softplus(2,3)": lambda lib, x: lib.nn.Softplus(beta=2, threshold=3)(x),
    "LogSoftmax": lambda lib, x: lib.nn.LogSoftmax(dim=1)(x.reshape(2, 7)),
    "ELU(0.5)": lambda lib, x: lib.nn.ELU(0.5)(x),
    "Mish": lambda lib, x: lib.nn.Mish()(x),
    "Hardtanh": lambda lib, x: lib.nn.Hardtanh(-0.5, 2.0)(x),
    "ReLU6": lambda lib, x: lib.nn.ReLU6()(x),
    "Hardsigmoid": lambda lib, x: lib.nn.Hardsigmoid()(x),
    "Hardswish": lambda lib, x: lib.nn.Hardswish()(x),
    "LogSigmoid": lambda lib, x: lib.nn.LogSigmoid()(x),
    "Softsign": lambda lib, x: lib.nn.Softsign()(x),
    "GLU": lambda lib, x: lib.nn.GLU(0)(x),
    "selu": lambda lib, x: lib.nn.functional.selu(x),
    "celu(0.5)": lambda lib, x: lib.nn.functional.celu(x, 0.5),
    "tanhshrink": lambda lib, x: lib.nn.functional.tanhshrink(x),
    "threshold(1,-2)": lambda lib, x: lib.nn.functional.threshold(x, 1.0, -2.0),
    "hardshrink(1)": lambda lib, x: lib.nn.functional.hardshrink(x, 1.0),
    "softshrink(1)": lambda lib, x: lib.nn.functional.softshrink(x, 1.0),
    "softshrink": lambda lib, x: lib.nn.functional.softshrink(x),
    "softmin": lambda lib, x: lib.nn.functional.softmin(x.reshape(2, 7), dim=1),
    "SELU": lambda lib, x: lib.nn.SELU()(x),
    "CELU": lambda lib, x: lib.nn.CELU(2.0)(x),
    "Threshold": lambda lib, x: lib.nn.Threshold(0.0, 0.5)(x),
    "Hardshrink": lambda lib, x: lib.nn.Hardshrink()(x),
    "Softshrink": lambda lib, x: lib.nn.Softshrink(0.5)(x),
    "Tanhshrink": lambda lib, x: lib.nn.Tanhshrink()(x),
    "Softmin": lambda lib, x: lib.nn.Softmin(0)(x.reshape(7, 2)),
}


@pytest.mark.parametrize("name", list(ACTIVATIONS))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_activation_matches_torch_at_the_kinks(torch, name, dtype):
    program = ACTIVATIONS[name]
    results = []
    for lib in (torch, mg):
        x = lib.tensor(KINKS.astype(dtype), requires_grad=True)
        y = program(lib, x)
        w = np.linspace(0.5, 1.5, y.numel()).reshape(tuple(y.shape)).astype(dtype)
        (y * lib.tensor(w)).sum().backward()
        results.append((y.detach().numpy(), str(y.dtype).replace("torch.", ""), x.grad.numpy()))
    (yt, dt, gt), (ym, dm, gm) = results
    assert dm == dt
    tol = 1e-6 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(ym, yt, rtol=tol, atol=tol)
    # PyTorch's hardsigmoid backward multiplies by 1/6 rounded to float32, in float64 too
    gtol = 1e-7 if "ardsigmoid" in name else tol
    np.testing.assert_allclose(gm, gt, rtol=gtol, atol=tol)


@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_activation_gradcheck(name):
    # away from the kinks, where a central difference straddles two pieces
    x = mg.tensor(KINKS + 0.25, dtype=mg.float64, requires_grad=True)
    assert gradcheck(lambda a: ACTIVATIONS[name](mg, a), [x])


@pytest.mark.parametrize("name", ["relu6", "hardtanh", "hardsigmoid", "hardswish", "mish",
                                  "selu", "celu"])
def test_inplace_activation_writes_its_input_and_keeps_the_gradient(torch, name):
    grads = []
    for lib in (torch, mg):
        x = lib.tensor(KINKS, requires_grad=True)
        y = x * 1.0
        out = getattr(lib.nn.functional, name)(y, inplace=True)
        assert out is y
        out.sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6, atol=1e-7)


def test_softplus_far_below_zero_is_exp_to_full_precision(torch):
    # log(1 + exp(z)) rounds to 0 in float32 below about -17; PyTorch's log1p(exp(z)) does not
    v = np.array([-17.976469, -30.0, -60.0, -3.0, 0.0, 2.0, 19.9, 25.0], np.float32)
    for beta, threshold in ((1.0, 20.0), (2.0, 3.0), (0.5, 30.0)):
        x = mg.tensor(v, requires_grad=True)
        F.softplus(x, beta, threshold).sum().backward()
        t = torch.tensor(v, requires_grad=True)
        exact = torch.nn.functional.softplus(t, beta, threshold)
        exact.sum().backward()
        np.testing.assert_allclose(F.softplus(mg.tensor(v), beta, threshold).numpy(),
                                   exact.detach().numpy(), rtol=3e-7, atol=0)
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=3e-7, atol=0)


def test_softplus_above_a_large_threshold_has_no_nan_gradient():
    x = mg.tensor([200.0, -200.0], requires_grad=True)
    F.softplus(x, threshold=100.0).sum().backward()
    assert np.isfinite(x.grad.numpy()).all() and x.grad.numpy()[0] == 1.0


def test_activation_module_reprs_match_torch(torch):
    def net(lib):
        nn_ = lib.nn
        return nn_.Sequential(nn_.SiLU(), nn_.SiLU(inplace=True), nn_.Mish(True),
                              nn_.Softplus(2, 10), nn_.LogSoftmax(-1), nn_.ELU(),
                              nn_.ELU(0.5, True), nn_.Hardtanh(), nn_.Hardtanh(-2, 2, True),
                              nn_.ReLU6(), nn_.ReLU6(True), nn_.Hardsigmoid(), nn_.Hardswish(),
                              nn_.LogSigmoid(), nn_.Softsign(), nn_.GLU(1), nn_.SELU(),
                              nn_.SELU(True), nn_.CELU(), nn_.CELU(0.5, True),
                              nn_.Threshold(0.1, 20), nn_.Threshold(1, 2, True),
                              nn_.Hardshrink(), nn_.Softshrink(0.3), nn_.Tanhshrink(),
                              nn_.Softmin(1), nn_.PReLU(), nn_.PReLU(3, 0.1))
    assert repr(net(mg)) == repr(net(torch))
    assert isinstance(nn.ReLU6(), nn.Hardtanh)
    assert (nn.ReLU6().min_val, nn.ReLU6().max_val) == (0.0, 6.0)


def test_activation_errors(torch):
    for lib in (torch, mg):
        with pytest.raises(RuntimeError, match="Halving dimension must be even"):
            lib.nn.functional.glu(lib.ones(2, 3))
        with pytest.raises(AssertionError, match="must be greater than"):
            lib.nn.Hardtanh(1.0, 1.0)
    with pytest.raises(RuntimeError, match="glu: does not support scalars"):
        F.glu(mg.tensor(1.0))
    with pytest.raises(IndexError, match="glu: dim 2"):
        F.glu(mg.ones(2, 4), 2)
    with pytest.raises(ValueError, match="hardtanh: max_val"):
        F.hardtanh(mg.ones(2), 1.0, -1.0)
    for lib in (torch, mg):
        with pytest.raises(RuntimeError, match="Mismatch of parameter numbers and input channel"):
            lib.nn.functional.prelu(lib.ones(2, 4), lib.ones(3))
        with pytest.raises(RuntimeError, match="Mismatch of parameter numbers and input channel"):
            lib.nn.functional.prelu(lib.ones(4), lib.ones(4))
        with pytest.raises(RuntimeError, match="lambda must be"):
            lib.nn.functional.softshrink(lib.ones(2), -1.0)
        with pytest.raises(RuntimeError, match="alpha cannot be 0"):
            lib.nn.functional.celu(lib.ones(2), 0.0)
        assert lib.nn.functional.hardshrink(lib.tensor([0.5, -2.0]), -1.0).tolist() == [0.5, -2]
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmin"):
        assert nn.Softmin()(mg.ones(2, 3)).shape == (2, 3)
    with pytest.warns(FutureWarning, match="min_value"):
        assert nn.Hardtanh(min_value=-3.0).min_val == -3.0


@pytest.mark.parametrize("shape, channels", [((2, 3, 4), 3), ((2, 3), 3), ((4,), 1),
                                            ((2, 3, 2, 2), 1), ((), 1)])
def test_prelu_matches_torch_and_gradchecks(torch, shape, channels):
    x0 = np.asarray(np.random.default_rng(2).uniform(-2, 2, shape))
    w0 = np.linspace(0.1, 0.4, channels)
    got = []
    for lib in (torch, mg):
        x = lib.tensor(x0, requires_grad=True)
        layer = lib.nn.PReLU(channels, dtype=lib.float64)
        with lib.no_grad():
            layer.weight.copy_(lib.tensor(w0))
        y = layer(x)
        (y * lib.tensor(np.asarray(1.5 + x0))).sum().backward()
        got.append((y.detach().numpy(), x.grad.numpy(), layer.weight.grad.numpy()))
    for t, m in zip(*got):
        np.testing.assert_allclose(m, t, rtol=1e-12, atol=1e-12)
    x = mg.tensor(np.asarray(x0 + 0.05), requires_grad=True)
    w = mg.tensor(w0, requires_grad=True)
    assert gradcheck(lambda a, b: F.prelu(a, b), [x, w])
    assert nn.PReLU().weight.tolist() == [0.25] and nn.PReLU().weight.dtype == mg.float32


# --- losses -----------------------------------------------------------------------------------

def _loss_programs():
    def regression(lib, a, b):
        F_ = lib.nn.functional
        w = a.detach() * 0 + 2.0
        return [F_.smooth_l1_loss(a, b), F_.smooth_l1_loss(a, b, beta=0.5, reduction="none"),
                F_.smooth_l1_loss(a, b, reduction="sum", beta=0.0),
                F_.huber_loss(a, b), F_.huber_loss(a, b, delta=0.5, reduction="none"),
                F_.huber_loss(a, b, "sum", 2.0), F_.huber_loss(a, b, weight=w),
                lib.nn.SmoothL1Loss(beta=0.3)(a, b), lib.nn.HuberLoss(delta=0.7)(a, b),
                lib.nn.HuberLoss("none")(a, b)]

    def pairs(lib, a, b):
        F_ = lib.nn.functional
        t = lib.tensor([1, -1, 1, -1, -1, 1])
        s = lib.tensor([1.0, -1.0, 1.0, 1.0, -1.0, -1.0])
        return [F_.cosine_embedding_loss(a, b, t), F_.cosine_embedding_loss(a, b, t, 0.2, None,
                                                                            None, "none"),
                F_.cosine_embedding_loss(a[0], b[0], lib.tensor(-1), margin=-0.5),
                lib.nn.CosineEmbeddingLoss(0.1, reduction="sum")(a, b, t),
                lib.nn.MarginRankingLoss()(a[:, 0], b[:, 0], s),
                lib.nn.MarginRankingLoss(0.5, reduction="none")(a[:, 1], b[:, 1], s),
                lib.nn.TripletMarginLoss()(a, b, a.flip(0)),
                lib.nn.TripletMarginLoss(2.0, 1.0, swap=True, reduction="none")(a, b, b.flip(0))]
    return {"regression": regression, "pairs": pairs}


@pytest.mark.parametrize("name", ["regression", "pairs"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_losses_match_torch(torch, name, dtype):
    rng = np.random.default_rng(3)
    a0, b0 = rng.uniform(-2, 2, (2, 6, 4)).astype(dtype)
    b0[0, 0] = a0[0, 0] + 0.5  # a difference exactly at beta / delta
    results = []
    for lib in (torch, mg):
        a, b = lib.tensor(a0, requires_grad=True), lib.tensor(b0, requires_grad=True)
        outs = _loss_programs()[name](lib, a, b)
        total = sum((o * (i + 1)).sum() for i, o in enumerate(outs))
        total.backward()
        results.append(([(o.detach().numpy(), str(o.dtype).replace("torch.", "")) for o in outs],
                        a.grad.numpy(), b.grad.numpy()))
    tol = 1e-5 if dtype == "float32" else 1e-12
    for (vt, dt), (vm, dm) in zip(results[0][0], results[1][0]):
        assert dm == dt and vm.shape == vt.shape
        np.testing.assert_allclose(vm, vt, rtol=tol, atol=tol)
    for gt, gm in zip(results[0][1:], results[1][1:]):
        np.testing.assert_allclose(gm, gt, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["regression", "pairs"])
def test_losses_gradcheck(name):
    rng = np.random.default_rng(5)
    a, b = (mg.tensor(v, requires_grad=True) for v in rng.uniform(-2, 2, (2, 6, 4)))
    assert gradcheck(lambda x, y: sum(o.sum() for o in _loss_programs()[name](mg, x, y)), [a, b])


def test_loss_errors(torch):
    a, b = mg.ones(3, 2), mg.ones(3, 2)
    with pytest.raises(RuntimeError, match="smooth_l1_loss: beta must not be negative"):
        F.smooth_l1_loss(a, b, beta=-1.0)
    with pytest.raises(RuntimeError, match="huber_loss: delta must be positive"):
        F.huber_loss(a, b, delta=0.0)
    with pytest.raises(ValueError, match=r"huber_loss: input shape minigrad.Size\(\[3, 2\]\) "
                                          r"and target shape"):
        F.huber_loss(a, mg.ones(2, 2))
    with pytest.raises(ValueError, match="cosine_embedding_loss: input1"):
        F.cosine_embedding_loss(a, b, mg.ones(2))
    with pytest.raises(ValueError, match="huber_loss: reduction must be"):
        nn.HuberLoss("avg")(a, b)
    with pytest.raises(TypeError, match="size_average and reduce are deprecated"):
        nn.TripletMarginLoss(size_average=True)
    for lib in (torch, mg):
        with pytest.raises(RuntimeError):
            lib.nn.functional.huber_loss(lib.ones(2), lib.ones(2), delta=-1.0)
        with pytest.raises(RuntimeError):
            lib.nn.functional.smooth_l1_loss(lib.ones(2), lib.ones(2), beta=-1.0)


def test_distance_modules_gradcheck():
    a = mg.tensor(np.random.default_rng(6).standard_normal((4, 3)), requires_grad=True)
    b = mg.tensor(np.random.default_rng(7).standard_normal((4, 3)), requires_grad=True)
    for module in (nn.PairwiseDistance(), nn.PairwiseDistance(1.5, keepdim=True),
                   nn.CosineSimilarity(), nn.CosineSimilarity(0)):
        assert gradcheck(module, [a, b])
    assert nn.PairwiseDistance(3.0).norm == 3.0 and nn.CosineSimilarity(0, 0.1).eps == 0.1


# --- Embedding.from_pretrained ------------------------------------------------------------------

def test_embedding_from_pretrained_matches_torch(torch):
    table = np.arange(12, dtype=np.float32).reshape(4, 3) / 10
    ids = np.array([[0, 2, 2], [3, 1, 2]])
    got = {}
    for lib in (torch, mg):
        weights = lib.tensor(table)
        frozen = lib.nn.Embedding.from_pretrained(weights)
        free = lib.nn.Embedding.from_pretrained(weights, freeze=False, padding_idx=2)
        out = free(lib.tensor(ids))
        (out * lib.tensor(np.arange(18.0, dtype=np.float32).reshape(2, 3, 3))).sum().backward()
        with lib.no_grad():
            weights[0, 0] = 5.0  # the layers share the given table's memory
        got[lib.__name__] = (frozen.weight.requires_grad, free.weight.requires_grad,
                             frozen(lib.tensor(ids)).detach().numpy(), free.weight.grad.numpy(),
                             free.padding_idx, repr(free), float(frozen.weight[0, 0]))
    for t, m in zip(got["torch"], got["minigrad"]):
        np.testing.assert_array_equal(m, t) if isinstance(t, np.ndarray) else None
        assert isinstance(t, np.ndarray) or m == t


def test_embedding_from_pretrained_gradcheck_and_errors():
    table = mg.tensor(np.random.default_rng(0).standard_normal((5, 2)))
    emb = nn.Embedding.from_pretrained(table, freeze=False)
    ids = mg.tensor(np.array([[0, 4, 4], [1, 3, 0]]))
    assert gradcheck(lambda w: nn.functional.embedding(ids, w), [emb.weight])
    with pytest.raises(ValueError, match="from_pretrained: embeddings must be 2-dimensional"):
        nn.Embedding.from_pretrained(mg.ones(3))
    with pytest.raises(AssertionError, match="padding_idx 5, num_embeddings 5"):
        nn.Embedding.from_pretrained(mg.ones(5, 2), padding_idx=5)


# --- gumbel_softmax -----------------------------------------------------------------------------

def test_gumbel_softmax_samples_the_categorical_and_is_repeatable():
    logits = mg.tensor(np.log([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]]))
    mg.manual_seed(4)
    soft = F.gumbel_softmax(logits.expand(3000, 2, 3), tau=0.5)
    mg.manual_seed(4)
    assert (F.gumbel_softmax(logits.expand(3000, 2, 3), tau=0.5).numpy() == soft.numpy()).all()
    np.testing.assert_allclose(soft.numpy().sum(-1), 1, rtol=1e-6)
    picks = soft.numpy().argmax(-1)  # the Gumbel-max trick: argmax follows softmax(logits)
    freq = np.stack([(picks == k).mean(0) for k in range(3)], -1)
    np.testing.assert_allclose(freq, [[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]], atol=0.03)


def test_gumbel_softmax_hard_is_one_hot_with_the_soft_gradient(torch):
    x = mg.tensor(np.random.default_rng(0).standard_normal((4, 5)), requires_grad=True)
    w = mg.tensor(np.random.default_rng(1).standard_normal((4, 5)))
    mg.manual_seed(2)
    hard = F.gumbel_softmax(x, tau=0.7, hard=True, dim=1)
    (hard * w).sum().backward()
    g_hard = x.grad.numpy()
    x.grad = None
    mg.manual_seed(2)
    soft = F.gumbel_softmax(x, tau=0.7, dim=1)
    (soft * w).sum().backward()
    assert set(np.unique(hard.numpy())) == {0.0, 1.0} and (hard.numpy().sum(1) == 1).all()
    assert (hard.numpy().argmax(1) == soft.numpy().argmax(1)).all()
    np.testing.assert_allclose(g_hard, x.grad.numpy(), rtol=1e-12)

    def sample(a):
        mg.manual_seed(3)  # the same noise at every evaluation
        return F.gumbel_softmax(a, tau=2.0, dim=0)
    assert gradcheck(sample, [x])
    for lib in (torch, mg):  # both warn about the deprecated eps
        with pytest.warns(UserWarning, match="`eps` parameter is deprecated"):
            lib.nn.functional.gumbel_softmax(lib.zeros(2, 3), eps=1e-3)
        out = lib.nn.functional.gumbel_softmax(lib.zeros(2, 3, dtype=lib.float64), hard=True)
        assert str(out.dtype).endswith("float64") and tuple(out.shape) == (2, 3)
