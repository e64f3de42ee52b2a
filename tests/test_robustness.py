"""Nothing lost, nothing silently wrong: the guarantees, one test each.

Read the test names as the list of promises:

  numbers          a loss never broadcasts a target of the wrong shape; gather and index_select
                   never wrap a negative index; softmax over nothing is an error naming the op
  state            load_state_dict (modules, optimizers, schedulers) loads all or nothing
  training runs    Ctrl-C (or SIGTERM) at any moment of a step, then --resume, gives the same
                   losses and weights, to the bit, as a run never interrupted; one directory
                   holds one run (a lock naming the holder, recovered when stale); a checkpoint
                   is one file; --overwrite starts afresh; temporary files of killed saves are
                   removed; a torn metrics line is skipped; --resume refuses changed settings
  the command      every error is one line, never a traceback (bad flags, NaN losses, crafted
                   checkpoints, memory estimates, empty sentences, odd TSV files)

The interrupt and concurrency tests run real processes and send real signals.
"""
import re

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn, optim
from minigrad.optim.lr_scheduler import StepLR, WarmupScheduler


def raises(exc, text):
    return pytest.raises(exc, match=re.escape(text))


# --- numbers --------------------------------------------------------------------------------

def test_loss_target_shapes_follow_pytorch_or_fail_clearly():
    logits = mg.randn(4, 3)
    ids = np.array([0, 2, 1, 1])
    # (N, 1) used to broadcast inside the fused op: a (4, 4) "none" loss, a wrong mean
    with raises(ValueError, "cross_entropy: input of shape (4, 3) and target of shape (4, 1) "
                            "do not match: class ids for this input have shape (4,)"):
        F.cross_entropy(logits, ids[:, None])
    with raises(ValueError, "nll_loss: input of shape (4, 3) and target of shape (1, 4)"):
        F.nll_loss(logits.log_softmax(-1), ids[None])
    with raises(ValueError, "target of shape (4, 3, 1) do not match"):
        F.cross_entropy(mg.randn(4, 5, 3), np.zeros((4, 3, 1), np.int64))
    with raises(ValueError, "input of shape (3,) and target of shape (2,)"):
        F.cross_entropy(mg.randn(3), np.array([0, 1]))
    with raises(TypeError, "cross_entropy: target must hold class ids (integers) of shape (4,)"):
        F.cross_entropy(logits, ids.astype(np.float32))  # float and not the input's shape
    with raises(IndexError, "nll_loss: target 3 is out of range for 3 classes"):
        F.nll_loss(logits, np.array([0, 3, 1, 1]))
    with raises(ValueError, "pos_weight of shape (2, 3) does not broadcast"):
        F.binary_cross_entropy_with_logits(mg.randn(3), mg.zeros(3), pos_weight=mg.ones(2, 3))
    # the layouts PyTorch accepts all work: (C,) with () or (1,), (N, C, d) with (N, d),
    # and class probabilities of the input's shape
    assert F.cross_entropy(mg.randn(3), np.array([1])).shape == ()
    assert F.nll_loss(mg.randn(2, 3, 5), np.zeros((2, 5), np.int64), reduction="none").shape \
        == (2, 5)
    probs = np.full((4, 3), 1 / 3, np.float32)
    assert F.cross_entropy(logits, probs, reduction="none").shape == (4,)


def test_gather_and_index_select_refuse_negative_and_float_indices():
    x = mg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    with raises(IndexError, "gather: index out of range for dim 1 of size 3 (got -1)"):
        x.gather(1, np.array([[-1], [0]]))  # used to read the last column silently
    with raises(TypeError, "gather: index must hold integers, got dtype float64"):
        x.gather(1, np.array([[0.7], [0.0]]))
    with raises(ValueError, "gather: index of shape (3, 1) is larger than the input of shape "
                            "(2, 3) at dim 0"):
        x.gather(1, np.zeros((3, 1), np.int64))
    with raises(IndexError, "index_select: index -1 is out of range for dim 0 of size 2"):
        x.index_select(0, np.array([-1]))
    with raises(TypeError, "index_select: index must hold integers, got dtype bool"):
        x.index_select(0, np.array([True, False]))


