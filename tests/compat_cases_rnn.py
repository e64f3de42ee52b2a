"""Compatibility cases: the recurrent layers (torch.nn.RNN, GRU, LSTM and their cells) and
torch.nn.utils.rnn's padding and packing, with the layers reading packed sequences."""
from compat_cases_nn import fill
from compat_table import case, f32, f64

CASES = []
add = CASES.append


@add
@case("nn.RNN", "nn.GRU", "nn.RNNCell", "nn.GRUCell", inputs=(f32(3, 2, 4), f32(2, 4)),
      rtol=1e-4, atol=1e-5)
def _(lib, seq, x):
    nn = lib.nn
    rnn = fill(lib, nn.RNN(4, 5, num_layers=2), seed=1)
    gru = fill(lib, nn.GRU(4, 3, batch_first=True, bidirectional=True), seed=2)
    cell = fill(lib, nn.RNNCell(4, 3, nonlinearity="relu"), seed=3)
    gcell = fill(lib, nn.GRUCell(4, 3), seed=4)
    out, h = rnn(seq)
    gout, gh = gru(seq)
    return out, h, gout, gh, cell(x), gcell(x, gcell(x))


@add
@case("nn.LSTM", "nn.LSTMCell", "nn.RNNBase", "nn.RNNCellBase",
      inputs=(f32(2, 4, 3), f32(4, 2, 2), f32(4, 2, 4), f32(2, 3)), rtol=1e-4, atol=1e-5)
def _(lib, seq, h0, c0, x):
    nn = lib.nn
    lstm = fill(lib, nn.LSTM(3, 4, num_layers=2, batch_first=True, bidirectional=True,
                             proj_size=2), seed=5)
    plain = fill(lib, nn.LSTM(3, 4, bias=False), seed=6)
    cell = fill(lib, nn.LSTMCell(3, 4), seed=7)
    out, (h, c) = lstm(seq, (h0, c0))
    out1, state1 = plain(seq[0])  # unbatched (T, D), zero initial state
    return (out, h, c, out1, state1, cell(x), cell(x, cell(x)), isinstance(lstm, nn.RNNBase),
            isinstance(cell, nn.RNNCellBase),
            [n for n, _ in lstm.named_parameters()])


@add
@case("nn.utils.rnn.pack_padded_sequence", "nn.utils.rnn.pad_packed_sequence",
      "nn.utils.rnn.PackedSequence", inputs=(f32(5, 3, 3),), rtol=1e-4, atol=1e-5)
def _(lib, x):
    rnn = lib.nn.utils.rnn
    lstm = fill(lib, lib.nn.LSTM(3, 2, num_layers=2, bidirectional=True), seed=8)
    packed = rnn.pack_padded_sequence(x, lib.tensor([2, 5, 3]), enforce_sorted=False)
    out, (h, c) = lstm(packed)
    padded, lengths = rnn.pad_packed_sequence(out, total_length=6, padding_value=-1.0)
    sorted_packed = rnn.pack_padded_sequence(x.transpose(0, 1), [5, 4, 1], batch_first=True)
    return (packed, isinstance(out, rnn.PackedSequence), out.data, h, c, padded, lengths,
            sorted_packed, rnn.pad_packed_sequence(sorted_packed, batch_first=True))


@add
@case("nn.utils.rnn.pad_sequence", "nn.utils.rnn.pack_sequence", "nn.utils.rnn.unpack_sequence",
      "nn.utils.rnn.unpad_sequence", "nn.utils.rnn.invert_permutation",
      inputs=(f32(2, 3), f32(4, 3), f32(3, 3)))
def _(lib, a, b, c):
    rnn = lib.nn.utils.rnn
    packed = rnn.pack_sequence([a, b, c], enforce_sorted=False)
    padded = rnn.pad_sequence([a, b, c], batch_first=True, padding_value=0.5)
    gru = fill(lib, lib.nn.GRU(3, 2, batch_first=True), seed=9)
    out, h = gru(packed)
    return (packed, padded, rnn.pad_sequence([a, b], padding_side="left"), out.data, h,
            rnn.unpack_sequence(packed),
            rnn.unpad_sequence(padded, lib.tensor([2, 4, 3]), batch_first=True),
            rnn.invert_permutation(lib.tensor([1, 2, 0])))


@add
@case("nn.LSTM", compare="raises",
      match=r"LSTM: Expected hidden\[1\] size \(1, 2, 4\), got \[1, 2, 3\]")
def _(lib):
    lib.nn.LSTM(3, 4)(lib.zeros(5, 2, 3), (lib.zeros(1, 2, 4), lib.zeros(1, 2, 3)))


@add
@case("nn.utils.rnn.pack_padded_sequence", compare="raises",
      match="`lengths` array must be sorted in decreasing order")
def _(lib):
    lib.nn.utils.rnn.pack_padded_sequence(lib.zeros(5, 3, 2), [3, 5, 2])


@add
@case("nn.GRU", "nn.LSTM", "nn.GRUCell", "nn.LSTMCell", inputs=(f64(3, 2, 2), f64(2, 2)),
      rtol=1e-7, atol=1e-9)
def _(lib, seq, x):
    """Gradients recorded with create_graph=True through the fused gates: the runner
    backpropagates through them, so second derivatives are compared too (in the inputs and
    in the watched weights)."""
    nn = lib.nn
    gru = fill(lib, nn.GRU(2, 3, bidirectional=True, dtype=lib.float64), seed=8)
    lstm = fill(lib, nn.LSTM(2, 3, num_layers=2, dtype=lib.float64), seed=9)
    gcell = fill(lib, nn.GRUCell(2, 3, dtype=lib.float64), seed=10)
    lcell = fill(lib, nn.LSTMCell(2, 3, dtype=lib.float64), seed=11)
    loss = (gru(seq)[0].tanh().sum() + (lstm(seq)[0] ** 2).sum() + (gcell(x) ** 2).sum()
            + (lcell(x)[1] ** 2).sum())
    return lib.autograd.grad(loss, [seq, x], create_graph=True)
