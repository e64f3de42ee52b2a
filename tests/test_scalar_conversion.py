"""Python numbers converted to a tensor's dtype (minigrad/scalar_conversion.py) against
PyTorch: clamp's and clip's bounds (in place too), fill_, full, full_like, new_full,
masked_fill, index_fill, scatter's value, a number written by indexing and where's number
operands, and the numbers of tensor(list, dtype=). PyTorch range-checks them
(int8 clamped to 1000 raises, uint8 takes -1 as 255, float16 refuses 1e6 as a bound but makes
inf of it in a list), where NumPy refuses or rounds other values."""
import numpy as np
import pytest

import minigrad as mg

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
BOUNDS = [1000, -1000, -1, -255, -256, 255, 256, 127, 128, -129, 2 ** 31, 2 ** 40, 2 ** 63 - 1, 2 ** 63,
          -2 ** 63, -2 ** 63 - 1, 2 ** 64, 1.5, -0.5, 65504.0, 65519.0, 1e39, float("inf"),
          float("-inf"), float("nan"), True]


def outcome(fn):
    """(values, dtype name) of fn's result, or (the exception, its message)."""
    try:
        out = fn()
    except Exception as e:  # the type and message are compared
        return e, str(e)
    return out.tolist(), str(out.dtype).split(".")[-1]


def same(torch, make):
    want, got = outcome(lambda: make(torch)), outcome(lambda: make(mg))
    if isinstance(want[0], Exception):
        assert isinstance(got[0], type(want[0])), (got, want)
        if "without overflow" in want[1] or "unpacking" in want[1]:
            assert got[1] == want[1]  # PyTorch's words (others' words are minigrad's)
    else:
        assert not isinstance(got[0], Exception) and got[1] == want[1], (got, want)
        np.testing.assert_array_equal(got[0], want[0])  # NaN where PyTorch's is


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["clamp", "clip", "clamp_", "clip_"])
def test_clamp_bounds_out_of_the_dtypes_range_as_pytorch(torch, dtype, name):
    for bound in BOUNDS:
        for kw in ({"max": bound}, {"min": bound}, {"min": -1, "max": bound}):
            same(torch, lambda L: getattr(L.tensor([1, 2, 0], dtype=getattr(L, dtype)), name)(**kw))


def test_int8_clamped_to_1000_raises_pytorchs_error(torch):
    for lib in (torch, mg):
        with pytest.raises(RuntimeError, match="value cannot be converted to type int8_t without "
                                               "overflow"):
            lib.tensor([1, 2], dtype=lib.int8).clamp(max=1000)
    assert mg.tensor([1, 2], dtype=mg.uint8).clamp(min=-1).tolist() == [255, 255]
    for lib in (torch, mg):
        assert lib.clamp(lib.tensor([3, 200], dtype=lib.uint8), 5, 100).tolist() == [5, 100]
        with pytest.raises(RuntimeError, match="c10::Half"):
            lib.ones(2, dtype=lib.float16).clamp(max=1e6)


def _set(t, value):
    t[1] = value
    return t


@pytest.mark.parametrize("dtype", DTYPES)
def test_fills_check_the_number_as_pytorch(torch, dtype):
    for value in [1000, -1, -255, -256, 128, 127.9, -0.5, 2 ** 63, 2 ** 64, 65519, 1e39,
                  float("nan"), float("inf"), True, 1.5]:
        same(torch, lambda L: L.tensor([1, 2], dtype=getattr(L, dtype)).fill_(value))
        same(torch, lambda L: L.full((2,), value, dtype=getattr(L, dtype)))
        same(torch, lambda L: L.tensor([1, 2], dtype=getattr(L, dtype)).masked_fill(
            L.tensor([True, False]), value))
        same(torch, lambda L: L.tensor([1, 2], dtype=getattr(L, dtype)).index_fill(
            0, L.tensor([1]), value))
        same(torch, lambda L: L.where(L.tensor([True, False]),
                                      L.tensor([1, 2], dtype=getattr(L, dtype)), value))
        same(torch, lambda L: L.full_like(L.tensor([1, 2], dtype=getattr(L, dtype)), value))
        same(torch, lambda L: L.tensor([1, 2], dtype=getattr(L, dtype)).new_full((2,), value))
        same(torch, lambda L: L.tensor([1, 2], dtype=getattr(L, dtype)).scatter(
            0, L.tensor([1]), value))
        same(torch, lambda L: _set(L.tensor([1, 2], dtype=getattr(L, dtype)), value))


@pytest.mark.parametrize("dtype", DTYPES)
def test_tensor_of_a_list_converts_each_number_as_pytorch(torch, dtype):
    for data in ([-1, 300], [-1], [-255], [-256], [255], [256], [-129, 128], [127], [40000],
                 [2 ** 31], [2 ** 63 - 1, -2 ** 63], [2 ** 63], [2 ** 64], [-2 ** 63 - 1],
                 [1.7, 2.5], [-0.5], [-1.0], [255.9], [127.9], [1e10], [9.3e18],
                 [float("nan")], [float("inf")], [65520.0], [1e39], [[1, 2], [3, -4]],
                 [True, -1], -1, 300, 2.5, [np.int64(-1)], [np.int64(300)], []):
        same(torch, lambda L: L.tensor(data, dtype=getattr(L, dtype)))
        same(torch, lambda L: L.as_tensor(data, dtype=getattr(L, dtype)))
    # an array converts as NumPy's astype, wrapping, in both
    same(torch, lambda L: L.tensor(np.array([-1, 300, 70000]), dtype=getattr(L, dtype)))


def test_a_float_list_beyond_float32_is_inf_without_a_warning():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert mg.tensor([1e300, -1e39]).tolist() == [float("inf"), float("-inf")]
        assert mg.tensor([1e6], dtype=mg.float16).tolist() == [float("inf")]
