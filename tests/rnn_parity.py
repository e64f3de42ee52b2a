"""Running a recurrent layer in minigrad and in PyTorch on the same weights and inputs, and
comparing outputs, input gradients and the gradient of every parameter (float64)."""
import numpy as np

import minigrad as mg


def copy_into_minigrad(torch, t_layer, layer):
    """Load PyTorch's state dict into the minigrad layer (strict: every name must match)."""
    layer.load_state_dict({k: v.detach().numpy() for k, v in t_layer.state_dict().items()})


def copy_into_torch(torch, layer, t_layer):
    t_layer.load_state_dict({k: torch.tensor(v.numpy()) for k, v in layer.state_dict().items()})


def _flat(lib, out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(lib, o)]
    return [out] if isinstance(out, lib.Tensor) else []


def run(lib, layer, call, arrays, seed=0):
    """(outputs, input grads, {name: param grad}) of call(lib, layer, *inputs), backpropagating
    a fixed random weighting of every float output."""
    inputs = [lib.tensor(a).requires_grad_(True) if a.dtype.kind == "f" else lib.tensor(a)
              for a in arrays]
    outs = _flat(lib, call(lib, layer, *inputs))
    rng = np.random.default_rng(seed)
    total = sum((o * lib.tensor(rng.standard_normal(tuple(o.shape)))).sum() for o in outs
                if o.dtype == lib.float64)
    total.backward()
    grads = [None if not t.requires_grad else t.grad.numpy().copy() for t in inputs]
    params = {k: p.grad.numpy().copy() for k, p in layer.named_parameters()}
    return [o.detach().numpy().copy() for o in outs], grads, params


def assert_same(torch, layer, t_layer, call, arrays, atol=1e-10):
    """The minigrad and PyTorch layers agree on values and on every gradient."""
    got, got_in, got_p = run(mg, layer, call, arrays)
    want, want_in, want_p = run(torch, t_layer, call, arrays)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape, f"output {i}: {g.shape} vs PyTorch's {w.shape}"
        np.testing.assert_allclose(g, w, atol=atol, err_msg=f"output {i}")
    for i, (g, w) in enumerate(zip(got_in, want_in)):
        if w is not None:
            np.testing.assert_allclose(g, w, atol=atol, err_msg=f"gradient of input {i}")
    assert list(got_p) == list(want_p)
    for k in want_p:
        np.testing.assert_allclose(got_p[k], want_p[k], atol=atol, err_msg=f"gradient of {k}")
