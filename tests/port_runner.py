"""Runs a port program (written once, in ordinary PyTorch style, as `program(torch, ...)`)
with the real PyTorch and with minigrad passed in its place, from the same initial weights.

The PyTorch run draws the weights and returns them; the minigrad run loads them before it
trains. Data and batch order come from NumPy, outside the program, because the two libraries'
random streams differ (see docs/pytorch-api.md); everything else is the program's own code.
"""
import numpy as np

import minigrad


def run_both(program, torch, *args, **kwargs):
    """(PyTorch's result, minigrad's result); each is what the program returns."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # one thread each: the comparison, not the speed, is tested
    try:
        expected = program(torch, *args, **kwargs)
    finally:
        torch.set_num_threads(threads)
    got = program(minigrad, *args, init=expected["init"], **kwargs)
    return expected, got


def state_numpy(model):
    """A state dict as NumPy arrays: the form both libraries can load from (a module's extra
    state, which is not a tensor, as it is)."""
    return {k: v.detach().numpy().copy() if hasattr(v, "detach") else v
            for k, v in model.state_dict().items()}


def side_by_side(name, expected, got, every=1):
    """A printable table of the two loss curves (shown by `pytest -s`)."""
    rows = [f"{name}: step  PyTorch    minigrad   |diff|"]
    for i in range(0, len(expected), every):
        rows.append(f"{name}: {i:4d}  {expected[i]:.6f}  {got[i]:.6f}  {abs(expected[i] - got[i]):.1e}")
    return "\n".join(rows)


def assert_curves_match(name, expected, got, rtol, every=1):
    print("\n" + side_by_side(name, expected, got, every))
    assert len(got) == len(expected)
    np.testing.assert_allclose(got, expected, rtol=rtol, err_msg=name)


def assert_states_match(expected, got, rtol, atol, zero_gradient=()):
    """Two state dicts (as from state_numpy) agree, entry by entry, but for the entries
    named in `zero_gradient`: parameters whose gradient is zero up to rounding (a bias just
    before a BatchNorm, which subtracts it again), which Adam moves by each library's rounding.

    The key bias of an attention's in_proj_bias (its middle third) adds the same q.b_k to
    every score of a query, which softmax cancels: its gradient is zero up to rounding, and
    Adam turns each library's rounding into steps of about lr. Only the query and value
    thirds of it are compared."""
    assert sorted(got) == sorted(expected)
    for key, want in expected.items():
        if key in zero_gradient:
            continue
        have = got[key]
        if key.endswith("in_proj_bias"):
            third = len(want) // 3
            key_third = slice(third, 2 * third)
            want, have = np.delete(want, key_third), np.delete(have, key_third)
        np.testing.assert_allclose(have, want, rtol=rtol, atol=atol, err_msg=key)
