"""Writing a tensor of another dtype by indexing, against PyTorch: `t[idx] = v` with a tensor,
list or mask index and `index_put(_)` refuse it (RuntimeError 'Index put requires the source
and destination dtypes match'), while a write through ints and slices alone casts, as does
PyTorch's masked_fill path (one mask, a one-element value, not accumulated) and the scatters
built on index_put (slice_scatter, select_scatter, diagonal_scatter, index_fill)."""
import numpy as np
import pytest

import minigrad as mg

CASES = {
    "tensor index": lambda L, x, d: x.__setitem__(L.tensor([0, 2]), L.ones(2, 4, dtype=d)),
    "list index": lambda L, x, d: x.__setitem__([0, 1], L.ones(4, dtype=d)),
    "tensor index, 0-d value": lambda L, x, d: x.__setitem__(L.tensor([1]), L.tensor(2, dtype=d)),
    "slice then tensor": lambda L, x, d: x.__setitem__((slice(None), L.tensor([0, 3])),
                                                       L.ones(3, 2, dtype=d)),
    "int then list": lambda L, x, d: x.__setitem__((0, [0, 1]), L.ones(2, dtype=d)),
    "ellipsis then tensor": lambda L, x, d: x.__setitem__((Ellipsis, L.tensor([1])),
                                                          L.ones(3, 1, dtype=d)),
    "mask, one value": lambda L, x, d: x.__setitem__(x >= 0, L.tensor(3, dtype=d)),
    "mask, one-element value": lambda L, x, d: x.__setitem__(x >= 0, L.ones(1, dtype=d)),
    "mask, every value": lambda L, x, d: x.__setitem__(x >= 0, L.ones(12, dtype=d)),
    "row mask": lambda L, x, d: x.__setitem__(L.tensor([True, False, True]), L.tensor(2, dtype=d)),
    "list of bools": lambda L, x, d: x.__setitem__([True, False, True], L.tensor(2, dtype=d)),
    "int then mask": lambda L, x, d: x.__setitem__((0, L.tensor([True, False, True, True])),
                                                   L.tensor(2, dtype=d)),
    "0-d bool index": lambda L, x, d: x.__setitem__(L.tensor(True), L.tensor(1, dtype=d)),
    "0-d int indices": lambda L, x, d: x.__setitem__((L.tensor(0), L.tensor(1)),
                                                     L.tensor(5, dtype=d)),
    "slice": lambda L, x, d: x.__setitem__(slice(0, 2), L.ones(4, dtype=d)),
    "int": lambda L, x, d: x.__setitem__(1, L.ones(4, dtype=d)),
    "index_put_": lambda L, x, d: x.index_put_((L.tensor([0]),), L.ones(4, dtype=d)),
    "index_put_ 0-d index": lambda L, x, d: x.index_put_((L.tensor(0),), L.ones(4, dtype=d)),
    "index_put_ mask": lambda L, x, d: x.index_put_((x >= 0,), L.tensor(2, dtype=d)),
    "index_put_ mask accumulate": lambda L, x, d: x.index_put_((x >= 0,), L.tensor(2, dtype=d),
                                                               accumulate=True),
    "index_put": lambda L, x, d: x.copy_(x.index_put((L.tensor([2]),), L.ones(4, dtype=d))),
    "torch.index_put": lambda L, x, d: x.copy_(L.index_put(x, (L.tensor([2]),),
                                                           L.ones(4, dtype=d))),
    "slice_scatter": lambda L, x, d: x.copy_(L.slice_scatter(x, L.ones(1, 4, dtype=d), 0, 0, 1)),
    "select_scatter": lambda L, x, d: x.copy_(L.select_scatter(x, L.ones(4, dtype=d), 0, 2)),
    "diagonal_scatter": lambda L, x, d: x.copy_(L.diagonal_scatter(x, L.ones(3, dtype=d))),
    "index_fill 0-d": lambda L, x, d: x.index_fill_(0, L.tensor([1]), L.tensor(7, dtype=d)),
}


def _outcome(lib, case, dtype, other):
    x = lib.zeros(3, 4, dtype=getattr(lib, dtype))
    try:
        CASES[case](lib, x, getattr(lib, other))
    except Exception as e:  # noqa: BLE001 (the type is compared)
        return type(e), str(e)
    return x.dtype, x.tolist()


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("dtype,other", [("float32", "float64"), ("float32", "int64"),
                                         ("int64", "int32"), ("bool", "uint8"),
                                         ("float64", "float64")])
def test_writing_another_dtype_by_index_matches_pytorch(torch, case, dtype, other):
    want, got = _outcome(torch, case, dtype, other), _outcome(mg, case, dtype, other)
    if isinstance(want[0], type) and issubclass(want[0], Exception):
        assert want[0] is RuntimeError and "Index put requires the source" in want[1]
        assert got[0] is RuntimeError, got
        assert got[1].startswith("index_put_: ") and want[1] in got[1]
    else:
        assert str(got[0]).split(".")[-1] == str(want[0]).split(".")[-1]
        np.testing.assert_array_equal(np.asarray(got[1]), np.asarray(want[1]))


def test_a_refused_write_leaves_the_tensor_and_its_version_as_they_were():
    x = mg.zeros(3)
    version = x._version
    with pytest.raises(RuntimeError, match="got Float for the destination and Double"):
        x[mg.tensor([0, 1])] = mg.ones(2, dtype=mg.float64)
    assert x.tolist() == [0.0, 0.0, 0.0] and x._version == version
