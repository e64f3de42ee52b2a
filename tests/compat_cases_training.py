"""Compatibility cases: optimizers and learning-rate schedules, grad modes, the loss scaler,
save and load, ONNX export."""
import io
import os
import tempfile
import warnings

import numpy as np

from compat_cases_nn import fill
from compat_table import A, case, f32

CASES = []
add = CASES.append


# --- optimizers and schedules --------------------------------------------------------------------

def _train(lib, make, steps=4, schedule=None):
    """A few steps on a fixed quadratic; returns the weights after each step and the lrs."""
    w = lib.tensor(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3), requires_grad=True)
    b = lib.tensor([0.5, -0.5], requires_grad=True)
    opt = make([{"params": [w]}, {"params": [b], "lr": 0.05}])
    sched = schedule(opt) if schedule else None
    history, lrs = [], []
    for _ in range(steps):
        opt.zero_grad()
        loss = ((w * w * lib.tensor([1.0, 2.0, 3.0])).sum() + (b - 1).pow(2).sum()) * 0.5
        loss.backward()
        opt.step()
        if sched:
            sched.step()
            lrs.append(sched.get_last_lr())
        history.append((w.detach().clone(), b.detach().clone()))
    return history, lrs, [g["lr"] for g in opt.param_groups]


@add
@case("optim.SGD", "optim.Adam", "optim.AdamW", "optim.Optimizer")
def _(lib):
    optim = lib.optim
    return (_train(lib, lambda p: optim.SGD(p, lr=0.1)),
            _train(lib, lambda p: optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True,
                                            weight_decay=0.01)),
            _train(lib, lambda p: optim.Adam(p, lr=0.1)),
            _train(lib, lambda p: optim.Adam(p, lr=0.1, weight_decay=0.1, amsgrad=True)),
            _train(lib, lambda p: optim.AdamW(p, lr=0.1, betas=(0.8, 0.9))),
            isinstance(optim.SGD([lib.zeros(1, requires_grad=True)]), optim.Optimizer))


@add
@case("optim.Optimizer.add_param_group", "optim.Optimizer.register_step_pre_hook",
      "optim.Optimizer.register_step_post_hook", "optim.Optimizer.register_state_dict_pre_hook",
      "optim.Optimizer.register_state_dict_post_hook",
      "optim.Optimizer.register_load_state_dict_pre_hook",
      "optim.Optimizer.register_load_state_dict_post_hook")
def _(lib):
    log = []
    w, b = lib.tensor([1.0, -2.0], requires_grad=True), lib.tensor([0.5], requires_grad=True)
    opt = lib.optim.RMSprop([w], lr=0.1, momentum=0.5)
    opt.add_param_group({"params": [b], "lr": 0.01, "centered": True})
    opt.register_step_pre_hook(lambda o, args, kwargs: log.append(("pre", len(args))))
    opt.register_step_post_hook(lambda o, args, kwargs: log.append("post"))
    opt.register_state_dict_pre_hook(lambda o: log.append("sd pre"))
    opt.register_state_dict_post_hook(lambda o, sd: log.append(len(sd["param_groups"])))
    opt.register_load_state_dict_pre_hook(lambda o, sd: log.append("load pre"))
    opt.register_load_state_dict_post_hook(lambda o: log.append("load post"))
    for _ in range(3):
        opt.zero_grad()
        ((w * w).sum() + (b * b * b).sum()).backward()
        opt.step()
    opt.load_state_dict(opt.state_dict())
    return w.detach(), b.detach(), log, [sorted(g) for g in opt.param_groups]


@add
@case("optim.lr_scheduler.LambdaLR", "optim.lr_scheduler.StepLR", "optim.lr_scheduler.LRScheduler")
def _(lib):
    sched = lib.optim.lr_scheduler
    return (_train(lib, lambda p: lib.optim.SGD(p, lr=0.1),
                   schedule=lambda o: sched.LambdaLR(o, lambda s: 1 / (s + 1)), steps=5),
            _train(lib, lambda p: lib.optim.Adam(p, lr=0.1),
                   schedule=lambda o: sched.StepLR(o, step_size=2, gamma=0.5), steps=5),
            issubclass(sched.StepLR, sched.LRScheduler))


