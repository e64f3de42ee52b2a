"""Convolution and pooling: float64 central-difference gradient checks of every op and layer,
and comparisons with PyTorch on values, dtypes, gradients, unusual layouts and batch sizes,
and errors. (The compatibility table, tests/compat_cases_conv.py, runs more argument sets.)"""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn
from minigrad.autograd import gradcheck
from helpers import raises, t64


def _distinct(rng, shape):
    """Values far enough apart that no window holds a near tie (max pooling's kink)."""
    n = int(np.prod(shape))
    return (rng.permutation(n) / n * 4 - 2).reshape(shape)


@pytest.mark.parametrize("kw", [
    dict(),
    dict(stride=(2, 1), padding=(1, 2), dilation=(2, 1), groups=2),
    dict(padding="same", dilation=2),
    dict(padding="valid", stride=2, groups=4),
])
def test_gradcheck_conv2d(kw):
    rng = np.random.default_rng(0)
    groups = kw.get("groups", 1)
    x = t64(rng.standard_normal((2, 4, 5, 6)))
    w = t64(rng.standard_normal((4, 4 // groups, 3, 2)))
    b = t64(rng.standard_normal(4))
    assert gradcheck(lambda x, w, b: F.conv2d(x, w, b, **kw), [x, w, b])


@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
def test_gradcheck_conv_modules_and_padding_modes(mode):
    rng = np.random.default_rng(1)
    conv = nn.Conv2d(2, 3, 3, padding=(2, 1), padding_mode=mode).double()
    x = t64(rng.standard_normal((2, 2, 4, 3)))
    assert gradcheck(lambda x, w, b: conv(x), [x, conv.weight, conv.bias])
    conv1 = nn.Conv1d(2, 2, 2, padding=1, padding_mode=mode, groups=2).double()
    seq = t64(rng.standard_normal((3, 2, 5)))
    assert gradcheck(lambda x, w, b: conv1(x), [seq, conv1.weight, conv1.bias])


def test_gradcheck_conv1d_unbatched_and_without_bias():
    rng = np.random.default_rng(2)
    x, w = t64(rng.standard_normal((3, 7))), t64(rng.standard_normal((2, 3, 3)))
    assert gradcheck(lambda x, w: F.conv1d(x, w, stride=2, dilation=2), [x, w])


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                dict(kernel_size=(2, 3), stride=1, dilation=(2, 1)),
                                dict(kernel_size=2, stride=2, ceil_mode=True)])
def test_gradcheck_max_and_avg_pool2d(kw):
    rng = np.random.default_rng(3)
    x = t64(_distinct(rng, (2, 2, 5, 5)))
    assert gradcheck(lambda x: F.max_pool2d(x, **kw), [x])
    if "dilation" not in kw:
        assert gradcheck(lambda x: F.avg_pool2d(x, **kw), [x])
        assert gradcheck(lambda x: F.avg_pool2d(x, count_include_pad=False, **kw), [x])


def test_gradcheck_pool1d_and_adaptive():
    rng = np.random.default_rng(4)
    seq = t64(_distinct(rng, (2, 3, 7)))
    assert gradcheck(lambda x: F.max_pool1d(x, 3, 2, 1, ceil_mode=True), [seq])
    assert gradcheck(lambda x: F.avg_pool1d(x, 3, 2, 1), [seq])
    assert gradcheck(lambda x: F.adaptive_avg_pool1d(x, 3), [seq])
    x = t64(rng.standard_normal((2, 2, 5, 7)))
    for size in (1, (3, 4), (None, 2)):
        assert gradcheck(lambda x: F.adaptive_avg_pool2d(x, size), [x])


def test_gradcheck_batchnorm2d_group_norm_rms_norm():
    rng = np.random.default_rng(5)
    x = t64(rng.standard_normal((3, 4, 2, 3)))
    bn = nn.BatchNorm2d(4).double()
    with mg.no_grad():
        bn.weight.copy_(t64(rng.standard_normal(4), False))
    assert gradcheck(lambda x, w, b: bn(x), [x, bn.weight, bn.bias])
    bn.eval()
    assert gradcheck(lambda x, w, b: bn(x), [x, bn.weight, bn.bias])
    w, b = t64(rng.standard_normal(4)), t64(rng.standard_normal(4))
    assert gradcheck(lambda x, w, b: F.group_norm(x, 2, w, b), [x, w, b])
    assert gradcheck(lambda x: nn.GroupNorm(4, 4, affine=False).double()(x), [x])
    w = t64(rng.standard_normal((2, 3)))
    assert gradcheck(lambda x, w: F.rms_norm(x, (2, 3), w), [x, w])
    assert gradcheck(lambda x: F.rms_norm(x, 3, eps=0.5), [x])


def _both(torch, fn_mg, fn_torch, *arrays):
    """(minigrad's, PyTorch's) outputs and input gradients of fn on the same arrays."""
    results = []
    for lib, fn in ((mg, fn_mg), (torch, fn_torch)):
        ts = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = fn(*ts)
        y = out[0] if isinstance(out, tuple) else out
        w = np.random.default_rng(9).standard_normal(tuple(y.shape)).astype(str(y.dtype)[-7:])
        (y * lib.tensor(w)).sum().backward()
        results.append((out, [None if t.grad is None else t.grad.numpy() for t in ts]))
    return results


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layouts_batch_sizes_and_dtypes_match_pytorch(torch, dtype):
    """Transposed and sliced (non-contiguous) inputs, batches of 0 and 1, float32 and float64."""
    rng = np.random.default_rng(6)
    base = rng.standard_normal((3, 4, 6, 7)).astype(dtype)
    w = rng.standard_normal((6, 2, 3, 3)).astype(dtype)
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)
    views = {"transposed": lambda t: t.transpose(2, 3), "strided": lambda t: t[:, :, ::2],
             "one": lambda t: t[1:2], "empty": lambda t: t[:0]}
    for name, view in views.items():
        for op in ("conv", "max", "avg", "adaptive"):
            def run(lib, x, w, op=op):
                Fl = lib.nn.functional
                x = view(x)
                if op == "conv":
                    return Fl.conv2d(x, w, stride=2, padding=1, groups=2)
                if op == "max":
                    return Fl.max_pool2d(x, 2, ceil_mode=True, return_indices=True)
                if op == "avg":
                    return Fl.avg_pool2d(x, 3, 2, 1)
                return Fl.adaptive_avg_pool2d(x, (2, 3))
            (got, g_grads), (want, t_grads) = _both(torch, lambda *a: run(mg, *a),
                                                    lambda *a: run(torch, *a), base, w)
            got, want = (got if isinstance(got, tuple) else (got,),
                         want if isinstance(want, tuple) else (want,))
            for g, t in zip(got, want):
                assert g.shape == tuple(t.shape) and str(g.dtype) == str(t.dtype)[6:], (name, op)
                np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy(), **tol,
                                           err_msg=f"{op} {name}")
            for g, t in zip(g_grads, t_grads):
                assert (g is None) == (t is None), (op, name)
                if g is not None:
                        np.testing.assert_allclose(g, t, **tol, err_msg=f"{op} {name} gradient")


