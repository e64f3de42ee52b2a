"""mode, nanmedian and nanquantile (minigrad/order_statistics.py) against PyTorch: values,
indices, dtypes and gradients on rows with ties and NaNs, 0-d, empty and transposed inputs,
integer inputs, float64 central-difference gradients, and PyTorch's errors."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck, gradgradcheck

NAN = np.nan
ROWS = np.array([[1.0, 2, 2, 3, 3, NAN], [NAN, 4, NAN, 0.5, 4, 4], [5, 1, 5, 1, 0, 2],
                 [7, NAN, -1, 7, 2, 2]])
RNG = np.random.default_rng(8)

PROGRAMS = {  # name: program(lib, x) -> tensors; x is ROWS (4, 6), with gradient
    "mode": lambda lib, x: tuple(lib.mode(lib.nan_to_num(x), 1)) + tuple(x[2:].mode(0, True)),
    "mode_ints": lambda lib, x: tuple(lib.mode(lib.nan_to_num(x).long(), 0)),
    "mode_transposed": lambda lib, x: tuple(lib.nan_to_num(x).t().mode(0)),
    "nanmedian_dim": lambda lib, x: tuple(lib.nanmedian(x, 1)) + tuple(x.nanmedian(0, True)),
    "nanmedian_all": lambda lib, x: (lib.nanmedian(x), x[2].nanmedian(), x[:, 1:2].nanmedian(),
                                     lib.nanmedian(x * float("nan"))),
    "nanmedian_ints": lambda lib, x: tuple(lib.nanmedian(lib.nan_to_num(x).long(), 1)),
    "nanquantile": lambda lib, x: (lib.nanquantile(x, 0.3, 1),
                                   (x + lib.arange(24).reshape(4, 6) * 0.01).nanquantile(0.5),
                                   x.t().nanquantile(lib.tensor([0.1, 0.9], dtype=x.dtype), 0,
                                                     keepdim=True),
                                   lib.nanquantile(x, 0.75, 1, interpolation="nearest"),
                                   lib.nanquantile(x, 0.4, 0, interpolation="midpoint")),
    "zero_dim": lambda lib, x: tuple(lib.mode(x[0, 0])) + tuple(lib.nanmedian(x[0, 0], 0)) + (
        lib.nanquantile(x[0, 0], 0.5), lib.nanmedian(x[:0])),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_values_indices_and_gradients_as_pytorchs(name, dtype, torch):
    results = []
    for lib in (torch, mg):
        x = lib.tensor(ROWS.astype(dtype)).requires_grad_()
        outs = PROGRAMS[name](lib, x)
        rng = np.random.default_rng(0)  # the same weights in both libraries
        loss = sum((o * lib.tensor(rng.standard_normal(tuple(o.shape)).astype(dtype))).sum()
                   for o in outs if o.requires_grad and not o.isnan().any())
        if isinstance(loss, lib.Tensor):
            loss.backward()
        results.append(([(o.detach().numpy(), str(o.dtype).replace("torch.", "")) for o in outs],
                        None if x.grad is None else x.grad.numpy()))
    (want, want_grad), (got, got_grad) = results
    for i, ((w, wd), (g, gd)) in enumerate(zip(want, got)):
        assert g.shape == w.shape and gd == wd, (i, g.shape, w.shape, gd, wd)
        np.testing.assert_allclose(g, w, rtol=1e-6, equal_nan=True, err_msg=str(i))
    if want_grad is not None:
        np.testing.assert_allclose(got_grad, want_grad, rtol=1e-5, atol=1e-6)


def test_gradients_by_central_differences():
    x = mg.tensor(RNG.standard_normal((3, 5)), requires_grad=True)
    xn = mg.tensor(np.where(RNG.random((3, 5)) < 0.3, NAN, RNG.standard_normal((3, 5))))
    nan_mask = mg.tensor(np.isnan(xn.numpy()))
    fns = [lambda t: mg.mode(t.round(), 1)[0] + t[:, 0],
           lambda t: mg.nanmedian(t.masked_fill(nan_mask, NAN), 1)[0],
           lambda t: mg.nanmedian(t.masked_fill(nan_mask, NAN)).reshape(1),
           lambda t: mg.nanquantile(t.masked_fill(nan_mask, NAN), 0.35, 0)]
    for fn in fns:
        assert gradcheck(fn, [x]) and gradgradcheck(fn, [x])


def test_ties_go_to_pytorchs_element(torch):
    """mode picks the smallest of equally frequent values at its last occurrence, as PyTorch;
    nanmedian's index is a stable sort's (the first of equal values) where PyTorch's may be
    another equal one, and an all-NaN row gives index 0."""
    x = np.array([[3.0, 1, 3, 1, 2], [2, 2, 2, 9, 9]])
    for lib in (torch, mg):
        values, indices = lib.mode(lib.tensor(x), 1)
        assert values.tolist() == [1.0, 2.0] and indices.tolist() == [3, 2]
    values, indices = mg.nanmedian(mg.tensor([[NAN, NAN], [1.0, NAN]]), 1)
    assert np.isnan(values[0].item()) and values[1].item() == 1.0 and indices.tolist() == [0, 0]


ERRORS = [
    (lambda lib: lib.mode(lib.ones(3, 0), 1), IndexError, "mode.*dim 1 to have non-zero size"),
    (lambda lib: lib.mode(lib.ones(3), 1), IndexError, "out of range"),
    (lambda lib: lib.nanmedian(lib.ones(3, 0), 1), IndexError, "non-zero size"),
    (lambda lib: lib.nanmedian(lib.tensor([True])), NotImplementedError, "bool"),
    (lambda lib: lib.nanquantile(lib.ones(3, dtype=lib.int64), 0.5), RuntimeError,
     "float or double"),
    (lambda lib: lib.nanquantile(lib.ones(0), 0.5), RuntimeError, "non-empty"),
    (lambda lib: lib.nanquantile(lib.ones(3), 1.5), RuntimeError, r"range \[0, 1\]"),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors_are_pytorchs(i, torch):
    program, kind, message = ERRORS[i]
    with pytest.raises(kind):
        program(torch)
    with pytest.raises(kind, match=message):
        program(mg)
