"""The products under BLAS's names (mv, addmv, ger, addr, addbmm, inner, vdot) against
PyTorch: values, dtypes (integers too) and gradients, first and second derivatives by central
differences, beta=0 ignoring a NaN input, and errors."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(13)


def _normal(*shape):
    return RNG.standard_normal(shape)


def _flat(lib, *ts):
    return lib.cat([t.reshape(-1) for t in ts])


PROGRAMS = {  # name: (program(lib, *tensors) -> one tensor, input arrays)
    "mv": (lambda lib, m, v: _flat(lib, lib.mv(m, v), m.t().mv(v[:2])),
           [_normal(2, 3), _normal(3)]),
    "addmv": (lambda lib, i, m, v: _flat(lib, lib.addmv(i, m, v, beta=3, alpha=2),
                                         i.addmv(m, v), lib.addmv(i[:1], m, v)),
              [_normal(2), _normal(2, 3), _normal(3)]),
    "ger_addr": (lambda lib, i, a, b: _flat(lib, lib.ger(a, b), b.ger(a),
                                            lib.addr(i, a, b, beta=2, alpha=-1),
                                            i.addr(a, b), lib.addr(i[0], a, b)),
                 [_normal(3, 2), _normal(3), _normal(2)]),
    "addbmm": (lambda lib, i, b1, b2: _flat(lib, lib.addbmm(i, b1, b2, beta=-2, alpha=2),
                                            i.addbmm(b1, b2), lib.addbmm(i[0], b1, b2)),
               [_normal(2, 4), _normal(3, 2, 3), _normal(3, 3, 4)]),
    "inner_vdot": (lambda lib, a, b: _flat(lib, lib.inner(a, b), a[0].inner(b[0, 0]),
                                           lib.inner(a[0, 0], b), lib.vdot(a[0], a[1]),
                                           a[1].vdot(b[1, 1])),
                   [_normal(2, 3), _normal(4, 5, 3)]),
}


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_values_dtypes_and_gradients_as_pytorchs(name, dtype, torch):
    program, arrays = PROGRAMS[name]
    results = []
    for lib in (torch, mg):
        xs = [lib.tensor((a * 3).astype(dtype)).requires_grad_(dtype != "int64") for a in arrays]
        out = program(lib, *xs)
        if dtype != "int64":
            w = np.random.default_rng(0).standard_normal(tuple(out.shape)).astype(dtype)
            (out * lib.tensor(w)).sum().backward()
        results.append((out.detach().numpy(), str(out.dtype).split(".")[-1],
                        [x.grad.numpy() for x in xs if x.grad is not None]))
    (want, want_dtype, want_grads), (got, got_dtype, got_grads) = results
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == "float32" else dict(rtol=1e-12, atol=1e-12)
    assert got_dtype == want_dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, **tol)
    assert len(got_grads) == len(want_grads)
    for g, w in zip(got_grads, want_grads):
        np.testing.assert_allclose(g, w, **tol)


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_first_and_second_derivatives_by_central_differences(name):
    program, arrays = PROGRAMS[name]
    xs = [mg.tensor(a).requires_grad_() for a in arrays]
    assert gradcheck(lambda *t: program(mg, *t), xs)
    assert gradgradcheck(lambda *t: program(mg, *t), xs)


def test_beta_zero_ignores_a_nan_input(torch):
    for lib in (torch, mg):
        nan = lib.full((2, 2), float("nan"))
        out = [lib.addmv(nan[0], lib.ones(2, 3), lib.ones(3), beta=0),
               lib.addr(nan, lib.ones(2), lib.ones(2), beta=0),
               lib.addbmm(nan, lib.ones(3, 2, 3), lib.ones(3, 3, 2), beta=0)]
        assert [o.tolist() for o in out] == [[3.0, 3.0], [[1.0, 1.0]] * 2, [[9.0, 9.0]] * 2]


ERRORS = [  # (program, minigrad's message); PyTorch raises a RuntimeError for each
    (lambda lib: lib.mv(lib.ones(2, 3), lib.ones(2)), r"mat \(2x3\), vec \(2\)"),
    (lambda lib: lib.mv(lib.ones(2, 3, 1), lib.ones(3)), "got 1, 3, 1"),
    (lambda lib: lib.mv(lib.ones(2, 3), lib.ones(3, dtype=lib.float64)), "same dtype"),
    (lambda lib: lib.addmv(lib.ones(3), lib.ones(2, 3), lib.ones(3)), r"input \(3\)"),
    (lambda lib: lib.ger(lib.ones(3, 1), lib.ones(2)), "Expected 1-D argument self, but got 2-D"),
    (lambda lib: lib.addr(lib.ones(3, 2), lib.ones(3, 1), lib.ones(2)),
     "Expected 1-D argument vec1"),
    (lambda lib: lib.addbmm(lib.ones(2, 4), lib.ones(5, 2, 3), lib.ones(4, 3, 4)),
     "same number of batches, got 5 and 4"),
    (lambda lib: lib.addr(lib.ones(2, 2, dtype=lib.int64), lib.ones(2, dtype=lib.int64),
                          lib.ones(2, dtype=lib.int64), alpha=0.5), "alpha must not be a float"),
    (lambda lib: lib.inner(lib.ones(2, 3), lib.ones(4, 2)), r"shapes \[2, 3\] and \[4, 2\]"),
    (lambda lib: lib.inner(lib.ones(3, dtype=lib.int64), lib.ones(3)), "same dtype"),
    (lambda lib: lib.vdot(lib.ones(3, 1), lib.ones(3)), "1D tensors expected, but got 2D and 1D"),
    (lambda lib: lib.vdot(lib.ones(3), lib.ones(4)), r"expected tensor \[3\] and src \[4\]"),
    (lambda lib: lib.vdot(lib.ones(3), lib.ones(3, dtype=lib.float64)),
     "found Float and Double"),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors(i, torch):
    program, message = ERRORS[i]
    with pytest.raises(RuntimeError):
        program(torch)
    with pytest.raises(RuntimeError, match=message):
        program(mg)