@add
@case("optim.lr_scheduler.ExponentialLR")
def _(lib):
    return _train(lib, lambda p: lib.optim.SGD(p, lr=0.1),
                  schedule=lambda o: lib.optim.lr_scheduler.ExponentialLR(o, 0.7), steps=5)


@add
@case("optim.lr_scheduler.CosineAnnealingWarmRestarts")
def _(lib):
    sched = lib.optim.lr_scheduler
    return (_train(lib, lambda p: lib.optim.SGD(p, lr=0.1),
                   schedule=lambda o: sched.CosineAnnealingWarmRestarts(o, 2, 2, 0.01), steps=8),
            _train(lib, lambda p: lib.optim.Adam(p, lr=0.1),
                   schedule=lambda o: sched.CosineAnnealingWarmRestarts(o, 3), steps=7))


@add
@case("optim.RMSprop", "optim.Adagrad")
def _(lib):
    optim = lib.optim
    return (_train(lib, lambda p: optim.RMSprop(p, lr=0.01)),
            _train(lib, lambda p: optim.RMSprop(p, lr=0.01, momentum=0.9, centered=True,
                                                weight_decay=0.01)),
            _train(lib, lambda p: optim.Adagrad(p, lr=0.1)),
            _train(lib, lambda p: optim.Adagrad(p, lr=0.1, lr_decay=0.01, weight_decay=0.01,
                                                initial_accumulator_value=0.1)))


@add
@case("optim.Adadelta", "optim.Rprop", "optim.ASGD", "optim.Adafactor")
def _(lib):
    optim = lib.optim
    return (_train(lib, lambda p: optim.Adafactor(p, lr=0.05, weight_decay=0.01)),
            _train(lib, lambda p: optim.ASGD(p, lr=0.1, t0=2), steps=5),
            _train(lib, lambda p: optim.Adadelta(p)),
            _train(lib, lambda p: optim.Adadelta(p, lr=0.5, rho=0.8, weight_decay=0.01)),
            _train(lib, lambda p: optim.Rprop(p, lr=0.05), steps=6),
            _train(lib, lambda p: optim.Rprop(p, etas=(0.4, 1.1), step_sizes=(1e-3, 0.1))))


@add
@case("optim.Muon")
def _(lib):
    w = lib.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4), requires_grad=True)
    x = lib.tensor(np.linspace(0, 2, 8, dtype=np.float32).reshape(2, 4))
    out = []
    for kw in (dict(lr=0.02), dict(lr=0.02, nesterov=False, adjust_lr_fn="match_rms_adamw")):
        opt = lib.optim.Muon([w], **kw)
        for _ in range(3):
            opt.zero_grad()
            ((x @ w.T).tanh() ** 2).sum().backward()
            opt.step()
        out.append(w.detach().clone())
    return out


@add
@case("optim.LBFGS")
def _(lib):
    """Full-batch least squares with a closure, both line-search settings (float64)."""
    out = []
    for line_search in (None, "strong_wolfe"):
        w = lib.tensor(np.array([[0.5, -1.0], [2.0, 0.3]]), requires_grad=True)
        x = lib.tensor(np.linspace(-1, 1, 12).reshape(6, 2))
        y = lib.tensor(np.cos(np.linspace(0, 3, 12)).reshape(6, 2))
        opt = lib.optim.LBFGS([w], lr=0.8, max_iter=6, history_size=3,
                              line_search_fn=line_search)

        def closure():
            opt.zero_grad()
            loss = ((lib.tanh(x @ w) - y) ** 2).sum()
            loss.backward()
            return loss
        losses = [opt.step(closure).detach() for _ in range(2)]
        out.append((w.detach(), losses, opt.state[w]["n_iter"], opt.state[w]["func_evals"]))
    return out


