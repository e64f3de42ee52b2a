"""`print(model)` shows what PyTorch's shows: the layers' extra_repr (Dropout's inplace,
LayerNorm's and BatchNorm1d's flags, GELU's approximation, ...), multi-line extra_repr, children
under a module with an extra_repr, and ModuleList's runs of equal blocks (`(0-5): 6 x Block`)."""
import warnings

import minigrad


def layers(torch):
    nn = torch.nn
    torch.manual_seed(0)
    return [
        nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.LeakyReLU(0.2), nn.Dropout(0.1),
                      nn.Linear(8, 2)),
        nn.Embedding(10, 4, padding_idx=0), nn.LayerNorm(8), nn.LayerNorm([2, 3], bias=False),
        nn.LayerNorm(3, elementwise_affine=False), nn.BatchNorm1d(3, bias=False),
        nn.BatchNorm1d(3, affine=False, track_running_stats=False),
        nn.GRU(4, 8, num_layers=2, batch_first=True), nn.LSTM(4, 8, bidirectional=True),
        nn.LSTM(3, 4, 2, dropout=0.1), nn.MultiheadAttention(8, 2),
        nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), nn.Transformer(8, 2, 1, 1, 16),
        nn.CrossEntropyLoss(label_smoothing=0.1), nn.ModuleDict({"a": nn.ReLU(), "b": nn.GELU()}),
        nn.ModuleList([nn.Identity(), nn.Tanh()]), nn.ModuleList(), nn.Sequential(),
        nn.Flatten(), nn.Softmax(dim=-1), nn.Softmax(), nn.ReLU(inplace=True),
        nn.Dropout(0.2, inplace=True), nn.LeakyReLU(inplace=True), nn.GELU("tanh"),
    ]


def nested(torch):
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2)

        def extra_repr(self):
            return "hello=1\nworld=2"

    class Leaf(nn.Module):
        def extra_repr(self):
            return "a=1"

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([Block() for _ in range(3)]
                                        + [nn.ReLU(), nn.ReLU(), nn.Tanh()])
            self.leaf = Leaf()
            self.enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8), 2,
                                             enable_nested_tensor=False)

    return [Net(), nn.ModuleList([nn.Linear(1, 1), nn.Linear(1, 1), nn.Linear(1, 2)])]


def test_printed_layers_match_pytorch(torch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nn.Transformer's nested-tensor note, in both
        for make in (layers, nested):
            for theirs, ours in zip(make(torch), make(minigrad), strict=True):
                assert str(ours) == str(theirs)


def test_equal_blocks_print_once():
    text = str(nested(minigrad)[1])
    assert text == ("ModuleList(\n  (0-1): 2 x Linear(in_features=1, out_features=1, bias=True)\n"
                    "  (2): Linear(in_features=1, out_features=2, bias=True)\n)")
