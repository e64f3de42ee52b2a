"""`minigrad.testing.assert_close` against `torch.testing.assert_close`: the same pairs pass
and fail (PyTorch's default tolerances per dtype, rtol/atol, equal_nan, check_dtype,
check_stride, nested sequences and mappings), with the same exception type and, for
failures, the same message apart from the library's name in dtypes and shapes."""
import numpy as np
import pytest

import minigrad as mg


def _pairs(L):
    t = L.tensor
    return {
        "equal": (t([1.0, 2.0]), t([1.0, 2.0]), {}),
        "within float32 tolerance": (t([1.0, 2.0]), t([1.0, 2.0 + 1e-6]), {}),
        "float32 apart": (t([1.0, 2.0, 3.0]), t([1.0, 2.5, 3.0]), {}),
        "2-d apart": (t([[1.0, 2.0], [3.0, 4.0]]), t([[1.0, 2.0], [3.0, 5.0]]), {}),
        "float64 tolerance": (t([1.0], dtype=L.float64), t([1.0 + 1e-8], dtype=L.float64), {}),
        "float64 apart": (t([1.0], dtype=L.float64), t([1.0 + 1e-6], dtype=L.float64), {}),
        "float16": (t([1.0], dtype=L.float16), t([1.0009765625], dtype=L.float16), {}),
        "ints apart": (t([1, 2]), t([1, 3]), {}),
        "bools apart": (t([True]), t([False]), {}),
        "dtypes differ": (t([1.0]), t([1.0], dtype=L.float64), {}),
        "dtypes ignored": (t([1.0]), t([1.0], dtype=L.float64), {"check_dtype": False}),
        "shapes differ": (t([1.0]), t([1.0, 2.0]), {}),
        "nan": (t([float("nan")]), t([float("nan")]), {}),
        "nan equal": (t([float("nan")]), t([float("nan")]), {"equal_nan": True}),
        "inf": (t([float("inf")]), t([float("inf")]), {}),
        "inf signs": (t([float("inf")]), t([-float("inf")]), {}),
        "rtol only": (t([1.0]), t([1.1]), {"rtol": 0.2}),
        "rtol and atol": (t([1.0]), t([1.1]), {"rtol": 0.2, "atol": 0.0}),
        "msg": (t([1.0]), t([1.1]), {"msg": "custom"}),
        "0-d": (t(2.0), t(3.0), {}),
        "floats": (1.0, 1.5, {}),
        "ints": (1, 2, {}),
        "int and float": (1, 1.0, {}),
        "tensor and number": (t(1.0), 1.0, {}),
        "lists": ([t(1.0), t(2.0)], [t(1.0), t(3.0)], {}),
        "lengths": ([1.0, 2.0], [1.0], {}),
        "keys": ({"a": t(1.0)}, {"b": t(1.0)}, {}),
        "values": ({"a": t(1.0)}, {"a": t(2.0)}, {}),
        "strides": (L.zeros(2, 3), L.zeros(3, 2).t(), {"check_stride": True}),
        "strides ignored": (L.zeros(2, 3), L.zeros(3, 2).t(), {}),
    }


def _run(L, name):
    actual, expected, kw = _pairs(L)[name]
    try:
        L.testing.assert_close(actual, expected, **kw)
    except Exception as e:  # noqa: BLE001  (the comparison is which exception)
        text = str(e).replace("torch.", "minigrad.").replace("<class 'minigrad.Tensor'>", "T")
        text = text.replace("<class 'minigrad.tensor.Tensor'>", "T")
        return type(e).__name__, text
    return "ok", ""


@pytest.mark.parametrize("name", list(_pairs(mg)))
def test_same_outcome_and_message_as_pytorch(torch, name):
    want, got = _run(torch, name), _run(mg, name)
    assert got[0] == want[0]
    if name not in ("ints apart", "bools apart"):  # relative differences of ints: float32 there
        assert got[1] == want[1]
    else:
        assert got[1].splitlines()[:4] == want[1].splitlines()[:4]


def test_msg_may_be_a_function():
    with pytest.raises(AssertionError, match="^wrapped: Tensor-likes are not close!"):
        mg.testing.assert_close(mg.tensor([1.0]), mg.tensor([2.0]),
                                msg=lambda text: "wrapped: " + text)
