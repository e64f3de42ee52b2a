"""The further CNN layers of minigrad.nn (padding in every mode, batch and instance norm's
functions, BatchNorm3d, InstanceNorm, pixel and channel shuffles, adaptive max pooling, max
unpooling, LP pooling, local response norm, Softmax2d, alpha dropout, RReLU, Dropout3d,
Bilinear, LazyLinear): float64 gradient checks of every differentiable one (and of their
gradients where a gradient penalty would differentiate them again), parity with PyTorch on odd
shapes, dtypes, empty and non-contiguous inputs, the running statistics written in place, and
the random ones' draws from minigrad's seeded stream."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn
from minigrad.autograd import gradcheck, gradgradcheck
from helpers import raises, same_as_torch, t32, t64

rng = np.random.default_rng(21)


def arr(*shape, low=-2.0, high=2.0):
    return rng.uniform(low, high, shape)


# --- gradient checks in float64 -----------------------------------------------------------------

GRADCHECKS = {
    "pad reflect": (lambda x: F.pad(x, (2, 1, 1, 3), mode="reflect"), [(2, 3, 4, 5)]),
    "pad reflect negative": (lambda x: F.pad(x, (-1, 3), mode="reflect"), [(3, 5)]),
    "pad replicate 3d": (lambda x: F.pad(x, (1, 2, 0, 1, 2, 0), mode="replicate"),
                         [(2, 3, 2, 4)]),
    "pad circular": (lambda x: F.pad(x, (3, 1, 2, 2), mode="circular"), [(1, 2, 3, 4)]),
    "pad constant crop": (lambda x: F.pad(x, (1, -2, 2, 0), value=0.5), [(2, 3, 4)]),
    "batch_norm training": (lambda x, w, b: F.batch_norm(x, None, None, w, b, True),
                            [(4, 3, 5), (3,), (3,)]),
    "batch_norm eval": (lambda x, m, w: F.batch_norm(x, m, m.abs() + 0.5, w), [(4, 3), (3,), (3,)]),
    "instance_norm": (lambda x, w, b: F.instance_norm(x, weight=w, bias=b),
                      [(2, 3, 4, 3), (3,), (3,)]),
    "instance_norm running": (lambda x, m: F.instance_norm(x, m, m.abs() + 0.5,
                                                           use_input_stats=False),
                              [(2, 3, 4), (3,)]),
    "pixel_shuffle": (lambda x: F.pixel_shuffle(x, 2), [(2, 8, 3, 2)]),
    "pixel_unshuffle": (lambda x: F.pixel_unshuffle(x, 3), [(1, 2, 3, 6)]),
    "channel_shuffle": (lambda x: F.channel_shuffle(x, 2), [(2, 4, 3)]),
    "adaptive_max_pool2d": (lambda x: F.adaptive_max_pool2d(x, (3, 2)), [(2, 3, 7, 5)]),
    "adaptive_max_pool1d": (lambda x: F.adaptive_max_pool1d(x, 4), [(3, 6)]),
    "adaptive_max_pool3d": (lambda x: F.adaptive_max_pool3d(x, 2), [(1, 2, 3, 4, 5)]),
    "max_unpool2d": (lambda x: F.max_unpool2d(*F.max_pool2d(x, 2, return_indices=True), 2,
                                              output_size=(5, 5)), [(2, 2, 5, 5)]),
    # windows that do not overlap: a max found by two windows is unpooled twice, and its
    # gradient counted twice, in PyTorch as here
    "max_unpool1d": (lambda x: F.max_unpool1d(*F.max_pool1d(x, 2, 3, 1, return_indices=True),
                                              2, 3, 1, output_size=(7,)), [(2, 7)]),
    "lp_pool2d": (lambda x: F.lp_pool2d(x.abs() + 0.1, 2, 2), [(1, 2, 4, 5)]),
    "lp_pool1d": (lambda x: F.lp_pool1d(x.abs() + 0.1, 1.5, 3, 2), [(2, 3, 7)]),
    "local_response_norm 3d": (lambda x: F.local_response_norm(x, 3, 0.5, 0.75, 1.0),
                               [(2, 5, 3)]),
    "local_response_norm 4d": (lambda x: F.local_response_norm(x, 2, 0.3, 0.5, 2.0),
                               [(2, 4, 3, 2)]),
    "softmax2d": (lambda x: nn.Softmax2d()(x), [(2, 3, 2, 2)]),
    "rrelu eval": (lambda x: F.rrelu(x, 0.1, 0.3), [(3, 4)]),
    "alpha_dropout p=0": (lambda x: F.alpha_dropout(x, 0.0, True), [(3, 4)]),
    "bilinear": (lambda a, b, w, c: F.bilinear(a, b, w, c), [(4, 3), (4, 2), (5, 3, 2), (5,)]),
}


@pytest.mark.parametrize("name", sorted(GRADCHECKS))
def test_gradcheck(name):
    fn, shapes = GRADCHECKS[name]
    inputs = [t64(away(arr(*s))) for s in shapes]
    assert gradcheck(fn, inputs)


def away(a):
    """|a| at least 0.2: no max is tied within a difference step and no relu sits at a kink."""
    return np.where(np.abs(a) < 0.2, np.sign(a + 1e-9) * 0.2 + a, a)


@pytest.mark.parametrize("name", ["pad reflect", "batch_norm training", "instance_norm",
                                  "pixel_shuffle", "adaptive_max_pool2d", "local_response_norm 3d",
                                  "bilinear"])
def test_gradgradcheck(name):
    fn, shapes = GRADCHECKS[name]
    inputs = [t64(away(arr(*s))) for s in shapes]
    assert gradgradcheck(fn, inputs)


def test_training_rrelu_and_alpha_dropout_gradients_are_their_masks():
    mg.manual_seed(3)
    x = t64(arr(5, 6))
    y = F.rrelu(x, 0.1, 0.3, training=True)
    y.sum().backward()
    slope = y.detach().numpy() / x.detach().numpy()
    np.testing.assert_allclose(x.grad.numpy(), slope)
    neg = x.detach().numpy() <= 0
    assert np.all(slope[~neg] == 1) and np.all((slope[neg] >= 0.1) & (slope[neg] <= 0.3))
    assert len(np.unique(slope[neg])) == neg.sum()  # one draw per element
    x.grad = None
    mg.manual_seed(3)
    z = F.alpha_dropout(x, 0.4, True)
    z.sum().backward()
    a = 1 / np.sqrt((1.7580993408473766 ** 2 * 0.4 + 1) * 0.6)
    assert set(np.round(np.unique(x.grad.numpy()), 12)) <= {0.0, round(a, 12)}


# --- parity with PyTorch ------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular", "constant"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pad_matches_torch_on_odd_shapes(torch, mode, dtype):
    x = arr(2, 3, 5, 4).astype(dtype)
    for pads in [(1, 0), (0, 3, 2, 0), (2, 2, 1, 1, 1, 0), (-1, 2), (2, -1, -1, 1), (0, 0)]:
        same_as_torch(torch, lambda lib, t: lib.nn.functional.pad(
            t[0] if len(pads) == 2 and mode != "constant" else t, pads, mode=mode), x)
    # non-contiguous and empty inputs
    same_as_torch(torch, lambda lib, t: lib.nn.functional.pad(t.transpose(0, 2)[:, ::2], (1, 1),
                                                              mode=mode), arr(2, 3, 4).astype(dtype))
    same_as_torch(torch, lambda lib, t: lib.nn.functional.pad(t, (1, 1), mode=mode),
                  np.zeros((0, 2, 3), dtype))


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_pad_keeps_integer_dtypes(torch, mode):
    x = np.arange(24).reshape(2, 3, 4)
    same_as_torch(torch, lambda lib, t: lib.nn.functional.pad(t, (2, 1), mode=mode), x)


def test_pad_errors_are_pytorch_s():
    x = t32(np.zeros((1, 3, 4)))
    with raises(RuntimeError, "Padding size should be less than the corresponding input "
                              "dimension, but got: padding (4, 0) at dimension 2 of input "
                              "[1, 3, 4]"):
        F.pad(x, (4, 0), mode="reflect")
    with raises(RuntimeError, "Padding value causes wrapping around more than once."):
        F.pad(x, (5, 0), mode="circular")
    with raises(NotImplementedError, "Unrecognised padding mode wrap"):
        F.pad(x, (1, 1), mode="wrap")
    with raises(NotImplementedError, "Padding size 2 is not supported for 1D input tensor."):
        F.pad(x[0, 0], (1, 1), mode="reflect")
    with raises(RuntimeError, "Expected 2D or 3D (batch mode) tensor with possibly 0 batch size "
                              "and other non-zero dimensions for input, but got: [1, 2, 0]"):
        F.pad(t32(np.zeros((1, 2, 0))), (1, 1), mode="replicate")
    with raises(RuntimeError, "input (W: 4) is too small. Calculated output W: 0"):
        F.pad(x, (-2, -2), mode="reflect")
    with raises(ValueError, "expected 2D or 3D input (got 4D input)"):
        nn.CircularPad1d(1)(t32(np.zeros((1, 1, 3, 4))))


def test_padding_layers_match_torch(torch):
    x = arr(2, 3, 4, 5, 3).astype(np.float32)
    for name, arg in [("ReflectionPad3d", (1, 2, 0, 1, 2, 1)), ("ReplicationPad2d", 3),
                      ("CircularPad3d", 2), ("ZeroPad1d", (4, 0)), ("ConstantPad2d", (1, 2, 0, 1))]:
        args = (arg, 2.5) if name.startswith("Constant") else (arg,)
        nd = int(name[-2])
        same_as_torch(torch, lambda lib, t: getattr(lib.nn, name)(*args)(t[(0,) * (3 - nd)]), x)
        assert repr(getattr(nn, name)(*args)) == repr(getattr(torch.nn, name)(*args))


def test_batch_norm_updates_the_running_stats_in_place_as_torch(torch):
    x = arr(6, 4, 3)
    for training, momentum in [(True, 0.1), (True, 1.0), (False, 0.1)]:
        ours = (t64(np.zeros(4), False), t64(np.ones(4), False))
        theirs = (torch.zeros(4, dtype=torch.float64), torch.ones(4, dtype=torch.float64))
        ids = [id(t) for t in ours]
        versions = [t._version for t in ours]
        a = F.batch_norm(t64(x, False), *ours, training=training, momentum=momentum)
        b = torch.nn.functional.batch_norm(torch.tensor(x), *theirs, training=training,
                                           momentum=momentum)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12)
        for o, t in zip(ours, theirs):
            np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-12)
        assert [id(t) for t in ours] == ids
        assert [t._version > v for t, v in zip(ours, versions)] == [training] * 2


def test_instance_norm_layers_match_torch_with_running_stats(torch):
    x = arr(3, 4, 5, 6)
    for lib in (torch, mg):
        lib.manual_seed(0)
    results = []
    for lib in (torch, mg):
        m = lib.nn.InstanceNorm2d(4, affine=True, track_running_stats=True, momentum=0.3).double()
        outs = [m(lib.tensor(x)), m(lib.tensor(x[0] * 2 + 1))]
        m.eval()
        outs += [m(lib.tensor(x)), m.running_mean, m.running_var, m.num_batches_tracked]
        results.append([o.detach().numpy() for o in outs])
    for got, want in zip(results[1], results[0]):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_batchnorm3d_momentum_none_and_float32(torch):
    x = arr(2, 3, 2, 3, 4).astype(np.float32)

    def run(lib, t):
        bn = lib.nn.BatchNorm3d(3, momentum=None)
        outs = [bn(t), bn(t * 0.5 - 1)]
        bn.eval()
        return outs + [bn(t), bn.running_mean * 1, bn.running_var * 1]
    same_as_torch(torch, run, x)


def test_norm_errors():
    with raises(RuntimeError, "running_mean must be defined in evaluation mode"):
        F.batch_norm(t32(np.zeros((2, 3))), None, None)
    with raises(ValueError, "Expected more than 1 value per channel when training, got input "
                            "size (1, 3)"):
        F.batch_norm(t32(np.zeros((1, 3))), None, None, training=True)
    with raises(RuntimeError, "mixed dtype (CPU): all inputs must share same datatype."):
        F.batch_norm(t64(np.zeros((2, 3))), t32(np.zeros(3)), t32(np.ones(3)))
    with raises(NotImplementedError, "\"batch_norm\" not implemented for 'Long'"):
        F.batch_norm(mg.zeros(2, 3, dtype=mg.int64), None, None, training=True)
    with raises(RuntimeError, "Expected running_mean and running_var to be defined when "
                              "use_input_stats is false"):
        F.instance_norm(t32(np.zeros((2, 3, 4))), use_input_stats=False)
    with raises(ValueError, "expected 5D input"):
        nn.BatchNorm3d(3)(t32(np.zeros((2, 3, 4, 4))))
    with pytest.warns(UserWarning, match="does not match num_features"):
        nn.InstanceNorm1d(4)(t32(arr(2, 3, 5)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_shuffles_and_pools_match_torch(torch, dtype):
    x = arr(2, 12, 6, 5).astype(dtype)
    F_ = "nn.functional"
    programs = [
        lambda lib, t: lib.nn.functional.pixel_shuffle(t.transpose(2, 3), 2),
        lambda lib, t: lib.nn.functional.pixel_unshuffle(t[..., :4], 2),
        lambda lib, t: lib.nn.functional.channel_shuffle(t, 4),
        lambda lib, t: lib.nn.functional.adaptive_max_pool2d(t[:, :, ::2], (4, 3),
                                                             return_indices=True),
        lambda lib, t: lib.nn.functional.adaptive_max_pool1d(t[0, :, 0], 7, True),
        lambda lib, t: lib.nn.functional.lp_pool2d(t.abs(), 2.5, (3, 2), ceil_mode=True),
        lambda lib, t: lib.nn.functional.local_response_norm(t, 5, 1e-2),
        lambda lib, t: lib.nn.Softmax2d()(t),
    ]
    del F_
    for program in programs:
        same_as_torch(torch, program, x)


def test_adaptive_max_pool_ties_and_nans_follow_torch(torch):
    x = np.zeros((1, 2, 5, 4))
    x[0, 1, 1, 1] = x[0, 1, 3, 2] = np.nan
    x[0, 0, 2, :] = 1.0  # ties: the first position wins
    same_as_torch(torch, lambda lib, t: lib.nn.functional.adaptive_max_pool2d(t, (2, 3), True),
                  x, grad=False)


def test_max_unpool_round_trip_and_errors(torch):
    x = arr(2, 3, 6, 4)
    same_as_torch(torch, lambda lib, t: lib.nn.MaxUnpool2d(2)(
        *lib.nn.functional.max_pool2d(t, 2, return_indices=True)), x)
    y, i = F.max_pool2d(t64(x, False), 2, return_indices=True)
    with raises(RuntimeError, "elements in indices should be type int64 but got: Double"):
        F.max_unpool2d(y, i.double(), 2)
    bad = i.clone()
    bad[0, 0, 0, 0], bad[1, 1, 1, 1] = 100, 82
    with raises(RuntimeError, "Found an invalid max index: 100 (output volumes are of size 6x4)"):
        F.max_unpool2d(y, bad, 2)
    with raises(ValueError, "output_size should be a sequence containing 2 or 4 elements, but "
                            "it has a length of '1'"):
        F.max_unpool2d(y, i, 2, output_size=(6,))


def test_bilinear_and_lazy_linear(torch):
    same_as_torch(torch, lambda lib, a, b, w, c: lib.nn.functional.bilinear(a, b, w, c),
                  arr(2, 3, 4), arr(2, 3, 5), arr(6, 4, 5), arr(6))
    mg.manual_seed(0)
    lazy = nn.LazyLinear(3)
    opt = mg.optim.SGD(lazy.parameters(), lr=0.1)  # built before the shapes are known
    y = lazy(t32(arr(4, 5)))
    assert type(lazy) is nn.Linear and lazy.in_features == 5 and y.shape == (4, 3)
    y.sum().backward()
    before = lazy.weight.detach().numpy().copy()
    bound = 1 / np.sqrt(5)  # Linear's initialisation for in_features 5
    assert np.abs(before).max() <= bound and np.abs(lazy.bias.detach().numpy()).max() <= bound
    opt.step()
    np.testing.assert_allclose(lazy.weight.detach().numpy(), before - 0.1 * lazy.weight.grad.numpy())
    with raises(ValueError, "in1_features must be > 0, but got (in1_features=0)"):
        nn.Bilinear(0, 2, 3)


def test_random_layers_draw_from_minigrad_s_seeded_stream():
    x = t32(arr(8, 6, 2, 2, 2))
    draws = []
    for _ in range(2):
        mg.manual_seed(11)
        draws.append([F.rrelu(x, training=True).numpy(), F.alpha_dropout(x, 0.3, True).numpy(),
                      F.feature_alpha_dropout(x, 0.3, True).numpy(), F.dropout3d(x).numpy()])
    for a, b in zip(*draws):
        np.testing.assert_array_equal(a, b)
    # feature forms drop whole channels; Dropout3d scales the kept ones by 1 / (1 - p)
    fad, d3 = draws[0][2], draws[0][3]
    per_channel = fad.reshape(8, 6, -1) - x.numpy().reshape(8, 6, -1)
    assert np.all(d3.reshape(48, -1).std(1)[np.all(d3.reshape(48, -1) == 0, 1)] == 0)
    assert per_channel.shape == (8, 6, 8)
    kept = d3.reshape(48, -1)[~np.all(d3.reshape(48, -1) == 0, 1)]
    np.testing.assert_allclose(kept, 2 * x.numpy().reshape(48, -1)[~np.all(d3.reshape(48, -1)
                                                                          == 0, 1)], rtol=1e-6)


def test_alpha_dropout_keeps_zero_mean_and_unit_variance():
    mg.manual_seed(5)
    x = mg.randn(200_000)
    y = F.alpha_dropout(x, 0.2, True).numpy()
    assert abs(y.mean()) < 0.02 and abs(y.std() - 1) < 0.02


def test_inplace_forms_write_into_the_input():
    x = t32(arr(4, 3, 2, 2, 2))
    for fn in (lambda t: F.rrelu(t, inplace=True), lambda t: F.alpha_dropout(t, 0.5, True, True),
               lambda t: F.dropout3d(t, 0.5, True, True), lambda t: nn.RReLU(inplace=True)(t)):
        t = x * 1.0
        out = fn(t)
        assert out is t


def test_linear_output_written_in_place_by_relu(torch):
    # AlexNet's and VGG's classifier heads: Linear, then ReLU(inplace=True), on 2-d and 3-d
    # inputs
    for shape in [(4, 6), (2, 3, 6)]:
        same_as_torch(torch, lambda lib, x, w, b: lib.nn.functional.relu(
            lib.nn.functional.linear(x, w, b), inplace=True), arr(*shape), arr(5, 6), arr(5))


def test_product_outputs_written_in_place(torch):
    # a result NumPy returns as a reshape of its own temporary (3-d times 2-d, matrix times
    # vector) is the op's own memory, as any new result is
    same_as_torch(torch, lambda lib, x, w: (x @ w).relu_(), arr(2, 3, 6), arr(6, 5))
    same_as_torch(torch, lambda lib, x, v: (x @ v).mul_(2), arr(2, 3, 6), arr(6))


@pytest.mark.parametrize("name", ["pad circular", "batch_norm training", "instance_norm",
                                  "pixel_unshuffle", "adaptive_max_pool3d", "max_unpool2d",
                                  "lp_pool2d", "local_response_norm 4d", "bilinear"])
def test_forward_mode_matches_central_differences(name):
    import minigrad.autograd.forward_ad as fwAD
    fn, shapes = GRADCHECKS[name]
    xs = [away(arr(*s)) for s in shapes]
    vs = [arr(*s) for s in shapes]
    with fwAD.dual_level():
        tangent = fwAD.unpack_dual(fn(*[fwAD.make_dual(t64(x, False), t64(v, False))
                                        for x, v in zip(xs, vs)])).tangent
    eps = 1e-6
    ahead, behind = (fn(*[t64(x + s * eps * v, False) for x, v in zip(xs, vs)]).numpy()
                     for s in (1, -1))
    np.testing.assert_allclose(tangent.numpy(), (ahead - behind) / (2 * eps), atol=1e-6)


def test_training_rrelu_draws_pytorchs_slopes(torch):
    """One double of U(lower, upper) per element at or below zero, in order, from the default
    generator or the one rrelu_ is given: PyTorch's slopes, and its stream after them."""
    a = np.random.default_rng(7).standard_normal((3, 5)).astype(np.float32)
    got = {}
    for lib in (torch, mg):
        lib.manual_seed(11)
        x = lib.tensor(a, requires_grad=True)
        y = lib.nn.RReLU(0.05, 0.4)(x)
        y.sum().backward()
        g = lib.Generator().manual_seed(4)
        z = lib.tensor(a.astype(np.float64))
        lib.nn.functional.rrelu_(z, 0.1, 0.3, True, generator=g)
        got[lib] = (y.detach().numpy(), x.grad.numpy(), z.numpy(), lib.rand(3).numpy(),
                    lib.rand(2, generator=g).numpy())
    for ours, theirs in zip(got[mg], got[torch]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6)
