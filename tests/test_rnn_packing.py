"""`nn.utils.rnn`: padding and packing against PyTorch's on the same data (values, dtypes,
gradients), their round trips, and their errors."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck
from minigrad.nn.utils.rnn import (PackedSequence, invert_permutation, pack_padded_sequence,
                                   pack_sequence, pad_packed_sequence, pad_sequence,
                                   unpack_sequence, unpad_sequence)


def data(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def leaves(lib, x):
    """Tensors and None of a result (a PackedSequence is a tuple) as arrays, in order."""
    if isinstance(x, (tuple, list)):
        return [a for item in x for a in leaves(lib, item)]
    if isinstance(x, lib.Tensor):
        return [(x.detach().numpy().copy(), str(x.dtype).replace("torch.", ""))]
    return [x]


def tensors(lib, x):
    if isinstance(x, (tuple, list)):
        return [t for item in x for t in tensors(lib, item)]
    return [x] if isinstance(x, lib.Tensor) else []


def both(torch, program, *arrays):
    """program(lib, *inputs) in each library; results and input gradients must be equal."""
    results = []
    for lib in (torch, mg):
        inputs = [lib.tensor(a).requires_grad_(True) for a in arrays]
        out = program(lib, *inputs)
        found = leaves(lib, out)
        floats = [t for t in tensors(lib, out) if t.requires_grad]
        rng = np.random.default_rng(1)
        sum((t * lib.tensor(rng.standard_normal(tuple(t.shape)))).sum() for t in floats).backward()
        results.append((found, [t.grad.numpy().copy() for t in inputs]))
    (want, want_grads), (got, got_grads) = results
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if isinstance(w, tuple):
            assert g[1] == w[1] and g[0].shape == w[0].shape, (g, w)
            np.testing.assert_array_equal(g[0], w[0])
        else:
            assert g == w
    for g, w in zip(got_grads, want_grads):
        np.testing.assert_allclose(g, w, atol=1e-12)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("lengths,enforce_sorted", [([5, 3, 3, 1], True), ([3, 5, 1, 3], False)])
def test_pack_padded_and_pad_packed_match_torch(torch, batch_first, lengths, enforce_sorted):
    def program(lib, x):
        rnn = lib.nn.utils.rnn
        packed = rnn.pack_padded_sequence(x, lengths, batch_first=batch_first,
                                          enforce_sorted=enforce_sorted)
        padded, out_lengths = rnn.pad_packed_sequence(packed, batch_first=batch_first)
        longer, _ = rnn.pad_packed_sequence(packed, batch_first, padding_value=-2.0,
                                            total_length=7)
        return packed, padded * 1.5, out_lengths, longer
    x = data(4, 6, 2) if batch_first else data(6, 4, 2)
    both(torch, program, x)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence_matches_torch(torch, batch_first, padding_side):
    def program(lib, a, b, c):
        return lib.nn.utils.rnn.pad_sequence([a, b, c], batch_first, -1.0, padding_side)
    both(torch, program, data(2, 3), data(5, 3, seed=1), data(4, 3, seed=2))


def test_pack_sequence_and_the_inverses_match_torch(torch):
    def program(lib, a, b, c):
        rnn = lib.nn.utils.rnn
        packed = rnn.pack_sequence([a, b, c], enforce_sorted=False)
        padded = rnn.pad_sequence([a, b, c], batch_first=True)
        return (packed, rnn.pack_sequence([b, c, a]), rnn.unpack_sequence(packed),
                rnn.unpad_sequence(padded, lib.tensor([2, 5, 4]), batch_first=True),
                rnn.invert_permutation(lib.tensor([2, 0, 3, 1])))
    both(torch, program, data(2, 3), data(5, 3, seed=1), data(4, 3, seed=2))


def test_packing_round_trips_and_gradcheck():
    x = mg.tensor(data(5, 3, 2), requires_grad=True)
    packed = pack_padded_sequence(x, [2, 5, 3], enforce_sorted=False)
    assert isinstance(packed, PackedSequence) and isinstance(packed, tuple)
    assert packed.batch_sizes.tolist() == [3, 3, 2, 1, 1]
    assert packed.sorted_indices.tolist() == [1, 2, 0]
    assert packed.unsorted_indices.tolist() == [2, 0, 1]
    padded, lengths = pad_packed_sequence(packed)
    assert lengths.dtype == np.int64 and lengths.tolist() == [2, 5, 3]
    real = np.arange(5)[:, None] < np.array([2, 5, 3])
    np.testing.assert_array_equal(padded.numpy()[real], x.numpy()[real])
    assert (padded.numpy()[~real] == 0).all()
    seqs = [mg.tensor(data(n, 2, seed=n), requires_grad=True) for n in (3, 1, 2)]
    for back in (unpack_sequence(pack_sequence(seqs, enforce_sorted=False)),
                 unpad_sequence(pad_sequence(seqs), [3, 1, 2])):
        assert [s.numpy().tolist() for s in back] == [s.numpy().tolist() for s in seqs]
    assert gradcheck(lambda t: pad_packed_sequence(
        pack_padded_sequence(t, [2, 5, 3], enforce_sorted=False), batch_first=True)[0], [x])
    assert gradcheck(lambda *s: pad_sequence(s, padding_side="left"), seqs)
    assert invert_permutation(None) is None
    assert packed.double() is packed and packed.float().data.dtype == np.float32
    assert not packed.is_cuda and packed.cpu() is packed


def _raises(torch, program):
    """Both libraries raise the same type; minigrad's message contains PyTorch's."""
    errors = []
    for lib in (torch, mg):
        with pytest.raises(Exception) as info:
            program(lib)
        errors.append(info.value)
    assert type(errors[1]) is type(errors[0]), errors
    return str(errors[0]), str(errors[1])


@pytest.mark.parametrize("program", [
    lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.zeros(5, 3, 2), [3, 5, 2]),
    lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.zeros(5, 3, 2), [5, 3, 0]),
    lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.zeros(5, 3, 2), [5, 3]),
    lambda lib: lib.nn.utils.rnn.pad_packed_sequence(
        lib.nn.utils.rnn.pack_padded_sequence(lib.zeros(5, 2, 2), [5, 3]), total_length=3),
    lambda lib: lib.nn.utils.rnn.pad_sequence([lib.zeros(2)], padding_side="middle"),
], ids=["unsorted", "zero length", "lengths count", "total_length", "padding_side"])
def test_errors_are_pytorchs(torch, program):
    theirs, mine = _raises(torch, program)
    assert theirs.split(". You can pass")[0] in mine


def test_errors_pytorch_does_not_give():
    with pytest.raises(ValueError, match=r"a length of 6 is longer than the input's 5 steps"):
        pack_padded_sequence(mg.zeros(5, 3, 2), [6, 3, 1])
    with pytest.raises(RuntimeError,
                       match=r"same trailing dims, got shapes \[\(2, 3\), \(3, 4\)\]"):
        pad_sequence([mg.zeros(2, 3), mg.zeros(3, 4)])
    with pytest.raises(ValueError, match="PackedSequence carries its lengths"):
        mg.nn.GRU(2, 3)(pack_sequence([mg.zeros(2, 2)]), lengths=[2])