@add
@case("optim.Adamax", "optim.NAdam", "optim.RAdam")
def _(lib):
    optim = lib.optim
    return (_train(lib, lambda p: optim.Adamax(p, lr=0.05, weight_decay=0.01)),
            _train(lib, lambda p: optim.NAdam(p, lr=0.05)),
            _train(lib, lambda p: optim.NAdam(p, lr=0.05, weight_decay=0.1,
                                              decoupled_weight_decay=True)),
            _train(lib, lambda p: optim.RAdam(p, lr=0.05, betas=(0.9, 0.9)), steps=8),
            _train(lib, lambda p: optim.RAdam(p, lr=0.05, weight_decay=0.1)))


@add
@case("optim.lr_scheduler.MultiStepLR", "optim.lr_scheduler.ConstantLR",
      "optim.lr_scheduler.LinearLR", "optim.lr_scheduler.PolynomialLR",
      "optim.lr_scheduler.CosineAnnealingLR")
def _(lib):
    s = lib.optim.lr_scheduler

    def sgd(params):
        return lib.optim.SGD(params, lr=0.1)
    return (_train(lib, sgd, schedule=lambda o: s.MultiStepLR(o, [2, 4], 0.5), steps=6),
            _train(lib, sgd, schedule=lambda o: s.ConstantLR(o, 0.5, total_iters=3), steps=5),
            _train(lib, sgd, schedule=lambda o: s.LinearLR(o, 0.2, total_iters=4), steps=6),
            _train(lib, sgd, schedule=lambda o: s.PolynomialLR(o, 4, 2.0), steps=6),
            _train(lib, sgd, schedule=lambda o: s.CosineAnnealingLR(o, 4, 0.01), steps=7))


@add
@case("optim.lr_scheduler.SequentialLR", "optim.lr_scheduler.ChainedScheduler")
def _(lib):
    s = lib.optim.lr_scheduler

    def sgd(params):
        return lib.optim.SGD(params, lr=0.1)
    return (_train(lib, sgd, steps=7, schedule=lambda o: s.SequentialLR(
                o, [s.LinearLR(o, 0.1, total_iters=3), s.ExponentialLR(o, 0.8)], [3])),
            _train(lib, sgd, steps=5, schedule=lambda o: s.ChainedScheduler(
                [s.ConstantLR(o, 0.5, total_iters=2), s.ExponentialLR(o, 0.9)])))


@add
@case("optim.lr_scheduler.OneCycleLR")
def _(lib):
    s = lib.optim.lr_scheduler
    return (_train(lib, lambda p: lib.optim.SGD(p, lr=0.1, momentum=0.9), steps=7,
                   schedule=lambda o: s.OneCycleLR(o, max_lr=0.5, total_steps=8)),
            _train(lib, lambda p: lib.optim.Adam(p, lr=0.1), steps=6,
                   schedule=lambda o: s.OneCycleLR(o, max_lr=[0.1, 0.05], epochs=2,
                                                   steps_per_epoch=4, three_phase=True)))


@add
@case("optim.lr_scheduler.CyclicLR", "optim.lr_scheduler.MultiplicativeLR")
def _(lib):
    s = lib.optim.lr_scheduler
    return (_train(lib, lambda p: lib.optim.SGD(p, lr=0.1, momentum=0.9), steps=7,
                   schedule=lambda o: s.CyclicLR(o, 0.01, 0.1, step_size_up=2,
                                                 mode="triangular2")),
            _train(lib, lambda p: lib.optim.Adam(p, lr=0.1), steps=5,
                   schedule=lambda o: s.CyclicLR(o, [0.01, 0.02], 0.1, step_size_up=2,
                                                 mode="exp_range", gamma=0.9)),
            _train(lib, lambda p: lib.optim.SGD(p, lr=0.1), steps=5,
                   schedule=lambda o: s.MultiplicativeLR(o, lambda epoch: 0.9)))


@add
@case("optim.lr_scheduler.ReduceLROnPlateau")
def _(lib):
    w = lib.tensor([1.0, -2.0], requires_grad=True)
    opt = lib.optim.SGD([w], lr=0.1)
    sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=1, cooldown=1)
    lrs = []
    for loss in (3.0, 2.0, 2.0, 2.5, 1.9, 2.0, 2.1, 2.2, 2.3):
        opt.zero_grad()
        (w * w).sum().backward()
        opt.step()
        sched.step(loss)
        lrs.append(sched.get_last_lr())
    return w.detach(), lrs, sched.num_bad_epochs, sched.best


