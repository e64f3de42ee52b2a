"""kernels.adam_step: the compiled Adam pass against its NumPy reference, bit for bit, and the
optimizers that use it against their NumPy path and against torch.optim."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import minigrad as mg
from minigrad import kernels
from minigrad.kernels import fused_ops as kernels_fused
from minigrad.nn.module import Parameter
from minigrad.optim import Adam, AdamW

FAST = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(autouse=True)
def restore_backend():
    before = kernels.get_backend()
    yield
    kernels.set_backend(before)


def _state(rng, shape, dtype, special):
    """p, g, m, v, vmax of one parameter; `special` puts NaN, inf and zeros into them."""
    p, g, m = (rng.standard_normal(shape).astype(dtype) for _ in range(3))
    v, vmax = (np.abs(rng.standard_normal(shape)).astype(dtype) * 0.01 for _ in range(2))
    if special and p.size >= 4:
        g.reshape(-1)[:3] = [np.nan, np.inf, 0.0]
        v.reshape(-1)[3] = 0.0
        vmax.reshape(-1)[0] = np.nan
    return [p, g, m, v, vmax]


@FAST
@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, max_side=9),
       dtype=st.sampled_from([np.float32, np.float64]),
       lr=st.sampled_from([0.0, 1e-3, 0.5]), betas=st.sampled_from([(0.9, 0.999), (0.5, 0.98)]),
       eps=st.sampled_from([0.0, 1e-8, 1e-3]), weight_decay=st.sampled_from([0.0, 0.1]),
       decoupled=st.booleans(), amsgrad=st.booleans(), special=st.booleans(),
       transposed_grad=st.booleans(), parallel=st.booleans(), seed=st.integers(0, 2**16))
def test_compiled_step_equals_reference_bit_for_bit(shape, dtype, lr, betas, eps, weight_decay,
                                                    decoupled, amsgrad, special,
                                                    transposed_grad, parallel, seed):
    # parallel: every size takes the threads' twin of the pass (normally only large ones)
    saved_min = kernels_fused.ADAM_PARALLEL_MIN
    kernels_fused.ADAM_PARALLEL_MIN = 1 if parallel else saved_min
    try:
        _compiled_equals_reference(shape, dtype, lr, betas, eps, weight_decay, decoupled,
                                   amsgrad, special, transposed_grad, seed)
    finally:
        kernels_fused.ADAM_PARALLEL_MIN = saved_min


def _compiled_equals_reference(shape, dtype, lr, betas, eps, weight_decay, decoupled, amsgrad,
                               special, transposed_grad, seed):
    rng = np.random.default_rng(seed)
    start = _state(rng, shape, dtype, special)
    if transposed_grad:  # a gradient in another memory layout: read, never written
        start[1] = np.ascontiguousarray(start[1].T).T
    results = {}
    for backend in kernels.BACKENDS:
        kernels.set_backend(backend)
        arrays = [a.copy() if i != 1 else a for i, a in enumerate(start)]
        with np.errstate(all="ignore"):
            for t in (1, 2, 3):
                kernels.adam_step(*arrays[:4], arrays[4] if amsgrad else None, lr, *betas, eps,
                                  weight_decay, decoupled, t)
        results[backend] = arrays
    for got, want in zip(results["numba"], results["numpy"]):
        np.testing.assert_array_equal(got, want)  # NaN matches NaN
    np.testing.assert_array_equal(results["numba"][1], start[1])  # the gradient is untouched


def test_adam_step_names_bad_input():
    a = np.zeros((2, 3), np.float32)
    args = (1e-3, 0.9, 0.999, 1e-8, 0.0, False, 1)
    with pytest.raises(ValueError, match=r"adam_step: exp_avg of shape \(3,\) does not match"):
        kernels.adam_step(a, a.copy(), np.zeros(3, np.float32), a.copy(), None, *args)
    with pytest.raises(TypeError, match="adam_step: dtypes differ"):
        kernels.adam_step(a, a.astype(np.float64), a.copy(), a.copy(), None, *args)
    with pytest.raises(TypeError, match="adam_step: unsupported dtype float16"):
        h = a.astype(np.float16)
        kernels.adam_step(h, h.copy(), h.copy(), h.copy(), None, *args)
    with pytest.raises(TypeError, match="adam_step: exp_avg_sq must be a numpy array"):
        kernels.adam_step(a, a.copy(), a.copy(), [0.0], None, *args)
    with pytest.raises(ValueError, match="adam_step: .* must be C-contiguous"):
        kernels.adam_step(a, a.copy(), np.zeros((3, 2), np.float32).T, a.copy(), None, *args)


# --- the optimizers: compiled path, NumPy path and PyTorch agree -----------------------------

CONFIGS = [(Adam, dict(lr=0.01)), (Adam, dict(lr=0.01, weight_decay=0.1, amsgrad=True)),
           (AdamW, dict(lr=0.01)), (AdamW, dict(lr=0.02, betas=(0.8, 0.99), amsgrad=True))]


def _params(dtype):
    """A large and a small parameter, one transposed (not C-contiguous), one of another dtype."""
    rng = np.random.default_rng(0)
    big = Parameter(rng.standard_normal((300, 70)).astype(dtype))
    return [big, Parameter(rng.standard_normal(5).astype(dtype)),
            Parameter(np.ascontiguousarray(rng.standard_normal((4, 3)).T).astype(dtype)),
            Parameter(rng.standard_normal((2, 3)).astype(np.float16))]


def _train(cls, cfg, dtype, backend, steps=4):
    kernels.set_backend(backend)
    ps = _params(dtype)
    opt = cls(ps, **cfg)
    rng = np.random.default_rng(1)
    grads = []
    for _ in range(steps):
        gs = [rng.standard_normal(p.shape).astype(p.numpy().dtype) for p in ps]
        for p, g in zip(ps, gs):
            p.grad = mg.tensor(g)
        opt.step()
        grads.append(gs)
    return [p.numpy().copy() for p in ps], opt, grads


@pytest.mark.parametrize("cls,cfg", CONFIGS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_optimizer_compiled_path_equals_numpy_path(cls, cfg, dtype):
    ours, opt_a, _ = _train(cls, cfg, dtype, "numba")
    theirs, opt_b, _ = _train(cls, cfg, dtype, "numpy")
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a, b)
    for sa, sb in zip(opt_a.state_dict()["state"].values(), opt_b.state_dict()["state"].values()):
        assert sa["step"] == sb["step"] == 4
        np.testing.assert_array_equal(sa["exp_avg_sq"].numpy(), sb["exp_avg_sq"].numpy())


@pytest.mark.parametrize("cls,cfg", CONFIGS)
def test_compiled_optimizer_against_torch(cls, cfg):
    torch = pytest.importorskip("torch")
    ours, _, grads = _train(cls, cfg, np.float32, "numba")
    tparams = [torch.nn.Parameter(torch.from_numpy(p.numpy().astype(np.float32)))
               for p in _params(np.float32)[:3]]
    topt = getattr(torch.optim, cls.__name__)(tparams, **cfg)
    for gs in grads:
        for p, g in zip(tparams, gs):
            p.grad = torch.from_numpy(g)
        topt.step()
    for a, b in zip(ours, tparams):
        np.testing.assert_allclose(a, b.detach().numpy(), rtol=2e-5, atol=2e-6)


def test_a_gradient_of_another_dtype_takes_the_numpy_path():
    results = []
    for backend in kernels.BACKENDS:
        kernels.set_backend(backend)
        p = Parameter(np.linspace(-1, 1, 6).astype(np.float32))
        opt = Adam([p], lr=0.1)
        for _ in range(3):
            p.grad = mg.tensor(np.linspace(0.5, -0.5, 6))  # float64, set by hand
            opt.step()
        results.append(p.numpy().copy())
    assert results[0].dtype == np.float32
    np.testing.assert_array_equal(results[0], results[1])


@FAST
@given(shapes=st.lists(hnp.array_shapes(min_dims=1, max_dims=3, max_side=7), min_size=1,
                       max_size=5),
       dtype=st.sampled_from([np.float32, np.float64]),
       lr=st.sampled_from([0.0, 1e-3, 0.5]), weight_decay=st.sampled_from([0.0, 0.1]),
       decoupled=st.booleans(), amsgrad=st.booleans(), special=st.booleans(),
       steps=st.lists(st.integers(1, 4), min_size=5, max_size=5),
       odd=st.sampled_from([None, "transposed_grad", "grad_dtype"]), parallel=st.booleans(),
       seed=st.integers(0, 2**16))
def test_steps_of_a_group_equal_one_step_each_bit_for_bit(shapes, dtype, lr, weight_decay,
                                                          decoupled, amsgrad, special, steps,
                                                          odd, parallel, seed):
    # adam_steps (an optimizer's group at once) against adam_step per parameter: the same
    # bits, whatever step count each parameter is at; an item it does not take directly
    # (amsgrad, a strided gradient, another dtype) goes through adam_step's own path
    rng = np.random.default_rng(seed)
    saved_min = kernels_fused.ADAM_PARALLEL_MIN
    kernels_fused.ADAM_PARALLEL_MIN = 1 if parallel else saved_min
    try:
        states = [_state(rng, s, dtype, special) for s in shapes]
        if odd == "transposed_grad" and states[0][1].ndim > 1:
            states[0][1] = np.ascontiguousarray(states[0][1].T).T
        elif odd == "grad_dtype":
            states[-1][1] = states[-1][1].astype(np.float16)
        hyper = (lr, 0.9, 0.999, 1e-8, weight_decay, decoupled)
        one = [[a.copy() for a in st_] for st_ in states]
        many = [[a.copy() for a in st_] for st_ in states]
        for (p, g, m, v, vmax), t in zip(one, steps):
            if g.dtype != p.dtype:
                with pytest.raises(TypeError):
                    kernels.adam_step(p, g, m, v, vmax if amsgrad else None, *hyper, t)
            else:
                kernels.adam_step(p, g, m, v, vmax if amsgrad else None, *hyper, t)
        items = [(p, g, m, v, vmax if amsgrad else None, t) for (p, g, m, v, vmax), t
                 in zip(many, steps)]
        if odd == "grad_dtype":   # the last item raises adam_step's error, after the others
            with pytest.raises(TypeError):
                kernels.adam_steps(items, *hyper)
        else:
            kernels.adam_steps(items, *hyper)
    finally:
        kernels_fused.ADAM_PARALLEL_MIN = saved_min
    for a, b in zip(one, many):
        for x, y in zip(a, b):
            assert x.tobytes() == y.tobytes()
