"""TransformerEncoder's `enable_nested_tensor` and `mask_check`, against PyTorch: the
construction warning, the attributes, and the zeros PyTorch's nested-tensor path leaves at the
padded positions (eval mode, no gradient), with and without the final norm."""
import warnings

import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")


def _pair(enable=True, mask_check=True, norm=False, **layer_kw):
    """The same encoder in both libraries (minigrad's loaded from PyTorch's state dict)."""
    kw = {**dict(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0, batch_first=True),
          **layer_kw}
    torch.manual_seed(0)
    with warnings.catch_warnings(record=True) as t_warn:
        warnings.simplefilter("always")
        t = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(**kw), 2,
                                        torch.nn.LayerNorm(8) if norm else None,
                                        enable_nested_tensor=enable, mask_check=mask_check)
    with warnings.catch_warnings(record=True) as m_warn:
        warnings.simplefilter("always")
        m = mg.nn.TransformerEncoder(mg.nn.TransformerEncoderLayer(**kw), 2,
                                     mg.nn.LayerNorm(8) if norm else None,
                                     enable_nested_tensor=enable, mask_check=mask_check)
    m.load_state_dict({k: v.numpy() for k, v in t.state_dict().items()})
    assert [str(w.message) for w in m_warn] == [str(w.message) for w in t_warn]
    for name in ("enable_nested_tensor", "use_nested_tensor", "mask_check"):
        assert getattr(m, name) == getattr(t, name), name
    return t, m


def _run(t, m, pad, grad=False):
    x = np.random.default_rng(1).standard_normal((2, 4, 8)).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's nested-tensor prototype warning
        with torch.set_grad_enabled(grad):
            want = t(torch.tensor(x), src_key_padding_mask=torch.tensor(pad)).detach().numpy()
    with mg.autograd.set_grad_enabled(grad):
        got = m(mg.tensor(x), src_key_padding_mask=mg.tensor(pad)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    return got


END_PAD = np.array([[False, False, True, True], [False, False, False, False]])


@pytest.mark.parametrize("norm", [False, True])
def test_eval_zeroes_padded_positions_as_pytorch(norm):
    t, m = _pair(norm=norm)
    t.eval(), m.eval()
    got = _run(t, m, END_PAD)
    if not norm:
        assert (got[0, 2:] == 0).all() and (got[1] != 0).all()
    _run(t, m, END_PAD, grad=True)  # recording a gradient: no nested path, values kept


def test_no_nested_path_in_training_disabled_or_unaligned():
    t, m = _pair(enable=False)
    t.eval(), m.eval()
    assert (_run(t, m, END_PAD)[0, 2:] != 0).all()
    t, m = _pair()  # training mode (dropout 0)
    _run(t, m, END_PAD)
    t, m = _pair()
    t.eval(), m.eval()
    _run(t, m, np.array([[True, False, False, False], [False] * 4]))  # padding first


@pytest.mark.parametrize("layer_kw", [dict(norm_first=True), dict(nhead=1),
                                      dict(activation=lambda x: x), dict(bias=False)])
def test_layers_without_the_path_warn_as_pytorch(layer_kw):
    t, m = _pair(**layer_kw)
    assert m.use_nested_tensor is False
    t.eval(), m.eval()
    _run(t, m, END_PAD)