def test_max_pool_picks_the_first_of_equal_values_and_the_last_nan(torch):
    x = np.array([[[[1.0, 3.0, 3.0, 0.0, np.nan, 1.0], [3.0, 2.0, np.nan, 1.0, 2.0, np.nan]]]],
                 np.float32)
    for lib in (mg, torch):
        t = lib.tensor(x, requires_grad=True)
        y, idx = lib.nn.functional.max_pool2d(t, 2, return_indices=True)
        y.sum().backward()
        if lib is mg:
            got = (y.detach().numpy(), idx.numpy(), t.grad.numpy())
        else:
            want = (y.detach().numpy(), idx.numpy(), t.grad.numpy())
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_batchnorm2d_running_stats_and_state_dict_follow_pytorch(torch):
    rng = np.random.default_rng(7)
    batches = [rng.standard_normal((4, 3, 5, 5)).astype(np.float32) * (i + 1) for i in range(3)]
    bns = [mg.nn.BatchNorm2d(3, momentum=0.2), torch.nn.BatchNorm2d(3, momentum=0.2),
           mg.nn.BatchNorm2d(3, momentum=None), torch.nn.BatchNorm2d(3, momentum=None)]
    outs = [[], [], [], []]
    for i, (lib, bn) in enumerate(zip((mg, torch, mg, torch), bns)):
        for x in batches:
            outs[i].append(bn(lib.tensor(x)).detach().numpy())
        outs[i].append(bn(lib.tensor(batches[0][:0])).detach().numpy())  # an empty batch
        bn.eval()
        outs[i].append(bn(lib.tensor(batches[1])).detach().numpy())
    for mine, theirs in ((0, 1), (2, 3)):  # momentum 0.2, and None (the plain average)
        for g, t in zip(outs[mine], outs[theirs]):
            np.testing.assert_allclose(g, t, rtol=1e-4, atol=1e-5)
        sd_mg, sd_t = bns[mine].state_dict(), bns[theirs].state_dict()
        assert list(sd_mg) == list(sd_t)
        for k in sd_t:
            np.testing.assert_allclose(sd_mg[k].numpy(), sd_t[k].numpy(), rtol=1e-5, err_msg=k)
        assert sd_mg["num_batches_tracked"].dtype == np.int64
        assert int(sd_mg["num_batches_tracked"]) == 4


