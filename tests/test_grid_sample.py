"""affine_grid and grid_sample: float64 gradient checks of the image and the grid, and values
and gradients against PyTorch for every mode, padding rule and align_corners, on odd and
one-pixel images, points far outside (several reflections), both float dtypes, non-contiguous
and empty inputs; the warnings and errors."""
import warnings

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad.autograd import gradcheck

rng = np.random.default_rng(11)
PADDINGS = ("zeros", "border", "reflection")


def _both(torch, program, arrays):
    out = []
    for lib in (torch, mg):
        ts = [lib.tensor(a, requires_grad=True) for a in arrays]
        res = program(lib, *ts)
        w = np.random.default_rng(1).standard_normal(tuple(res.shape)).astype(
            str(res.dtype).replace("torch.", ""))
        (res * lib.tensor(w)).sum().backward()
        out.append((res.detach().numpy(), str(res.dtype).replace("torch.", ""),
                    [t.grad.numpy() for t in ts]))
    (e, edt, eg), (g, gdt, gg) = out
    assert gdt == edt and g.shape == e.shape
    tol = 1e-5 if edt == "float32" else 1e-11
    np.testing.assert_allclose(g, e, rtol=tol, atol=tol)
    for a, b in zip(gg, eg):
        np.testing.assert_allclose(a, b, rtol=tol * 10, atol=tol * 10)


@pytest.mark.parametrize("padding_mode", PADDINGS)
@pytest.mark.parametrize("align_corners", [False, True])
def test_gradcheck_image_and_grid(padding_mode, align_corners):
    img = mg.tensor(rng.standard_normal((2, 2, 4, 5)), requires_grad=True)
    # points off the pixel lattice and off the padding rules' kinks, inside and outside
    grid = mg.tensor(rng.uniform(-1.7, 1.7, (2, 3, 4, 2)) + 0.013, requires_grad=True)
    assert gradcheck(lambda i, g: F.grid_sample(i, g, "bilinear", padding_mode, align_corners),
                     [img, grid], eps=1e-7)
    assert gradcheck(lambda i: F.grid_sample(i, grid.detach(), "nearest", padding_mode,
                                             align_corners), [img])


def test_gradcheck_affine_grid_and_the_spatial_transformer():
    theta = mg.tensor(rng.standard_normal((2, 2, 3)) * 0.5, requires_grad=True)
    assert gradcheck(lambda t: F.affine_grid(t, (2, 3, 4, 5), align_corners=False), [theta])
    theta3 = mg.tensor(rng.standard_normal((1, 3, 4)), requires_grad=True)
    assert gradcheck(lambda t: F.affine_grid(t, (1, 1, 2, 3, 2), align_corners=True), [theta3])
    img = mg.tensor(rng.standard_normal((2, 1, 6, 6)), requires_grad=True)
    assert gradcheck(lambda t, i: F.grid_sample(i, F.affine_grid(t, (2, 1, 5, 4),
                                                                 align_corners=False),
                                                align_corners=False), [theta, img])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", PADDINGS)
def test_matches_pytorch(torch, dtype, mode, padding_mode):
    for shape, out_hw, spread in (((3, 2, 5, 7), (4, 3), 1.3), ((1, 3, 1, 4), (2, 5), 1.1),
                                  ((2, 1, 3, 1), (1, 1), 1.0), ((1, 2, 4, 4), (3, 6), 6.5)):
        img = rng.standard_normal(shape).astype(dtype)
        grid = rng.uniform(-spread, spread, (shape[0], *out_hw, 2)).astype(dtype)
        for align in (False, True):
            _both(torch, lambda lib, i, g: lib.nn.functional.grid_sample(
                i, g, mode, padding_mode, align), [img, grid])


def test_affine_grid_matches_pytorch_bit_for_bit(torch):
    for dtype in (np.float32, np.float64):
        for size in ((2, 3, 5, 7), (1, 1, 1, 9), (3, 2, 12, 13), (2, 1, 3, 4, 5)):
            theta = rng.standard_normal((size[0], len(size) - 2, len(size) - 1)).astype(dtype)
            for align in (False, True):
                with warnings.catch_warnings():  # a one-pixel axis with align_corners warns
                    warnings.simplefilter("ignore")
                    e = torch.nn.functional.affine_grid(torch.tensor(theta), size, align)
                    g = F.affine_grid(mg.tensor(theta), size, align)
                assert g.dtype == dtype and g.shape == tuple(e.shape)
                assert (g.numpy() == e.numpy()).all()
    theta = rng.standard_normal((2, 2, 3)).astype(np.float32)
    _both(torch, lambda lib, t: lib.nn.functional.affine_grid(t, (2, 1, 3, 5), False), [theta])


def test_non_contiguous_and_empty_inputs(torch):
    img = rng.standard_normal((2, 5, 3, 4)).astype(np.float32)
    grid = rng.uniform(-1.2, 1.2, (2, 2, 6, 3)).astype(np.float32)
    _both(torch, lambda lib, i, g: lib.nn.functional.grid_sample(
        i.transpose(1, 3).transpose(1, 3)[:, ::2], g[..., :2].transpose(1, 2), "bilinear",
        "reflection", False), [img, grid])
    _both(torch, lambda lib, i, g: lib.nn.functional.grid_sample(
        i[:0], g[:0, ..., :2], align_corners=True), [img, grid])
    _both(torch, lambda lib, i, g: lib.nn.functional.grid_sample(
        i, g[:, :0, :, :2], align_corners=True), [img, grid])