def test_softmax_over_an_empty_dim_names_the_op():
    for op in ("softmax", "log_softmax"):
        with raises(ValueError, f"{op}: dim -1 of the input of shape (2, 0) has size 0"):
            getattr(mg.zeros(2, 0), op)(-1)
        assert getattr(mg.zeros(0, 3), op)(-1).shape == (0, 3)  # an empty batch is fine
    attn = nn.MultiheadAttention(8, 2, batch_first=True)
    q, kv = mg.randn(1, 3, 8), mg.zeros(1, 0, 8)
    with raises(ValueError, "softmax: dim -1 of the input of shape (1, 2, 3, 0) has size 0"):
        attn(q, kv, kv)  # attention with zero keys


# --- state ----------------------------------------------------------------------------------

def _snapshot(tensors):
    return [t.numpy().copy() for t in tensors]


def test_load_state_dict_is_all_or_nothing():
    mg.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2))
    before = _snapshot(model.parameters())
    good = {k: v.numpy() + 1 for k, v in model.state_dict().items()}
    for key, value, problem in [
            ("1.bias", np.array(["a", "b"]), "1.bias: checkpoint dtype <U1 cannot be stored in "
                                             "float32"),
            ("1.bias", np.array([1e300, 0.0]), "1.bias: float64 values overflow float32"),
            ("1.bias", np.array([1 + 2j, 0]), "cannot be stored in float32"),
            ("1.weight", np.zeros((2, 5)), "checkpoint shape (2, 5), model shape (2, 4)")]:
        with raises(RuntimeError, problem):
            model.load_state_dict({**good, key: value})
        for a, b in zip(before, model.parameters()):  # the earlier keys were not copied
            np.testing.assert_array_equal(a, b.numpy())
    model.load_state_dict(good)
    np.testing.assert_array_equal(model[0].weight.numpy(), before[0] + 1)

    opt = optim.Adam(model.parameters(), lr=0.1)
    sum(p.sum() for p in model.parameters()).backward()
    opt.step()
    saved = opt.state_dict()
    opt.step()
    after_two = {k: v["exp_avg"].numpy().copy() for k, v in opt.state_dict()["state"].items()}
    broken = opt.state_dict()
    broken["state"][3]["exp_avg"] = np.array(["x", "y"])  # the last parameter's state
    with raises(ValueError, "Adam.load_state_dict: state 'exp_avg' has dtype <U1"):
        opt.load_state_dict(broken)
    bad_lr = {**saved, "param_groups": [{**saved["param_groups"][0], "lr": -1.0}]}
    with raises(ValueError, "Adam: invalid learning rate: -1.0"):
        opt.load_state_dict(bad_lr)
    for k, v in opt.state_dict()["state"].items():  # still the state after two steps
        np.testing.assert_array_equal(v["exp_avg"].numpy(), after_two[k])
        assert v["step"] == 2
    assert opt.param_groups[0]["lr"] == 0.1

    sched = StepLR(opt, step_size=2)
    for bad, problem in [({**sched.state_dict(), "last_epoch": "3"}, "'last_epoch' should be"),
                         ({**sched.state_dict(), "gama": 0.5}, "unknown key 'gama'"),
                         ({**sched.state_dict(), "base_lrs": [0.1, 0.2]}, "'base_lrs' should")]:
        with raises(ValueError, problem):
            sched.load_state_dict(bad)
        assert sched.last_epoch == 0 and sched.base_lrs == [0.1]
    warm = WarmupScheduler(opt, d_model=16, warmup_steps=4)
    with raises(ValueError, "'last_epoch' must be a whole number >= -1, got 2.5"):
        warm.load_state_dict({**warm.state_dict(), "last_epoch": 2.5})
