"""`amp.GradScaler` on the CPU against PyTorch's: the scaled losses, the unscaled gradients,
steps skipped after an inf or nan with the scale backed off, the scale grown after
`growth_interval` good steps, the state dict, pickling, the disabled scaler, and the errors of
a wrong call order or bad settings."""
import copy
import pickle
import warnings

import numpy as np
import pytest

import minigrad


def scaler_run(lib, bad_steps=(2, 5), steps=9, growth_interval=3, dtype="float32"):
    """A small regression trained through a scaler; on `bad_steps` the loss is multiplied by
    inf (a gradient overflows). Returns what each step shows."""
    lib.manual_seed(0)
    rng = np.random.default_rng(0)
    w = lib.tensor(rng.standard_normal((3, 2)).astype(dtype), requires_grad=True)
    b = lib.tensor(np.zeros(2, dtype), requires_grad=True)
    x = lib.tensor(rng.standard_normal((5, 3)).astype(dtype))
    y = lib.tensor(rng.standard_normal((5, 2)).astype(dtype))
    opt = lib.optim.SGD([w, b], lr=0.1, momentum=0.9)
    scaler = lib.amp.GradScaler("cpu", init_scale=2.0 ** 10, growth_interval=growth_interval)
    seen = []
    for step in range(steps):
        opt.zero_grad()
        loss = ((x @ w + b - y) ** 2).mean()
        if step in bad_steps:
            loss = loss * float("inf")
        scaled = scaler.scale(loss)
        scaled.backward()
        scaler.unscale_(opt)
        grad = w.grad.detach().clone().numpy()
        norm = lib.nn.utils.clip_grad_norm_([w, b], 10.0)
        result = scaler.step(opt)
        scaler.update()
        seen.append({"loss": loss.item(), "scaled": scaled.item(), "dtype": str(scaled.dtype),
                     "grad": grad, "norm": float(norm), "stepped": result is None,
                     "scale": scaler.get_scale(), "state": scaler.state_dict(),
                     "w": w.detach().clone().numpy()})
    return seen


def compare(got, expected):
    assert len(got) == len(expected)
    for i, (have, want) in enumerate(zip(got, expected)):
        assert have["scale"] == want["scale"], i
        assert have["state"] == want["state"], i
        assert have["dtype"].split(".")[-1] == want["dtype"].split(".")[-1]
        for key in ("loss", "scaled", "norm"):
            np.testing.assert_allclose(have[key], want[key], rtol=1e-5, err_msg=f"{i} {key}")
        for key in ("grad", "w"):
            np.testing.assert_allclose(have[key], want[key], rtol=1e-5, atol=1e-7,
                                       err_msg=f"{i} {key}")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_scaled_training_with_overflows_matches_pytorch(torch, dtype):
    expected = scaler_run(torch, dtype=dtype)
    got = scaler_run(minigrad, dtype=dtype)
    compare(got, expected)
    scales = [s["scale"] for s in expected]  # backed off twice, grown once
    assert scales == [1024.0, 1024.0, 512.0, 512.0, 512.0, 256.0, 256.0, 256.0, 512.0]


def test_a_scaled_run_equals_an_unscaled_one(torch):
    for lib in (torch, minigrad):
        run = scaler_run(lib, bad_steps=(), steps=5)
        lib.manual_seed(0)
        rng = np.random.default_rng(0)
        w = lib.tensor(rng.standard_normal((3, 2)).astype(np.float32), requires_grad=True)
        b = lib.zeros(2, requires_grad=True)
        x = lib.tensor(rng.standard_normal((5, 3)).astype(np.float32))
        y = lib.tensor(rng.standard_normal((5, 2)).astype(np.float32))
        opt = lib.optim.SGD([w, b], lr=0.1, momentum=0.9)
        for step in range(5):
            opt.zero_grad()
            ((x @ w + b - y) ** 2).mean().backward()
            lib.nn.utils.clip_grad_norm_([w, b], 10.0)
            opt.step()
            np.testing.assert_array_equal(run[step]["w"], w.detach().numpy())


def test_scale_of_nested_outputs_and_dtypes(torch):
    def run(lib):
        scaler = lib.amp.GradScaler("cpu", init_scale=3.0)
        a = lib.tensor([1.5, -2.0])
        h = lib.tensor([1.0, 2.0], dtype=lib.float16)
        d = lib.tensor([0.1], dtype=lib.float64)
        out = scaler.scale([a, (h, d)])
        return ([type(out).__name__, type(out[1]).__name__]
                + [(t.numpy().tolist(), str(t.dtype).split(".")[-1]) for t in
                   (out[0], out[1][0], out[1][1])]
                + [list(t.numpy().tolist() for t in scaler.scale(iter([a])))])
    assert run(minigrad) == run(torch)