def test_default_align_corners_warns_as_pytorch(torch):
    for lib in (torch, mg):
        theta = lib.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
        with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
            grid = lib.nn.functional.affine_grid(theta, (1, 1, 3, 3))
        with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
            out = lib.nn.functional.grid_sample(lib.ones(1, 1, 3, 3), grid)
        assert out.shape == (1, 1, 3, 3) and float(out.sum()) == 9.0  # identity: the image


@pytest.mark.parametrize("call, error, match", [
    (lambda lib, i, g: lib.nn.functional.grid_sample(i, g, mode="cubic"), ValueError,
     "expected mode to be 'bilinear', 'nearest' or 'bicubic'"),
    (lambda lib, i, g: lib.nn.functional.grid_sample(i, g, padding_mode="wrap"), ValueError,
     "expected padding_mode to be 'zeros', 'border', or 'reflection'"),
    (lambda lib, i, g: lib.nn.functional.grid_sample(i, g.double(), align_corners=False),
     RuntimeError, "expected scalar type Float but found Double"),
    (lambda lib, i, g: lib.nn.functional.grid_sample(i, g[..., :1], align_corners=False),
     RuntimeError, "expected grid to have size 2 in last dimension"),
    (lambda lib, i, g: lib.nn.functional.grid_sample(i[0], g[0], align_corners=False),
     RuntimeError, "same batch size"),
    (lambda lib, i, g: lib.nn.functional.grid_sample(i, g[:, 0], align_corners=False),
     RuntimeError, "expected 4D input and grid with same number of dimensions"),
    (lambda lib, i, g: lib.nn.functional.grid_sample(i[:, 0], g[:, 0, :, :1],
                                                     align_corners=False),
     RuntimeError, "expected 5D input and grid with same number of dimensions"),
    (lambda lib, i, g: lib.nn.functional.grid_sample(i[:, :, :0], g, align_corners=False),
     RuntimeError, "non-empty spatial dimensions"),
    (lambda lib, i, g: lib.nn.functional.affine_grid(g[0, 0, :2], (2, 1, 3, 3), False),
     ValueError, "Nx2x3"),
    (lambda lib, i, g: lib.nn.functional.affine_grid(g[:, 0, :2].long(), (2, 1, 3, 3), False),
     ValueError, "floating point type"),
    (lambda lib, i, g: lib.nn.functional.affine_grid(lib.zeros(2, 2, 3), (2, 1, 3), False),
     NotImplementedError, "only supports 4D and 5D sizes"),
    (lambda lib, i, g: lib.nn.functional.affine_grid(lib.zeros(2, 2, 3), (2, 1, 0, 3), False),
     ValueError, "non-zero, positive output size"),
])
def test_errors_match_pytorch(torch, call, error, match):
    img = rng.standard_normal((2, 1, 4, 4)).astype(np.float32)
    grid = rng.uniform(-1, 1, (2, 3, 3, 2)).astype(np.float32)
    for lib in (torch, mg):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(error, match=match):
                call(lib, lib.tensor(img), lib.tensor(grid))


def test_second_derivatives_match_pytorch_and_gradgradcheck(torch):
    from minigrad.autograd import gradgradcheck
    img = mg.tensor(rng.standard_normal((1, 2, 3, 4)), requires_grad=True)
    grid = mg.tensor(rng.uniform(-1.3, 1.3, (1, 2, 3, 2)) + 0.013, requires_grad=True)
    for padding_mode in PADDINGS:
        assert gradgradcheck(lambda i, g: F.grid_sample(i, g, "bilinear", padding_mode, False),
                             [img, grid])
    x, g = rng.standard_normal((2, 3, 4, 5)), rng.uniform(-1.4, 1.4, (2, 3, 2, 2)) + 0.013
    for padding_mode in PADDINGS:
        for align in (False, True):
            second_derivatives_match(torch, x, g, "bilinear", padding_mode, align)


def second_derivatives_match(torch, x, g, mode, padding_mode, align, power=1):
    """Gradients of sum(grid_sample(x, g) * w) ** power by both, and the gradients of their
    products with fixed tensors, agree with PyTorch's."""
    res = []
    for lib in (torch, mg):
        xi, gi = lib.tensor(x, requires_grad=True), lib.tensor(g, requires_grad=True)
        out = lib.nn.functional.grid_sample(xi, gi, mode, padding_mode, align)
        w = lib.tensor(np.random.default_rng(1).standard_normal(tuple(out.shape)))
        first = lib.autograd.grad((out * w).sum() ** power, [xi, gi], create_graph=True)
        v = [lib.tensor(np.random.default_rng(k).standard_normal(tuple(t.shape)))
             for k, t in enumerate(first)]
        second = lib.autograd.grad(sum((t * u).sum() for t, u in zip(first, v)), [xi, gi])
        res.append([t.detach().numpy() for t in first + second])
    for got, want in zip(res[1], res[0]):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_forward_mode_is_refused_as_in_pytorch():
    import minigrad.autograd.forward_ad as fwAD
    with fwAD.dual_level():
        img = fwAD.make_dual(mg.zeros(1, 1, 2, 2), mg.ones(1, 1, 2, 2))
        with pytest.raises(NotImplementedError, match="forward AD with grid_sampler_2d"):
            F.grid_sample(img, mg.zeros(1, 1, 1, 2), align_corners=False)