def test_conv_weights_load_from_pytorch_and_give_its_outputs(torch):
    rng = np.random.default_rng(8)
    t_conv = torch.nn.Conv2d(3, 5, 3, stride=2, padding="valid", groups=1, bias=True)
    m_conv = nn.Conv2d(3, 5, 3, stride=2, padding="valid")
    m_conv.load_state_dict({k: mg.tensor(v.detach().numpy()) for k, v in
                            t_conv.state_dict().items()})
    x = rng.standard_normal((2, 3, 9, 8)).astype(np.float32)
    np.testing.assert_allclose(m_conv(mg.tensor(x)).detach().numpy(),
                               t_conv(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
    assert repr(m_conv) == repr(t_conv)


def test_errors_name_the_op_and_the_shapes():
    x = mg.zeros(2, 3, 8, 8)
    with raises(RuntimeError, "conv2d: given groups=1, weight of size [4, 2, 3, 3], expected "
                              "input[2, 3, 8, 8] to have 2 channels, but got 3"):
        F.conv2d(x, mg.zeros(4, 2, 3, 3))
    with raises(RuntimeError, "conv2d: expected a 4-dimensional weight"):
        F.conv2d(x, mg.zeros(4, 3, 3))
    with raises(RuntimeError, "Expected 2D (unbatched) or 3D (batched) input to conv1d, "
                              "but got input of size: [2, 3, 8, 8]"):
        F.conv1d(x, mg.zeros(4, 3, 3))
    with raises(RuntimeError, "bias of size [5]"):
        F.conv2d(x, mg.zeros(4, 3, 3, 3), mg.zeros(5))
    with raises(RuntimeError, "conv2d: given groups=2, expected weight to be divisible by 2"):
        F.conv2d(x, mg.zeros(3, 3, 3, 3), groups=2)
    with raises(RuntimeError, "conv2d: non-positive stride"):
        F.conv2d(x, mg.zeros(4, 3, 3, 3), stride=0)
    with raises(RuntimeError, "conv2d: expected stride to be a single integer value or a list "
                              "of 2 values"):
        F.conv2d(x, mg.zeros(4, 3, 3, 3), stride=(1, 2, 3))
    with raises(ValueError, "conv2d: invalid padding string 'full'"):
        F.conv2d(x, mg.zeros(4, 3, 3, 3), padding="full")
    with raises(RuntimeError, "padding (4, 4) should be less than the corresponding input "
                              "dimension 4 for padding_mode='reflect'"):
        nn.Conv2d(3, 1, 3, padding=4, padding_mode="reflect")(mg.zeros(1, 3, 4, 4))
    with raises(ValueError, "Conv2d: padding_mode must be one of"):
        nn.Conv2d(3, 1, 3, padding_mode="mirror")
    with raises(RuntimeError, "max_pool2d: stride should be greater than zero"):
        F.max_pool2d(x, 2, stride=0)
    with raises(RuntimeError, "avg_pool2d: pad should be at most half"):
        F.avg_pool2d(x, 2, padding=2)
    with raises(RuntimeError, "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got [8, 8]"):
        F.adaptive_avg_pool2d(x[0, 0], 2)
    with raises(ValueError, "GroupNorm: num_channels (4) must be divisible by num_groups (3)"):
        nn.GroupNorm(3, 4)
    with raises(ValueError, "Expected more than 1 value per channel when training, got input "
                            "size (1, 3, 1, 1)"):
        nn.BatchNorm2d(3)(mg.zeros(1, 3, 1, 1))


def test_gradcheck_conv_transpose():
    rng = np.random.default_rng(10)
    x, w, b = (t64(rng.standard_normal(s)) for s in [(2, 4, 3, 3), (4, 1, 3, 2), (2,)])
    assert gradcheck(lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1,
                                                        output_padding=(1, 0), groups=2), [x, w, b])
    up = nn.ConvTranspose1d(2, 3, 3, stride=3, dilation=2).double()
    seq = t64(rng.standard_normal((2, 2, 4)))
    assert gradcheck(lambda x, w, b: up(x), [seq, up.weight, up.bias])


def test_conv_transpose_is_the_adjoint_of_conv_and_sizes_follow_pytorch(torch):
    """<conv(x), y> = <x, conv_transpose(y)> for the same weight; output_size= as PyTorch."""
    rng = np.random.default_rng(11)
    x, y = rng.standard_normal((2, 4, 9, 8)), rng.standard_normal((2, 6, 5, 4))
    w = rng.standard_normal((6, 2, 3, 3))
    kw = dict(stride=2, padding=1, groups=2)
    lhs = (F.conv2d(mg.tensor(x), mg.tensor(w), **kw) * mg.tensor(y)).sum().item()
    rhs = (mg.tensor(x) * F.conv_transpose2d(mg.tensor(y), mg.tensor(w), output_padding=(0, 1),
                                             **kw)).sum().item()
    assert abs(lhs - rhs) < 1e-9 * max(1.0, abs(lhs))
    for lib in (mg, torch):
        up = lib.nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1)
        assert tuple(up(lib.zeros(1, 4, 5, 5), output_size=[10, 9]).shape) == (1, 2, 10, 9)
        with pytest.raises(ValueError, match=r"valid sizes range from \[9, 9\] to \[10, 10\]"):
            up(lib.zeros(1, 4, 5, 5), output_size=[12, 12])
    with raises(RuntimeError, "conv_transpose2d: output padding must be smaller than either "
                              "stride or dilation"):
        F.conv_transpose2d(mg.zeros(1, 4, 3, 3), mg.zeros(4, 2, 3, 3), output_padding=1)
    with raises(ValueError, 'ConvTranspose2d: only "zeros" padding mode is supported'):
        nn.ConvTranspose2d(4, 2, 3, padding_mode="reflect")


