"""`& | ^ ~ << >>` and the bitwise_* functions against PyTorch: bit by bit on integer tensors,
logical on bool tensors, in PyTorch's promoted dtype, refused on floats."""
import itertools

import numpy as np
import pytest

import minigrad as mg

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float32", "float64"]
OPS = {
    "&": lambda a, b: a & b, "|": lambda a, b: a | b, "^": lambda a, b: a ^ b,
    "<<": lambda a, b: a << b, ">>": lambda a, b: a >> b,
}
NAMES = ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift"]


def _values(dtype):
    if dtype == "bool":
        return np.array([True, False, True])
    if dtype == "uint8":
        return np.array([5, 200, 1], dtype=dtype)
    return np.array([5, -3, 1], dtype=dtype)


def _shifts(dtype):  # counts within the width (PyTorch's result beyond it is unspecified)
    return np.array([True, False, True]) if dtype == "bool" else np.array([1, 0, 3], dtype=dtype)


def _outcome(fn, *args):
    try:
        out = fn(*args)
    except (TypeError, RuntimeError, NotImplementedError):
        return "error"
    return str(out.dtype).replace("torch.", ""), out.numpy().tolist()


def _pair(lib, a, b):
    return lib.tensor(a), (lib.tensor(b) if isinstance(b, np.ndarray) else b)


@pytest.mark.parametrize("left, right", itertools.product(DTYPES, DTYPES + ["int", "bool"]))
def test_binary_bitwise_ops_match_pytorch(left, right, torch):
    a = _values(left)
    for op in ["&", "|", "^", "<<", ">>"]:
        shift = op in ("<<", ">>")
        if right == "int":
            b = 2
        elif right == "bool":
            b = True
        else:
            b = _shifts(right) if shift else _values(right)[::-1].copy()
        ours = _outcome(OPS[op], *_pair(mg, a, b))
        theirs = _outcome(OPS[op], *_pair(torch, a, b))
        assert ours == theirs, (left, op, right)


@pytest.mark.parametrize("dtype", DTYPES)
def test_bitwise_not_and_the_functions_match_pytorch(dtype, torch):
    a, b = _values(dtype), _values(dtype)[::-1].copy()
    assert _outcome(lambda x: ~x, mg.tensor(a)) == _outcome(lambda x: ~x, torch.tensor(a))
    assert _outcome(mg.bitwise_not, mg.tensor(a)) == _outcome(torch.bitwise_not, torch.tensor(a))
    for name in NAMES:
        other = _shifts(dtype) if "shift" in name else b
        assert (_outcome(getattr(mg, name), mg.tensor(a), mg.tensor(other))
                == _outcome(getattr(torch, name), torch.tensor(a), torch.tensor(other))), name
        assert (_outcome(getattr(mg.Tensor, name), mg.tensor(a), 1)
                == _outcome(getattr(torch.Tensor, name), torch.tensor(a), 1)), name


def test_shifts_past_the_width_and_python_numbers_on_the_left(torch):
    for lib in (mg, torch):
        assert (lib.tensor([1, 3]) << 64).tolist() == [0, 0]
        assert (lib.tensor([-8, 8]) >> 70).tolist() == [-1, 0]
        assert (3 & lib.tensor([1, 2])).tolist() == [1, 2]
        assert (1 << lib.tensor([2, 3])).tolist() == [4, 8]
    with pytest.raises(TypeError, match="bitwise_and: not implemented for float32"):
        mg.tensor([1.0]) & 1
    with pytest.raises(ValueError, match=r"bitwise_or: shapes \(2,\) and \(3,\)"):
        mg.tensor([1, 2]) | mg.tensor([1, 2, 3])
