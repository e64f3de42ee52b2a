"""searchsorted and bucketize (minigrad/bucketing.py) against PyTorch: sides, batched rows,
sorter, numbers, NaN, empty inputs, the int32 option and the errors."""
import numpy as np
import pytest

import minigrad as mg

NAN = float("nan")


def _calls(L):
    s = L.tensor([1.0, 3.0, 3.0, 5.0, 7.0])
    v = L.tensor([[0.0, 3.0, 8.0], [5.0, 5.5, NAN]])
    rows = L.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0]])
    return [
        lambda: L.searchsorted(s, v), lambda: L.searchsorted(s, v, right=True),
        lambda: L.searchsorted(s, v, side="right", out_int32=True),
        lambda: L.searchsorted(s, 3.0), lambda: L.searchsorted(rows, L.tensor([[2.5], [2.0]])),
        lambda: L.searchsorted(rows, L.tensor([[2.5]])),
        lambda: L.searchsorted(L.tensor([5.0, 1.0, 3.0]), L.tensor([2.0, 4.0]),
                               sorter=L.tensor([1, 2, 0])),
        lambda: L.searchsorted(s, v, right=True, side="left"),
        lambda: L.searchsorted(s, v.t()), lambda: L.searchsorted(s, L.zeros(0)),
        lambda: L.searchsorted(L.tensor([1, 3, 5]), L.tensor([2.5, 3.0])),
        lambda: L.searchsorted(L.tensor(1.0), L.tensor([2.0])),
        lambda: L.bucketize(v, s), lambda: L.bucketize(v, s, right=True),
        lambda: L.bucketize(L.tensor([1, 3, 6]), L.tensor([2, 4]), out_int32=True),
        lambda: L.bucketize(L.tensor(3.5), s), lambda: L.bucketize(v, L.ones(2, 2)),
    ]


def test_positions_as_pytorch(torch):
    for i, (want_call, got_call) in enumerate(zip(_calls(torch), _calls(mg))):
        try:
            want = want_call()
        except RuntimeError:
            with pytest.raises(RuntimeError, match="searchsorted|bucketize"):
                got_call()
            continue
        got = got_call()
        assert str(got.dtype) == str(want.dtype).replace("torch.", ""), f"call {i}"
        assert got.numpy().tolist() == want.numpy().tolist(), f"call {i}"


def test_positions_keep_order_on_random_input(torch):
    rng = np.random.default_rng(3)
    seq = np.sort(rng.integers(0, 20, (4, 30)).astype(np.float32), axis=-1)
    values = rng.integers(-2, 23, (4, 50)).astype(np.float32)
    for right in (False, True):
        want = torch.searchsorted(torch.tensor(seq), torch.tensor(values), right=right)
        got = mg.searchsorted(mg.tensor(seq), mg.tensor(values), right=right)
        assert (got.numpy() == want.numpy()).all()
