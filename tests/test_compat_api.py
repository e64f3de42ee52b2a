"""Every case of the compatibility table (tests/compat_table.py): the same program through
PyTorch and through minigrad gives the same results, dtypes and gradients."""
import pytest

import minigrad
from compat_table import all_cases, compare

CASES = all_cases()


@pytest.mark.parametrize("c", CASES, ids=[f"{i:03d}-{c.id}" for i, c in enumerate(CASES)])
def test_same_as_pytorch(c, torch):
    compare(c, torch, minigrad)