def test_a_batch_done_in_slices_gives_the_same_numbers(monkeypatch):
    """Columns above the memory budget are made slice by slice of the batch: the outputs and
    all three gradients are those of the batch done at once."""
    from minigrad.ops import conv
    rng = np.random.default_rng(12)
    arrays = [rng.standard_normal((5, 4, 6, 5)), rng.standard_normal((6, 2, 3, 3)),
              rng.standard_normal(6)]

    def run():
        x, w, b = (t64(a) for a in arrays)
        y = F.conv2d(x, w, b, stride=(1, 2), padding=1, groups=2)
        (y * y).sum().backward()
        return [y.detach().numpy()] + [t.grad.numpy() for t in (x, w, b)]
    whole = run()
    monkeypatch.setattr(conv, "COLUMN_BYTES", 1)  # one batch item per slice
    for got, want in zip(run(), whole):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_channel_dropout_drops_whole_channels_from_the_seeded_stream():
    x = mg.ones(64, 6, 3, 4, requires_grad=True)
    mg.manual_seed(3)
    y = F.dropout2d(x, 0.25)
    (y * 2).sum().backward()
    a = y.detach().numpy().reshape(64 * 6, -1)
    assert set(np.unique(a)) <= {0.0, np.float32(1 / 0.75)}
    assert (a.min(1) == a.max(1)).all()  # one value per (n, c)
    assert abs((a[:, 0] == 0).mean() - 0.25) < 0.07
    np.testing.assert_array_equal(x.grad.numpy(), 2 * y.detach().numpy())
    mg.manual_seed(3)
    np.testing.assert_array_equal(F.dropout2d(mg.ones(64, 6, 3, 4), 0.25).numpy(),
                                  y.detach().numpy())
    seq = mg.ones(5, 7)  # unbatched (C, L): one draw per channel
    kept = F.dropout1d(seq, 0.5).numpy()
    assert (kept.min(1) == kept.max(1)).all()
    drop = nn.Dropout2d(0.5).eval()
    assert drop(x) is x and (F.dropout1d(seq, 1.0).numpy() == 0).all()
    with raises(ValueError, "dropout probability has to be between 0 and 1, but got 1.5"):
        nn.Dropout1d(1.5)
    with raises(RuntimeError, "dropout1d: Expected 2D or 3D input, but received a 4D input"):
        F.dropout1d(x, 0.5)
