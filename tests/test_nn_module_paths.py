"""torch.nn.modules' submodules at minigrad's path: each offers the names of PyTorch's (those
minigrad has), the very classes of minigrad.nn, and the helpers code imports from them."""
import importlib
from collections import OrderedDict

import pytest

import minigrad as mg

PATHS = ["activation", "batchnorm", "channelshuffle", "container", "conv", "distance", "dropout",
         "flatten", "fold", "instancenorm", "linear", "loss", "normalization", "padding",
         "pixelshuffle", "pooling", "rnn", "sparse", "transformer", "upsampling"]
# PyTorch's names minigrad does not have (compat_notes lists them as not supported)
ABSENT = {"Container", "LinearCrossEntropyLoss", "NLLLoss2d", "CrossMapLRN2d"}


@pytest.mark.parametrize("name", PATHS)
def test_each_path_offers_pytorchs_names_as_minigrad_nns_classes(torch, name):
    ours = importlib.import_module(f"minigrad.nn.modules.{name}")
    theirs = importlib.import_module(f"torch.nn.modules.{name}")
    assert sorted(set(theirs.__all__) - ABSENT) == sorted(ours.__all__)
    for n in ours.__all__:
        assert getattr(ours, n) is getattr(mg.nn, n), n


def test_the_private_bases_code_subclasses_and_tests(torch):
    from minigrad.nn.modules.batchnorm import _BatchNorm, _NormBase
    from minigrad.nn.modules.conv import _ConvNd
    from minigrad.nn.modules.dropout import _DropoutNd
    from minigrad.nn.modules.loss import _Loss
    assert isinstance(mg.nn.BatchNorm2d(2), _BatchNorm) and isinstance(mg.nn.LazyBatchNorm1d(),
                                                                      _NormBase)
    assert isinstance(mg.nn.Conv1d(1, 1, 1), _ConvNd) and isinstance(mg.nn.Dropout2d(), _DropoutNd)

    class Scaled(_Loss):   # a loss written by hand, as PyTorch users write one
        def forward(self, input, target):
            out = (input - target).abs()
            return out.mean() if self.reduction == "mean" else out.sum()
    assert Scaled(reduction="sum")(mg.ones(3), mg.zeros(3)).item() == 3.0


def test_utils_helpers_as_pytorchs(torch):
    from torch.nn.modules import utils as t
    from minigrad.nn.modules import utils as m
    for value in (3, (1, 2), [4], "ab", range(3)):
        for n in ("_single", "_pair", "_triple", "_quadruple"):
            assert getattr(m, n)(value) == getattr(t, n)(value), (n, value)
    assert m._pair.__name__ == "_pair" and m._ntuple(5, "five")(1) == (1,) * 5
    assert m._reverse_repeat_tuple((1, 2, 3), 2) == t._reverse_repeat_tuple((1, 2, 3), 2)
    for make in (dict, OrderedDict):
        ours, theirs = make(), make()
        for d in (ours, theirs):
            d.update({"module.weight": 1, "module.bias": 2, "head.module.x": 3})
        if make is OrderedDict:
            for d in (ours, theirs):
                d._metadata = OrderedDict([("", {}), ("module", {"v": 1}), ("module.fc", {})])
        m.consume_prefix_in_state_dict_if_present(ours, "module.")
        t.consume_prefix_in_state_dict_if_present(theirs, "module.")
        assert list(ours.items()) == list(theirs.items())
        assert list(getattr(ours, "_metadata", {})) == list(getattr(theirs, "_metadata", {}))


def test_transformer_helpers_as_pytorchs(torch):
    from minigrad.nn.modules.transformer import _get_activation_fn, _get_clones
    layers = _get_clones(mg.nn.Linear(2, 2), 3)
    assert type(layers).__name__ == "ModuleList" and len(layers) == 3
    assert layers[0].weight is not layers[1].weight
    assert (layers[0].weight.numpy() == layers[2].weight.numpy()).all()
    assert _get_activation_fn("gelu") is mg.nn.functional.gelu
    from torch.nn.modules.transformer import _get_activation_fn as theirs
    for lib_fn in (_get_activation_fn, theirs):
        with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
            lib_fn("tanh")
