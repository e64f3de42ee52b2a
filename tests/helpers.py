"""Small helpers shared by the test files."""
import re

import numpy as np
import pytest

import minigrad as mg


def raises(exc, text):
    """pytest.raises matching `text` literally (shapes are full of regex metacharacters)."""
    return pytest.raises(exc, match=re.escape(text))


def t64(arr, requires_grad=True):
    return mg.tensor(np.asarray(arr, dtype=np.float64), dtype=np.float64,
                     requires_grad=requires_grad)


def t32(arr, requires_grad=False):
    return mg.tensor(np.asarray(arr, dtype=np.float32), dtype=np.float32,
                     requires_grad=requires_grad)


def square_function(base=mg.autograd.Function):
    """A user's own op, x -> x * x with the backward 2 g x, written on `base`: minigrad's
    `autograd.Function` or PyTorch's (both read the saved input as `ctx.saved_tensors`). It
    has no double-backward or forward-mode rule, which the tests of those errors rely on."""
    class Square(base):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * a

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return 2 * g * a

    return Square
