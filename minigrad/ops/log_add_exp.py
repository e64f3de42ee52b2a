"""logaddexp(a, b) = log(e^a + e^b) and logaddexp2(a, b) = log2(2^a + 2^b), elementwise and
broadcast: NumPy's, computed as max + log1p(exp(-|a - b|)) so that neither overflows (adding
log-probabilities). Their slopes are the softmax weights of the two operands; PyTorch computes
them for floating-point tensors only."""
from __future__ import annotations

import numpy as np

from ._sloped import Sloped, binary, call


class LogAddExp(Sloped):
    fn = np.logaddexp
    # d/da = e^a / (e^a + e^b) = 1 / (1 + e^(b - a)), as PyTorch writes it
    slopes = staticmethod(lambda out, a, b: (1 / (1 + call("exp", b - a)),
                                             1 / (1 + call("exp", a - b))))


class LogAddExp2(Sloped):
    fn = np.logaddexp2
    slopes = staticmethod(lambda out, a, b: (1 / (1 + call("exp2", b - a)),
                                             1 / (1 + call("exp2", a - b))))


def logaddexp(input, other):
    """log(e^input + e^other), elementwise (broadcast), without overflow."""
    return binary(LogAddExp, "logaddexp", input, other, integers=False)


def logaddexp2(input, other):
    """log2(2^input + 2^other), elementwise (broadcast), without overflow."""
    return binary(LogAddExp2, "logaddexp2", input, other, integers=False)
