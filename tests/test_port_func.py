"""Port test: the two torch.func tutorials, as ordinary PyTorch code run by PyTorch and by
minigrad (passed in as `torch`) from the same weights.

- Per-sample gradients: a small CNN's loss for one example, as a function of the parameters
  with `functional_call`, differentiated with `grad` and mapped over the batch with `vmap`
  (`in_dims=(None, None, 0, 0)`), checked against one backward pass per example.
- Model ensembling: several MLPs' parameters stacked with `stack_module_state`, run at once
  with `vmap` over `functional_call` (each model its own minibatch, then all on one), and
  trained for a few steps with `grad` of the ensemble's summed loss and a plain SGD update.

The tutorials' sizes are cut down (12x12 images, fewer channels and examples) so that the
test is fast; the code is theirs."""
import copy

import numpy as np

from port_runner import run_both, state_numpy


def per_sample_program(torch, data, targets, init=None):
    nn, F = torch.nn, torch.nn.functional
    from_numpy = torch.from_numpy
    torch.manual_seed(0)

    class SimpleCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 4, 3, 1)
            self.conv2 = nn.Conv2d(4, 8, 3, 1)
            self.fc1 = nn.Linear(128, 16)
            self.fc2 = nn.Linear(16, 10)

        def forward(self, x):
            x = self.conv1(x)
            x = F.relu(x)
            x = self.conv2(x)
            x = F.relu(x)
            x = F.max_pool2d(x, 2)
            x = torch.flatten(x, 1)
            x = self.fc1(x)
            x = F.relu(x)
            x = self.fc2(x)
            output = F.log_softmax(x, dim=1)
            return output

    def loss_fn(predictions, targets):
        return F.nll_loss(predictions, targets)

    model = SimpleCNN()
    if init is not None:
        model.load_state_dict({k: from_numpy(v) for k, v in init.items()})
    start = state_numpy(model)
    data, targets = from_numpy(data), from_numpy(targets)

    def compute_grad(sample, target):
        sample = sample.unsqueeze(0)  # prepend batch dimension for processing
        target = target.unsqueeze(0)
        prediction = model(sample)
        loss = loss_fn(prediction, target)
        return torch.autograd.grad(loss, list(model.parameters()))

    def compute_sample_grads(data, targets):
        """ manually process each sample with per sample gradient """
        sample_grads = [compute_grad(data[i], targets[i]) for i in range(len(data))]
        sample_grads = zip(*sample_grads)
        sample_grads = [torch.stack(shards) for shards in sample_grads]
        return sample_grads

    per_sample_grads = compute_sample_grads(data, targets)

    functional_call, grad, vmap = torch.func.functional_call, torch.func.grad, torch.func.vmap
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def compute_loss(params, buffers, sample, target):
        batch = sample.unsqueeze(0)
        targets = target.unsqueeze(0)
        predictions = functional_call(model, (params, buffers), (batch,))
        loss = loss_fn(predictions, targets)
        return loss

    ft_compute_grad = grad(compute_loss)
    ft_compute_sample_grad = vmap(ft_compute_grad, in_dims=(None, None, 0, 0))
    ft_per_sample_grads = ft_compute_sample_grad(params, buffers, data, targets)
    return {"init": start, "loop": [g.numpy() for g in per_sample_grads],
            "vmap": {k: v.numpy() for k, v in ft_per_sample_grads.items()},
            "names": list(ft_per_sample_grads), "model_untouched": state_numpy(model)}