@add
@case("optim.swa_utils.AveragedModel", "optim.swa_utils.get_ema_multi_avg_fn",
      "optim.swa_utils.get_swa_multi_avg_fn", "optim.swa_utils.get_ema_avg_fn",
      "optim.swa_utils.get_swa_avg_fn", "optim.swa_utils.SWALR", "optim.swa_utils.update_bn",
      inputs=(f32(4, 3, grad=False),))
def _(lib, x):
    swa = lib.optim.swa_utils
    model = lib.nn.Linear(3, 2)
    with lib.no_grad():
        model.weight.copy_(lib.tensor(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)))
        model.bias.fill_(0.5)
    averaged = [swa.AveragedModel(model), swa.AveragedModel(model, avg_fn=swa.get_ema_avg_fn()),
                swa.AveragedModel(model, multi_avg_fn=swa.get_ema_multi_avg_fn(0.9)),
                swa.AveragedModel(model, multi_avg_fn=swa.get_swa_multi_avg_fn()),
                swa.AveragedModel(model, avg_fn=swa.get_swa_avg_fn())]
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    sched = swa.SWALR(opt, swa_lr=0.05, anneal_epochs=2)
    lrs = []
    for _ in range(3):
        opt.zero_grad()
        (model(x) ** 2).sum().backward()
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr())
        for a in averaged:
            a.update_parameters(model)
    net = lib.nn.Sequential(lib.nn.Linear(3, 3), lib.nn.BatchNorm1d(3))
    with lib.no_grad():
        net[0].weight.copy_(lib.tensor(np.linspace(-1, 1, 9, dtype=np.float32).reshape(3, 3)))
        net[0].bias.fill_(0.1)
    swa.update_bn([x, x * 2 + 1], net)
    return ([a(x) for a in averaged], [a.n_averaged for a in averaged], lrs,
            net[1].running_mean, net[1].running_var, net.training)


# --- grad modes, save and load -----------------------------------------------------------------

@add
@case("minigrad.no_grad", "minigrad.enable_grad", "minigrad.is_grad_enabled",
      "minigrad.set_grad_enabled", "minigrad.inference_mode", "minigrad.is_inference_mode_enabled",
      inputs=(f32(3),))
def _(lib, x):
    with lib.no_grad():
        a = x * 2
        with lib.enable_grad():
            b = x * 2
        off = lib.is_grad_enabled()
    with lib.set_grad_enabled(False):
        c = x * 2
    lib.set_grad_enabled(False)
    d = x * 2
    lib.set_grad_enabled(True)
    with lib.inference_mode():
        e = x * 2
        inside = lib.is_inference_mode_enabled()
        with lib.inference_mode(False):
            h = x * 2

    @lib.no_grad()
    def f(t):
        return t * 2

    @lib.inference_mode()
    def g(t):
        return t * 2
    return (a.requires_grad, b.requires_grad, off, c.requires_grad, d.requires_grad,
            e.requires_grad, f(x).requires_grad, g(x).requires_grad, lib.is_grad_enabled(), inside,
            h.requires_grad, lib.is_inference_mode_enabled())


@add
@case("minigrad.save", "minigrad.load")
def _(lib):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "checkpoint")
        lib.save({"w": lib.arange(6.0).reshape(2, 3), "step": 7, "names": ["a", "b"]}, path)
        back = lib.load(path, map_location="cpu")
    return back["w"], back["step"], back["names"]


@add
@case("minigrad.save", "minigrad.load", inputs=(f32(4, 3, grad=False),))
def _(lib, x):
    """Whole objects, as PyTorch saves them: a model through a buffer, loaded with
    weights_only=False; tensors and plain containers with the default."""
    model = lib.nn.Sequential(lib.nn.Linear(3, 5), lib.nn.Tanh(), lib.nn.Linear(5, 2))
    buf = io.BytesIO()
    lib.save({"model": model, "step": 3}, buf)
    buf.seek(0)
    back = lib.load(buf, weights_only=False)
    buf = io.BytesIO()
    lib.save([x, (x.sum(), {"k": x * 2})], buf)
    buf.seek(0)
    plain = lib.load(buf)
    return back["model"](x) - model(x), back["step"], type(back["model"]).__name__, plain


