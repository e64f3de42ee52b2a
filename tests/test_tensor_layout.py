"""How tensors are stored, against PyTorch: `Size`, `stride()`, `storage_offset()` and
`is_contiguous()` of views, `contiguous()` copying exactly when it must; and the in-place
shape changes (`unsqueeze_`, `transpose_`, ...), whose history continues through the change,
with views of the tensor and version counters behaving as PyTorch's."""
import io
import pickle

import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck

VIEWS = {
    "plain": lambda t: t,
    "transposed": lambda t: t.transpose(0, 2),
    "permuted": lambda t: t.permute(1, 2, 0),
    "sliced": lambda t: t[1:, ::2, 1:3],
    "row": lambda t: t[1],
    "column": lambda t: t[:, 2],
    "element": lambda t: t[1, 2, 3],
    "expanded": lambda t: t[:, :1].expand(2, 3, 4),
    "unsqueezed": lambda t: t[0].unsqueeze(1),
    "narrowed": lambda t: t.narrow(2, 1, 2),
    "unfolded": lambda t: t.unfold(2, 2, 1),
    "mT": lambda t: t.mT,
    "split": lambda t: t.split([1, 2], 1)[1],
}


@pytest.mark.parametrize("view", list(VIEWS))
def test_strides_of_views_as_in_pytorch(torch, view):
    base = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)
    want, got = VIEWS[view](torch.tensor(base)), VIEWS[view](mg.tensor(base))
    assert got.stride() == want.stride()
    assert got.storage_offset() == want.storage_offset()
    assert got.is_contiguous() == want.is_contiguous()
    for d in range(got.dim()):
        assert got.stride(d) == want.stride(d) and got.stride(-1 - d) == want.stride(-1 - d)
    c = got.contiguous()
    assert c.is_contiguous() and (c is got) == want.is_contiguous()
    np.testing.assert_array_equal(c.numpy(), want.contiguous().numpy())


def test_contiguous_copies_with_gradient():
    x = mg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    y = x.t().contiguous()
    assert y.is_contiguous() and y.stride() == (2, 1) and y.grad_fn is not None
    assert gradcheck(lambda a: a.t().contiguous() * a.t(), [x])


def test_size_is_a_tuple_with_numel():
    s = mg.zeros(2, 3, 4).shape
    assert isinstance(s, mg.Size) and isinstance(s, tuple) and s == (2, 3, 4)
    assert s.numel() == 24 and mg.Size().numel() == 1 and mg.zeros(0, 3).shape.numel() == 0
    assert isinstance(s[1:], mg.Size) and isinstance(s + (5,), mg.Size)
    assert isinstance((1,) + s, mg.Size) and (1,) + s == (1, 2, 3, 4)
    assert isinstance(s * 2, mg.Size) and s[0] == 2 and s[-1] == 4
    assert repr(s) == str(s) == "minigrad.Size([2, 3, 4])"
    assert mg.Size([np.int64(2), 3]) == (2, 3)
    with pytest.raises(TypeError, match="Size"):
        mg.Size([2.5])
    assert pickle.loads(pickle.dumps(s)) == s and type(pickle.loads(pickle.dumps(s))) is mg.Size
    assert mg.zeros(s).shape == s and mg.ones(2, 3).reshape(mg.Size([3, 2])).shape == (3, 2)
    assert np.zeros(s).shape == s and mg.zeros(2, 3).new_zeros(s).shape == s


def test_size_saves_as_a_tuple():
    buf = io.BytesIO()
    mg.save({"shape": mg.zeros(2, 3).shape}, buf)
    buf.seek(0)
    assert mg.load(buf)["shape"] == (2, 3)


def test_shape_changes_in_place_continue_the_graph(torch):
    grads = []
    for lib in (torch, mg):
        x = lib.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
        y = x * 2
        before = y._version
        assert y.unsqueeze_(0) is y and y.shape == (1, 2, 3) and y._version == before + 1
        y.transpose_(0, 2).squeeze_(2)
        assert y.shape == (3, 2)
        y.t_()
        (y * lib.tensor([[1.0, 2, 3], [4, 5, 6]], dtype=lib.float64)).sum().backward()
        grads.append(x.grad.numpy().copy())
    np.testing.assert_array_equal(grads[1], grads[0])


