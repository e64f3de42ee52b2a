"""First derivatives by central differences, in float64, of the differentiable functions of
log_odds.py, conversions.py, float_parts.py, nan_extrema.py and index_functions.py (logit,
xlogy, deg2rad, rad2deg, float_power, frac, copysign, fmax, fmin, aminmax, take), and second
derivatives of the sloped ones (xlogy, copysign, fmax, fmin); forward-mode tangents of these
and of lgamma, digamma, polygamma and i0 against PyTorch's. Their values, dtypes, gradients
and errors against PyTorch are in compat_cases_functions.py."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(31)


def _t(*shape, low=-2.0, high=2.0):
    return mg.tensor(RNG.uniform(low, high, shape)).requires_grad_()


def _flat(*ts):
    return mg.cat([t.reshape(-1) for t in ts])


# inputs are kept away from the kinks (frac at integers, fmax at ties, the logit clamp's edges)
PROGRAMS = {  # name: (program(*tensors) -> one tensor, inputs, second derivatives too)
    "logit": (lambda p: _flat(mg.logit(p), p.logit(eps=0.25)), [_t(3, 4, low=0.05, high=0.95)],
              True),
    "xlogy": (lambda x, y: _flat(mg.xlogy(x, y), x.xlogy(2.5), mg.xlogy(3.0, y)),
              [_t(3, 4), _t(4, low=0.5, high=2.0)], True),
    "deg2rad_rad2deg": (lambda x: _flat(mg.deg2rad(x), x.rad2deg()), [_t(2, 3)], True),
    "float_power": (lambda b, e: _flat(mg.float_power(b, e), b.float_power(3),
                                       mg.float_power(1.5, e)),
                    [_t(2, 3, low=0.5, high=2.0), _t(3)], True),
    "frac": (lambda x: mg.frac(x * 1.0),
             [mg.tensor([0.3, -1.6, 2.4, -0.45], dtype=mg.float64).requires_grad_()], False),
    "copysign": (lambda x, y: _flat(mg.copysign(x, y), x.copysign(-1.0)),
                 [_t(3, 4), _t(4)], True),
    "fmax_fmin": (lambda x, y: _flat(mg.fmax(x, y), x.fmin(y)), [_t(3, 4), _t(4)], True),
    "aminmax": (lambda x: _flat(*mg.aminmax(x), *x.aminmax(dim=1, keepdim=True)), [_t(3, 4)],
                True),
    "take": (lambda x: mg.take(x.t(), mg.tensor([[0, -1], [5, 5]])), [_t(3, 4)], True),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_derivatives_by_central_differences(name):
    program, xs, second = PROGRAMS[name]
    assert gradcheck(program, xs)
    if second:
        assert gradgradcheck(program, xs)


_X = np.array([0.3, 1.7, 2.5, -0.6])
_Y = np.array([0.5, 2.0, 1.5, 0.7])
FORWARD = {  # name: program(lib, dual) -> one tensor; the gamma family and i0 included
    "lgamma": lambda lib, a: lib.lgamma(a), "digamma": lambda lib, a: lib.digamma(a),
    "polygamma": lambda lib, a: lib.polygamma(2, a), "i0": lambda lib, a: lib.i0(a),
    "xlogy": lambda lib, a: lib.xlogy(a, lib.tensor(_Y)),
    "copysign": lambda lib, a: lib.copysign(a, lib.tensor(-_Y)),
    "fmax": lambda lib, a: lib.fmax(a, lib.tensor(_Y - 1)),
    "logit": lambda lib, a: lib.logit(a.abs() / 3, eps=0.2),
    "float_power": lambda lib, a: lib.float_power(a.abs(), 1.5),
    "take": lambda lib, a: lib.take(a, lib.tensor([3, 0])),
    "aminmax": lambda lib, a: lib.aminmax(a)[1], "frac": lambda lib, a: lib.frac(a),
}  # (not deg2rad: PyTorch's tangent of a float64 deg2rad comes out in float32)


@pytest.mark.parametrize("name", list(FORWARD))
def test_forward_mode_tangents_as_pytorchs(name, torch):
    tangents = []
    for lib in (torch, mg):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            dual = fw.make_dual(lib.tensor(_X), lib.tensor([1.0, -2.0, 0.5, 3.0]))
            tangents.append(fw.unpack_dual(FORWARD[name](lib, dual)).tangent.numpy())
    np.testing.assert_allclose(tangents[1], tangents[0], rtol=1e-9)
