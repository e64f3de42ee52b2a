"""The memory formats (`channels_last`, `contiguous_format`, `preserve_format`,
`channels_last_3d`) where scripts pass them, compared with PyTorch: values unchanged, the
same errors for a wrong type or rank, modules moved with them, and a format saved in a
checkpoint loads back as the same object."""
import io

import numpy as np
import pytest

import minigrad

FORMATS = ["channels_last", "channels_last_3d", "contiguous_format", "preserve_format"]


def _calls(lib, fmt):
    """Every place a script passes memory_format=, on a 4-d tensor."""
    x = lib.tensor(np.arange(24, dtype=np.float32).reshape(1, 2, 3, 4))
    return {"to": lambda: x.to(memory_format=fmt),
            "to device": lambda: x.to("cpu", memory_format=fmt),
            "contiguous": lambda: x.contiguous(memory_format=fmt),
            "clone": lambda: x.clone(memory_format=fmt),
            "torch.clone": lambda: lib.clone(x, memory_format=fmt),
            "zeros_like": lambda: lib.zeros_like(x, memory_format=fmt),
            "ones_like": lambda: lib.ones_like(x, memory_format=fmt),
            "empty_like": lambda: lib.empty_like(x, memory_format=fmt).zero_(),
            "full_like": lambda: lib.full_like(x, 2.0, memory_format=fmt),
            "rand_like": lambda: lib.rand_like(x, memory_format=fmt).mul(0),
            "randn_like": lambda: lib.randn_like(x, memory_format=fmt).mul(0)}


def _outcome(call):
    try:
        return "ok", call().detach().numpy()
    except (TypeError, RuntimeError) as e:
        return type(e).__name__, str(e)


@pytest.mark.parametrize("fmt", FORMATS + ["int"])
def test_memory_format_arguments_as_in_pytorch(torch, fmt):
    fmts = [3, 3] if fmt == "int" else [getattr(torch, fmt), getattr(minigrad, fmt)]
    want, have = _calls(torch, fmts[0]), _calls(minigrad, fmts[1])
    for name in want:
        (kind_w, val_w), (kind_h, val_h) = _outcome(want[name]), _outcome(have[name])
        assert kind_h == kind_w, (name, fmt, val_w, val_h)
        if kind_w == "ok":
            np.testing.assert_array_equal(val_h, val_w, err_msg=name)
        else:
            assert name.split()[0].split(".")[-1] in val_h, val_h  # names the operation
            assert "memory_format" in val_h or "rank" in val_h, val_h


def test_channels_last_wants_a_4d_tensor(torch):
    for lib in (torch, minigrad):
        with pytest.raises(RuntimeError, match="rank 4"):
            lib.zeros(2, 3).contiguous(memory_format=lib.channels_last)
        with pytest.raises(RuntimeError, match="rank 5"):
            lib.zeros(1, 2, 3, 4).to(memory_format=lib.channels_last_3d)
        assert lib.zeros(1, 2, 3, 4, 5).contiguous(memory_format=lib.channels_last_3d).shape == \
            (1, 2, 3, 4, 5)


def test_a_module_moves_to_channels_last(torch):
    """`model.to(memory_format=channels_last)` changes only the layout of the 4-d weights,
    and a model of Linear layers (no 4-d weight) is left alone, as in PyTorch."""
    for lib in (torch, minigrad):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Conv2d(2, 3, 3), lib.nn.Flatten(), lib.nn.Linear(12, 2))
        before = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
        assert model.to(memory_format=lib.channels_last) is model
        for k, v in model.state_dict().items():
            np.testing.assert_array_equal(v.numpy(), before[k])
        with pytest.raises(TypeError, match="memory_format"):
            model.to(memory_format="channels_last")


def test_formats_are_named_and_pickle_as_themselves(torch):
    assert repr(minigrad.channels_last) == "minigrad.channels_last"
    assert repr(torch.channels_last) == "torch.channels_last"
    assert isinstance(minigrad.preserve_format, minigrad.memory_format)
    buf = io.BytesIO()
    minigrad.save({"memory_format": minigrad.channels_last}, buf)
    buf.seek(0)
    assert minigrad.load(buf, weights_only=False)["memory_format"] is minigrad.channels_last