def test_a_change_of_shape_invalidates_a_saved_tensor(torch):
    for lib in (torch, mg):
        x = lib.ones(2, requires_grad=True)
        y = x * 1
        z = y * y  # saves y
        y.unsqueeze_(0)
        with pytest.raises(RuntimeError):
            z.sum().backward()


def test_views_of_a_reshaped_tensor_keep_writing_through(torch):
    outs = []
    for lib in (torch, mg):
        x = lib.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
        base = x * 1
        row = base[1]              # a view taken before the change
        base.transpose_(0, 1)      # base is (4, 3) now
        col = base[:, 0]           # a view taken after it
        row.mul_(10)               # writes through to base
        col.add_(1)
        (base * lib.arange(12.0, dtype=lib.float64).reshape(4, 3)).sum().backward()
        outs.append((base.detach().numpy().copy(), row.detach().numpy().copy(),
                     x.grad.numpy().copy()))
    for got, want in zip(outs[1], outs[0]):
        np.testing.assert_array_equal(got, want)


def test_a_view_changes_shape_and_writes_through(torch):
    outs = []
    for lib in (torch, mg):
        x = lib.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
        base = x * 1
        v = base[:, 1:]
        v.t_()                     # v is (2, 2), still a view of base
        v.mul_(lib.tensor([[1.0], [100.0]], dtype=lib.float64))
        base.sum().backward()
        outs.append((base.detach().numpy().copy(), x.grad.numpy().copy()))
    for got, want in zip(outs[1], outs[0]):
        np.testing.assert_array_equal(got, want)


def test_leaves_change_shape_only_without_a_graph(torch):
    for lib in (torch, mg):
        w = lib.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf"):
            w.unsqueeze_(0)
        with pytest.raises(RuntimeError, match="leaf"):
            w[:2].unsqueeze_(0)
        with lib.no_grad():
            w.unsqueeze_(0)
        (w * 2).sum().backward()
        assert tuple(w.grad.shape) == (1, 3)
        d = w.detach()
        with lib.no_grad():
            w.squeeze_()
        assert tuple(d.shape) == (1, 3) and tuple(w.shape) == (3,)


def test_shape_change_errors_as_in_pytorch(torch):
    for lib in (torch, mg):
        with pytest.raises(RuntimeError, match="t_"):
            lib.zeros(2, 2, 2).t_()
        with pytest.raises(IndexError):
            lib.zeros(2, 3).transpose_(0, 2)
        with pytest.raises(IndexError):
            lib.zeros(2, 3).unsqueeze_(4)
        assert tuple(lib.zeros(()).t_().shape) == () and tuple(lib.zeros(3).t_().shape) == (3,)
        assert tuple(lib.zeros(2, 1, 3).squeeze_((0, 1)).shape) == (2, 3)


def test_shape_changes_differentiate_in_float64():
    def f(a):
        y = a * 1
        y.unsqueeze_(1).transpose_(0, 2).squeeze_(1)
        return y * y
    assert gradcheck(f, [mg.tensor(np.random.default_rng(0).standard_normal((2, 3)),
                                   requires_grad=True)])


def test_contiguous_exports_to_onnx(tmp_path):
    """A model that copies a transposed tensor to row-major (`.contiguous().view(...)`, common
    in attention code) exports: the copy is an Identity in ONNX, which has no layouts."""
    ort = pytest.importorskip("onnxruntime")
    import minigrad.onnx

    class Model(mg.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = mg.nn.Linear(3, 3)

        def forward(self, x):
            return self.lin(x).transpose(0, 1).contiguous().view(-1)

    model, x = Model(), mg.tensor(np.random.default_rng(1).standard_normal((2, 3)),
                                  dtype=mg.float32)
    path = str(tmp_path / "model.onnx")
    minigrad.onnx.export(model, (x,), path, input_names=["x"], dynamo=False)
    (out,) = ort.InferenceSession(path).run(None, {"x": x.numpy()})
    np.testing.assert_allclose(out, model(x).detach().numpy(), rtol=1e-6, atol=1e-6)