def ensemble_program(torch, minibatches, labels, init=None, steps=3, lr=0.1):
    nn, F = torch.nn, torch.nn.functional
    func = torch.func  # `from torch.func import ...` in the tutorials
    functional_call, grad, vmap = func.functional_call, func.grad, func.vmap
    stack_module_state = func.stack_module_state
    torch.manual_seed(0)

    class SimpleMLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(36, 32)
            self.fc2 = nn.Linear(32, 32)
            self.fc3 = nn.Linear(32, 10)

        def forward(self, x):
            x = x.flatten(1)
            x = self.fc1(x)
            x = F.relu(x)
            x = self.fc2(x)
            x = F.relu(x)
            x = self.fc3(x)
            return x

    num_models = len(minibatches)
    models = [SimpleMLP() for _ in range(num_models)]
    if init is not None:
        for m, state in zip(models, init):
            m.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()})
    start = [state_numpy(m) for m in models]
    minibatches = torch.from_numpy(minibatches)
    labels = torch.from_numpy(labels)
    minibatch = minibatches[0]

    predictions_diff_minibatch_loop = [model(mb) for model, mb in zip(models, minibatches)]
    predictions2 = [model(minibatch) for model in models]

    params, buffers = stack_module_state(models)
    base_model = copy.deepcopy(models[0])

    def fmodel(params, buffers, x):
        return functional_call(base_model, (params, buffers), (x,))

    predictions1_vmap = vmap(fmodel)(params, buffers, minibatches)
    predictions2_vmap = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)

    def ensemble_loss(params, buffers, xs, ys):
        logits = vmap(fmodel)(params, buffers, xs)
        return F.cross_entropy(logits.flatten(0, 1), ys.flatten())

    losses = []
    for _ in range(steps):
        loss = ensemble_loss(params, buffers, minibatches, labels)
        grads = grad(ensemble_loss)(params, buffers, minibatches, labels)
        with torch.no_grad():
            params = {k: p - lr * grads[k] for k, p in params.items()}
        losses.append(loss.item())
    return {"init": start,
            "loop": torch.stack(predictions_diff_minibatch_loop).detach().numpy(),
            "loop2": torch.stack(predictions2).detach().numpy(),
            "vmap1": predictions1_vmap.detach().numpy(),
            "vmap2": predictions2_vmap.detach().numpy(),
            "requires_grad": [p.requires_grad for p in stack_module_state(models)[0].values()],
            "shapes": {k: tuple(v.shape) for k, v in params.items()},
            "losses": losses, "final": {k: v.numpy() for k, v in params.items()}}


def test_per_sample_gradients_tutorial(torch):
    rng = np.random.default_rng(0)
    data = rng.standard_normal((6, 1, 12, 12)).astype(np.float32)
    targets = rng.integers(0, 10, 6)
    expected, got = run_both(per_sample_program, torch, data, targets)
    for want in (expected, got):  # each library's vmap(grad) equals its own loop
        for name, loop in zip(want["names"], want["loop"]):
            np.testing.assert_allclose(want["vmap"][name], loop, rtol=1e-4, atol=1e-6)
    assert got["names"] == expected["names"]
    for name in expected["names"]:
        assert got["vmap"][name].shape == expected["vmap"][name].shape
        np.testing.assert_allclose(got["vmap"][name], expected["vmap"][name], rtol=1e-4,
                                   atol=1e-6, err_msg=name)
    for k, v in expected["model_untouched"].items():  # functional_call put the weights back
        np.testing.assert_array_equal(got["model_untouched"][k], v)


def test_model_ensembling_tutorial(torch):
    rng = np.random.default_rng(1)
    minibatches = rng.standard_normal((4, 8, 1, 6, 6)).astype(np.float32)
    labels = rng.integers(0, 10, (4, 8))
    expected, got = run_both(ensemble_program, torch, minibatches, labels)
    for want in (expected, got):
        np.testing.assert_allclose(want["vmap1"], want["loop"], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(want["vmap2"], want["loop2"], rtol=1e-5, atol=1e-6)
    for key in ("vmap1", "vmap2"):
        np.testing.assert_allclose(got[key], expected[key], rtol=1e-4, atol=1e-5)
    assert got["requires_grad"] == expected["requires_grad"]
    assert got["shapes"] == expected["shapes"]
    np.testing.assert_allclose(got["losses"], expected["losses"], rtol=1e-4)
    for k, v in expected["final"].items():
        np.testing.assert_allclose(got["final"][k], v, rtol=1e-4, atol=1e-5, err_msg=k)
