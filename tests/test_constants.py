"""PyTorch's top-level constants, `torch.pi`, `torch.e`, `torch.inf`, `torch.nan` and
`torch.newaxis`, against PyTorch's: the same Python objects' values and types, and newaxis
indexing as None does."""
import math

import pytest

import minigrad


@pytest.mark.parametrize("name", ["pi", "e", "inf", "nan", "newaxis"])
def test_constant_is_pytorchs(name, torch):
    want, got = getattr(torch, name), getattr(minigrad, name)
    assert type(got) is type(want)
    assert got is None if want is None else (math.isnan(got) if math.isnan(want)
                                              else got == want)


def test_newaxis_inserts_a_dim(torch):
    for lib in (torch, minigrad):
        x = lib.arange(6).reshape(2, 3)
        assert tuple(x[:, lib.newaxis].shape) == (2, 1, 3)
        assert tuple(x[lib.newaxis, ..., lib.newaxis].shape) == (1, 2, 3, 1)