def test_state_dict_pickle_and_resume(torch):
    def run(lib):
        first = scaler_run(lib, bad_steps=(1,), steps=4)
        scaler = lib.amp.GradScaler("cpu")
        before = scaler.state_dict()
        scaler.load_state_dict(first[-1]["state"])
        w = lib.ones(2, requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.1)
        scaler.scale((w * w).sum()).backward()
        scaler.step(opt)
        scaler.update()
        copied = copy.deepcopy(scaler)
        pickled = pickle.loads(pickle.dumps(scaler))
        return (before, scaler.state_dict(), copied.state_dict(), pickled.get_scale(),
                scaler.get_growth_factor(), scaler.get_backoff_factor(),
                scaler.get_growth_interval(), w.detach().numpy().tolist())
    assert run(minigrad) == run(torch)


def test_manual_new_scale_and_setters(torch):
    def run(lib):
        scaler = lib.amp.GradScaler("cpu")
        w = lib.ones(2, requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.1)
        scaler.scale(w.sum()).backward()
        scaler.step(opt)
        scaler.update(128.0)
        a = scaler.get_scale()
        scaler.update(lib.tensor(64.0))
        scaler.set_growth_factor(4.0)
        scaler.set_backoff_factor(0.25)
        scaler.set_growth_interval(1)
        opt.zero_grad()
        scaler.scale(w.sum()).backward()
        scaler.step(opt)
        scaler.update()
        return a, scaler.get_scale(), scaler.state_dict()
    assert run(minigrad) == run(torch)


def test_disabled_scaler_passes_through(torch):
    def run(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cuda = lib.amp.GradScaler("cuda")  # no CUDA here: it disables itself
        off = lib.amp.GradScaler("cpu", enabled=False)
        results = []
        for scaler in (cuda, off):
            w = lib.ones(2, requires_grad=True)
            opt = lib.optim.SGD([w], lr=0.5)
            loss = (w * 3).sum()
            out = scaler.scale(loss)
            out.backward()
            scaler.unscale_(opt)
            scaler.step(opt)
            scaler.update()
            scaler.load_state_dict({"scale": 8.0})  # a no-op when disabled
            results.append((out is loss, scaler.is_enabled(), scaler.get_scale(),
                            scaler.state_dict(), w.detach().numpy().tolist()))
        return results
    assert run(minigrad) == run(torch)


def test_cuda_scaler_warns_and_disables():
    with pytest.warns(UserWarning, match="disabling"):
        scaler = minigrad.amp.GradScaler()
    assert not scaler.is_enabled()


def test_older_spellings_fix_the_device_and_warn(torch):
    def run(lib):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            cpu = lib.cpu.amp.GradScaler(2.0 ** 4, 3.0, 0.25, 7)
            cuda = lib.cuda.amp.GradScaler(enabled=False)
        return ([str(w.message) for w in seen if w.category is FutureWarning],
                cpu.is_enabled(), cpu.get_scale(), cpu.get_growth_factor(),
                cpu.get_backoff_factor(), cpu.get_growth_interval(), cuda.is_enabled(),
                type(cpu).__name__, isinstance(cpu, lib.amp.GradScaler))
    assert run(minigrad) == run(torch)


def _misuse(lib):
    def fresh():
        w = lib.ones(2, requires_grad=True)
        return w, lib.optim.SGD([w], lr=0.1), lib.amp.GradScaler("cpu")

    def unscale_twice():
        w, opt, s = fresh()
        s.scale(w.sum()).backward()
        s.unscale_(opt)
        s.unscale_(opt)

    def unscale_after_step():
        w, opt, s = fresh()
        s.scale(w.sum()).backward()
        s.step(opt)
        s.unscale_(opt)

    def step_twice():
        w, opt, s = fresh()
        s.scale(w.sum()).backward()
        s.step(opt)
        s.step(opt)

    def closure():
        w, opt, s = fresh()
        s.scale(w.sum()).backward()
        s.step(opt, closure=lambda: w.sum())

    def update_first():
        fresh()[2].update()

    def update_without_step():
        w, opt, s = fresh()
        s.scale(w.sum())
        s.update()

    def fp16_grads():
        w = lib.ones(2, dtype=lib.float16, requires_grad=True)
        opt, s = lib.optim.SGD([w], lr=0.1), lib.amp.GradScaler("cpu")
        s.scale(w.sum()).backward()
        s.step(opt)

    def empty_state():
        fresh()[2].load_state_dict({})

    def not_a_tensor():
        fresh()[2].scale([lib.ones(1), 3.0])

    def bad_new_scale():
        w, opt, s = fresh()
        s.scale(w.sum())
        s.update(lib.ones(2))

    def one_element_new_scale():  # PyTorch copies it into its 0-d scale
        w, opt, s = fresh()
        s.scale(w.sum())
        s.update(lib.tensor([64.0]))

    return [one_element_new_scale, unscale_twice, unscale_after_step, step_twice, closure,
            update_first, update_without_step, fp16_grads, empty_state, not_a_tensor,
            bad_new_scale,
            lambda: lib.amp.GradScaler("cpu", growth_factor=1.0),
            lambda: lib.amp.GradScaler("cpu", backoff_factor=1.0)]


def test_errors_match_pytorch(torch):
    for want, have in zip(_misuse(torch), _misuse(minigrad)):
        with pytest.raises(Exception) as expected:
            want()
        with pytest.raises(Exception) as got:
            have()
        assert type(got.value) is type(expected.value), want.__name__
        assert str(got.value) == str(expected.value), want.__name__
