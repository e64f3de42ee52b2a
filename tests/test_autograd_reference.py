"""The plain reference backward pass gives the real engine's gradients.

The real engine (`minigrad.autograd.run_backward`) adds a queue, early freeing of saved arrays,
in-place checks and hooks to the algorithm; `minigrad.autograd_reference` is the algorithm
alone. Both run on the same recorded graph, so any difference is the engine's, not the model's.
"""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd.reference import fit, reference_backward, topological_order
from minigrad.models import Seq2SeqTransformer


def test_toy_transformer_loss_same_gradients_as_the_engine():
    mg.manual_seed(0)
    model = Seq2SeqTransformer(31, 29, d_model=16, nhead=2, num_encoder_layers=2,
                               num_decoder_layers=2, dim_feedforward=32, dropout=0.1)
    model.train()
    for p in model.parameters():
        p.data = p.data.double()
    rng = np.random.default_rng(1)
    src = mg.tensor(rng.integers(1, 31, (3, 7)))
    src[0, 5:] = 0  # padding, so the masks take part
    tgt = mg.tensor(rng.integers(1, 29, (3, 6)))
    loss = model.loss(src, tgt[:, :-1], tgt[:, 1:], label_smoothing=0.1)
    ref = reference_backward(loss)
    loss.backward()
    params = dict(model.named_parameters())
    assert set(ref) == {p for p in params.values() if p.grad is not None}
    for name, p in params.items():
        if p.grad is not None:
            np.testing.assert_allclose(ref[p], p.grad.numpy(), rtol=1e-10, atol=1e-12,
                                       err_msg=name)


def test_diamond_and_shared_inputs_add_up():
    a = mg.tensor([1.0, 2.0], dtype=mg.float64, requires_grad=True)
    b = mg.tensor(3.0, dtype=mg.float64, requires_grad=True)
    c, d = a * b, a + b  # both reach a and b
    e = (c * d).sum() + (a * a).sum()
    ref = reference_backward(e)
    e.backward()
    for leaf in (a, b):
        np.testing.assert_allclose(ref[leaf], leaf.grad.numpy())
    order = topological_order(e.grad_fn)
    pos = {n: i for i, n in enumerate(order)}
    assert all(pos[child] < pos[n] for n in order for child in n.next_nodes if child is not None)


@pytest.mark.parametrize("shape, g_shape", [((3,), (2, 3)), ((1, 3), (4, 3)), ((2, 1), (2, 5)),
                                            ((), (3, 2)), ((1,), (1,))])
def test_fit_sums_broadcast_axes(shape, g_shape):
    g = np.arange(np.prod(g_shape), dtype=np.float64).reshape(g_shape)
    out = fit(g, shape, np.float32)
    assert out.shape == shape and out.dtype == np.float32
    assert np.isclose(out.sum(), g.sum())


def test_a_tensor_without_a_graph_is_refused():
    with pytest.raises(RuntimeError, match="reference_backward"):
        reference_backward(mg.tensor([1.0]))