def _refused(lib):
    buf = io.BytesIO()
    lib.save(lib.nn.Linear(2, 2), buf)
    buf.seek(0)
    lib.load(buf)  # weights_only=True by default in both


add(case("minigrad.load", compare="raises", match="weights_only=False")(_refused))


@add
@case("amp.GradScaler", "cuda.amp")
def _(lib):
    w = lib.tensor([1.0, -2.0], requires_grad=True)
    opt = lib.optim.SGD([w], lr=0.1)
    scaler = lib.amp.GradScaler("cuda", enabled=False)  # as GPT scripts build it on a CPU
    for _ in range(2):
        loss = (w * w).sum()
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)
    old = lib.cuda.amp.GradScaler(enabled=False)
    return w.detach(), scaler.is_enabled(), old.is_enabled(), scaler.scale(lib.ones(1))


@add
@case("amp.GradScaler", inputs=(A(np.linspace(-2.0, 1.5, 12, dtype=np.float32).reshape(4, 3)),
                                A(np.cos(np.arange(8, dtype=np.float32)).reshape(4, 2))))
def _(lib, x, y):
    """Scaling on the CPU: an overflowing step skipped and the scale backed off, then grown
    after `growth_interval` good steps; gradients unscaled before clipping."""
    lin = fill(lib, lib.nn.Linear(3, 2))
    opt = lib.optim.SGD(lin.parameters(), lr=0.1)
    scaler = lib.amp.GradScaler("cpu", init_scale=256.0, growth_interval=2)
    scales, scaled = [], []
    for step in range(5):
        opt.zero_grad()
        loss = lib.nn.functional.mse_loss(lin(x.detach()), y.detach())
        s = scaler.scale(loss * (float("inf") if step == 1 else 1.0))
        s.backward()
        scaler.unscale_(opt)
        lib.nn.utils.clip_grad_norm_(lin.parameters(), 0.5)
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
        scaled.append(s.detach() if step != 1 else None)
    return lin.weight.detach(), lin.bias.detach(), scales, scaled, scaler.state_dict()


@add
@case("onnx.export", "onnx.TrainingMode", "onnx.is_in_onnx_export", "onnx.OnnxExporterError",
      "onnx.ONNXProgram", "onnx.errors.OnnxExporterError", "onnx.errors.UnsupportedOperatorError")
def _(lib):
    """A model exported with the legacy exporter's arguments (a dynamic batch) and run in
    onnxruntime on another batch size."""
    import onnxruntime
    seen = []

    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc, self.norm = lib.nn.Linear(3, 4), lib.nn.LayerNorm(4)

        def forward(self, x):
            seen.append(lib.onnx.is_in_onnx_export())
            return self.norm(self.fc(x)).relu().softmax(-1)
    net = Net().train()
    with lib.no_grad():
        net.fc.weight.copy_(lib.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)))
        net.fc.bias.copy_(lib.tensor([0.1, -0.2, 0.3, 0.0]))
    buf = io.BytesIO()
    with warnings.catch_warnings():  # PyTorch's notice that its TorchScript exporter is legacy
        warnings.simplefilter("ignore", DeprecationWarning)
        lib.onnx.export(net, (lib.ones(2, 3),), buf, input_names=["x"], output_names=["y"],
                        dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}}, opset_version=18,
                        dynamo=False, training=lib.onnx.TrainingMode.EVAL)
    session = onnxruntime.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    y = session.run(None, {"x": np.linspace(-2, 2, 15, dtype=np.float32).reshape(5, 3)})[0]
    errors = lib.onnx.errors
    return (lib.tensor(y), bool(seen) and all(seen), net.training, lib.onnx.is_in_onnx_export(),
            issubclass(errors.UnsupportedOperatorError, errors.OnnxExporterError),
            errors.OnnxExporterError is lib.onnx.OnnxExporterError,
            issubclass(lib.onnx.OnnxExporterError, RuntimeError),
            int(lib.onnx.TrainingMode.PRESERVE), callable(lib.onnx.ONNXProgram.save))
