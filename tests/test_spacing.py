"""linspace and a float arange compute PyTorch's values bit for bit (minigrad/spacing.py): the
fused multiply-adds against exact rational arithmetic, whole ranges against PyTorch's."""
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad.spacing import fma32, fma64

finite32 = st.floats(-1e6, 1e6, width=32, allow_subnormal=False)
finite64 = st.floats(-1e12, 1e12, allow_subnormal=False)


def exact_fma(a, b, c, dtype):
    """a * b + c computed exactly, then rounded once to `dtype` (by the nearest neighbour)."""
    value = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
    near = dtype.type(float(value))  # float(value) is correctly rounded to float64
    below, above = (np.nextafter(near, dtype.type(-np.inf)), near,
                    np.nextafter(near, dtype.type(np.inf)))[0::2]
    candidates = [below, near, above]
    errors = [abs(Fraction(float(x)) - value) for x in candidates]
    best = min(errors)
    ties = [x for x, e in zip(candidates, errors) if e == best]
    # A tie rounds to the even significand.
    return min(ties, key=lambda x: int(np.array(x).view(np.int32 if dtype == np.float32
                                                         else np.int64)) & 1)


@settings(max_examples=300, deadline=None)
@given(finite32, finite32, finite32)
def test_fma32_rounds_once(a, b, c):
    a, b, c = np.float32(a), np.float32(b), np.float32(c)
    assert fma32(a, np.array([b], np.float32), c)[0] == exact_fma(a, b, c, np.dtype(np.float32))


@settings(max_examples=200, deadline=None)
@given(finite64, finite64, finite64)
def test_fma64_rounds_once(a, b, c):
    assert fma64(a, np.array([b]), c)[0] == exact_fma(a, b, c, np.dtype(np.float64))


ENDS = [(0.0, 1.0), (-3.0, 3.0), (-np.pi, np.pi), (4.0, 8.0), (5.0, -2.0), (1e-3, 7.7),
        (-12.883614637495544, 3.9512206018200824), (2.0, 2.0)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_linspace_is_pytorchs_bit_for_bit(torch, dtype):
    rng = np.random.default_rng(0)
    ends = ENDS + [tuple(rng.standard_normal(2) * 10.0 ** rng.integers(-3, 4)) for _ in range(20)]
    for steps in (0, 1, 2, 3, 7, 100, 2000, 4097):
        for start, end in ends:
            want = torch.linspace(start, end, steps, dtype=getattr(torch, dtype)).numpy()
            got = mg.linspace(start, end, steps, dtype=getattr(mg, dtype)).numpy()
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want, err_msg=f"{start}, {end}, {steps}")


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64"])
def test_integer_linspace_truncates_as_pytorch(torch, dtype):
    for start, end, steps in ((-3, 100, 9), (7, -100, 13), (0.5, 9.9, 5), (0, 10, 4)):
        want = torch.linspace(start, end, steps, dtype=getattr(torch, dtype)).tolist()
        assert mg.linspace(start, end, steps, dtype=getattr(mg, dtype)).tolist() == want


def test_linspace_of_complex_ends_is_complex(torch):
    want = torch.linspace(0, 1j, 3)
    got = mg.linspace(0, 1j, 3)
    assert got.dtype == mg.complex64
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_linspace_from_tensor_ends_and_default_dtype():
    got = mg.linspace(mg.tensor(1.5), 4, 7)
    assert got.dtype == mg.float32
    assert got[0].item() == 1.5 and got[-1].item() == 4.0


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_arange_is_pytorchs_bit_for_bit(torch, dtype):
    # PyTorch's vectorised loop computes blocks of 8 float32 (4 float64) elements from each
    # block's first element: a float64 `start + i * step` rounded once would differ in places
    rng = np.random.default_rng(1)
    ranges = [(-3.3, 7.1, 0.37), (0, 1, 0.1), (0, 100, 0.7), (-1, 1, 0.01), (5, 0, -0.3),
              (0.0, 5), (2, 7.5), (0.0, 0.0, 0.5), (0, 17, 1)]
    ranges += [(float(a), float(a + abs(n)), float(abs(n) / rng.integers(1, 3000)))
               for a, n in rng.standard_normal((20, 2)) * 20]
    for args in ranges:
        want = torch.arange(*args, dtype=getattr(torch, dtype)).numpy()
        got = mg.arange(*args, dtype=getattr(mg, dtype)).numpy()
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want, err_msg=str(args))


def test_arange_dtypes_are_pytorchs(torch):
    for args in ((5,), (0, 5, 2), (0.0, 5), (2, 7.5), (0, 1, 0.25)):
        assert str(mg.arange(*args).dtype) == str(torch.arange(*args).dtype)[len("torch."):]
        assert mg.arange(*args).tolist() == torch.arange(*args).tolist()
