"""In-place semantics against PyTorch: index data changed after the forward pass, views taken
before a write to their base (and writes through a view), and the in-place methods' graph and
dtype rules. Each program runs in both libraries; values, gradients and errors must agree."""
import numpy as np
import pytest
import torch

import minigrad as mg
from minigrad.autograd import gradcheck


def run(lib, program):
    """("ok", what the program returns as nested lists) or ("raises", the exception type's
    name and whether the message says an in-place change broke a backward)."""
    try:
        return "ok", program(lib)
    except (RuntimeError, TypeError, ValueError, IndexError) as e:
        return "raises", type(e).__name__, "modified by an inplace operation" in str(e)


def same_as_torch(program):
    got, expected = run(mg, program), run(torch, program)
    assert got == expected, f"minigrad {got}, PyTorch {expected}"
    return got


# --- index data changed between forward and backward ------------------------------------------

def index_getitem(L, change):
    x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
    idx = L.tensor([0, 1])
    y = x[idx]
    change(idx)
    y.sum().backward()
    return x.grad.tolist()


def index_gather(L, change):
    x = L.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    idx = L.tensor([[0, 1]])
    y = x.gather(1, idx)
    change(idx)
    (y * L.tensor([[1.0, 2.0]])).sum().backward()
    return x.grad.tolist()


def index_select(L, change):
    x = L.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)
    idx = L.tensor([0, 1])
    y = x.index_select(0, idx)
    change(idx)
    y.sum().backward()
    return x.grad.tolist()


def index_scatter(L, change):
    x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
    s = L.tensor([5.0, 6.0], requires_grad=True)
    idx = L.tensor([0, 1])
    y = (x * 1).scatter(0, idx, s)
    change(idx)
    (y * L.tensor([1.0, 2.0, 3.0])).sum().backward()
    return x.grad.tolist(), s.grad.tolist()


def index_add(L, change):
    x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
    s = L.tensor([5.0, 6.0], requires_grad=True)
    idx = L.tensor([0, 1])
    y = (x * 1).index_add(0, idx, s)
    change(idx)
    (y * y).sum().backward()
    return x.grad.tolist(), s.grad.tolist()


def index_add_self_only(L, change):
    """Only the tensor added into needs a gradient, which does not read the index: PyTorch does
    not keep the index then, and a later change of it is fine."""
    x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
    idx = L.tensor([0, 1])
    y = (x * 1).index_add(0, idx, L.tensor([5.0, 6.0]))
    change(idx)
    (y * y).sum().backward()
    return x.grad.tolist()


def index_masked_fill(L, change):
    x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
    mask = L.tensor([True, False, False])
    y = x.masked_fill(mask, 0.0)
    change(mask)
    y.sum().backward()
    return x.grad.tolist()


def index_embedding(L, change):
    """A reused id buffer under gradient accumulation: the second batch's ids must not move
    the first batch's gradient onto its rows."""
    L.manual_seed(0)
    emb = L.nn.Embedding(4, 2)
    ids = L.tensor([0, 1])
    first = emb(ids).sum()
    change(ids)  # the loader writes the next batch into the same buffer
    first.backward()
    return emb.weight.grad.tolist()


def set_first(idx):
    idx[(0,) * idx.ndim] = 2 if idx.dtype != torch.bool and idx.dtype != mg.bool else True


def copy_into(idx):
    idx.copy_(idx.flip(-1) if hasattr(idx, "flip") else idx[..., ::-1])


INDEX_PROGRAMS = [index_getitem, index_gather, index_select, index_scatter, index_add,
                  index_masked_fill, index_embedding]


@pytest.mark.parametrize("program", INDEX_PROGRAMS, ids=lambda p: p.__name__)
def test_an_index_changed_before_backward_raises_as_in_pytorch(program):
    got = same_as_torch(lambda L: program(L, set_first))
    assert got == ("raises", "RuntimeError", True)
    # unchanged, the same programs give PyTorch's gradients
    same_as_torch(lambda L: program(L, lambda idx: None))


def test_an_index_nobody_needs_for_backward_may_change():
    assert same_as_torch(lambda L: index_add_self_only(L, set_first))[0] == "ok"


def test_a_numpy_index_is_copied_when_kept_for_backward():
    """A NumPy array has no version counter: the node keeps a copy, so the gradient goes
    where the forward pass read."""
    x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    idx = np.array([0, 1])
    y = x[idx]
    idx[0] = 2
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 0.0]


# --- views taken before a write to their base, and writes through a view ----------------------

VIEW_PROGRAMS = {
    "slice": lambda L, a: a[0:2],
    "view": lambda L, a: a.view(2, 3),
    "reshape": lambda L, a: a.reshape(3, 2),
    "t": lambda L, a: a.view(2, 3).t(),
    "one element": lambda L, a: a[4],
    "view of a view": lambda L, a: a.view(2, 3)[1],
}
WRITES = {
    "*=": lambda L, a: a.__imul__(2),
    "mul_ by a tensor": lambda L, a: a.mul_(L.arange(float(a.numel())).reshape(a.shape)),
    "a[i] = v": lambda L, a: a.__setitem__(1, 5.0),
    "masked_fill_": lambda L, a: a.masked_fill_(L.arange(a.numel()).reshape(a.shape) % 2 == 0,
                                                0.0),
    "copy_": lambda L, a: a.copy_(L.ones(a.shape) * 3),
    "zero_": lambda L, a: a.zero_(),
}


def view_then_write(L, view, write, use):
    x = L.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], requires_grad=True)
    a = x * 1
    v = view(L, a)
    write(L, a)
    w = L.arange(1.0, v.numel() + 1).reshape(v.shape)
    loss = (v * w).sum() + (a.sum() if use == "both" else 0)
    loss.backward()
    return v.tolist(), a.tolist(), x.grad.tolist()


def write_through_view(L, view, write):
    x = L.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], requires_grad=True)
    y = L.tensor(2.0, requires_grad=True)
    a = x * 1
    v = view(L, a)
    write(L, v)
    v.mul_(y)  # a second write through the same view, with a tensor that needs a gradient
    w = L.arange(1.0, 7.0)
    ((a * w).sum() + v.sum()).backward()
    return a.tolist(), x.grad.tolist(), y.grad.tolist()


@pytest.mark.parametrize("write", list(WRITES))
@pytest.mark.parametrize("view", list(VIEW_PROGRAMS))
def test_a_view_sees_the_graph_of_a_later_write_to_its_base(view, write):
    w = WRITES[write] if write != "a[i] = v" or view != "one element" else WRITES["*="]
    for use in ("view", "both"):
        same_as_torch(lambda L: view_then_write(L, VIEW_PROGRAMS[view], w, use))


@pytest.mark.parametrize("write", ["*=", "mul_ by a tensor", "masked_fill_", "copy_", "zero_"])
@pytest.mark.parametrize("view", list(VIEW_PROGRAMS))
def test_a_write_through_a_view_changes_the_graph_of_its_base(view, write):
    assert same_as_torch(lambda L: write_through_view(L, VIEW_PROGRAMS[view],
                                                      WRITES[write]))[0] == "ok"


def test_a_view_taken_before_its_base_is_written_in_place_sees_the_write():
    def program(L):
        x = L.tensor([1.0, 1.0, 1.0], requires_grad=True)
        a = x * 1
        v = a[0:2]
        a *= 2
        v.sum().backward()
        return x.grad.tolist()
    assert same_as_torch(program) == ("ok", [2.0, 2.0, 0.0])


def test_writing_a_view_of_a_leaf_that_requires_grad_raises():
    def program(L):
        x = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        x[0:2].mul_(2)
    assert same_as_torch(program)[0] == "raises"


def test_copy_slices_gradcheck():
    rng = np.random.default_rng(0)
    base = mg.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    values = mg.tensor(rng.standard_normal((4, 2)), requires_grad=True)
    chain = ((mg.ops.Permute, {"dims": (1, 0)}),
             (mg.ops.GetItem, {"index": (slice(None), slice(1, 3))}))
    assert gradcheck(lambda b, v: mg.ops.CopySlices.apply(b, v, chain=chain), [base, values])


def test_fill_diagonal_gradcheck(torch):
    """The write through a wrapped tall matrix and through a view of its rows: the gradient
    reaches every element but the ones written (6 wrapped, 3 more through the view), as in
    PyTorch."""
    data = np.random.default_rng(1).standard_normal((7, 3))

    def fill(x):
        y = (x * x).fill_diagonal_(0.5, wrap=True)
        y[2:].fill_diagonal_(-1.0)
        return y

    assert gradcheck(fill, [mg.tensor(data, requires_grad=True)])
    x = mg.tensor(data, requires_grad=True)
    fill(x).sum().backward()
    expected = torch.tensor(data, requires_grad=True)
    fill(expected).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), expected.grad.numpy())
    assert (x.grad.numpy() == 0).sum() == 9


# --- the in-place methods: a tensor operand's graph, dtypes, leaves ----------------------------

METHODS = {
    "add_": lambda b, y: b.add_(y, alpha=3),
    "sub_": lambda b, y: b.sub_(y),
    "mul_": lambda b, y: b.mul_(y),
    "div_": lambda b, y: b.div_(y),
    "copy_": lambda b, y: b.copy_(y * 2),
    "copy_ of a leaf": lambda b, y: b.copy_(y),
    "copy_ of a row": lambda b, y: b.view(1, 2).copy_(y[None]),
    "fill_": lambda b, y: b.fill_(y[0]),
    "+=": lambda b, y: b.__iadd__(y),
}


@pytest.mark.parametrize("name", list(METHODS))
def test_an_in_place_method_keeps_its_operands_graph(name):
    def program(L):
        y = L.tensor([1.0, 2.0], requires_grad=True)
        b = L.tensor([3.0, 4.0])
        METHODS[name](b, y)
        (b * b).sum().backward()
        return b.tolist(), y.grad.tolist()
    assert same_as_torch(program)[0] == "ok"


@pytest.mark.parametrize("program", [
    lambda L: L.tensor([1, 3]).add_(0.5).tolist(),
    lambda L: L.tensor([1, 3]).mul_(L.tensor([0.5, 1.0])).tolist(),
    lambda L: L.tensor([1, 3]).div_(2).tolist(),
    lambda L: L.tensor([True, False]).add_(1).tolist(),
    lambda L: L.tensor([1, 3]).copy_(L.tensor([0.5, 2.7])).tolist(),  # copy_ converts
    lambda L: L.tensor([1, 3]).fill_(2.5).tolist(),                   # and so does fill_
    lambda L: L.tensor([1.0, 3.0]).add_(L.tensor([[1.0, 2.0]])).tolist(),  # output shape
    lambda L: L.tensor([1.0, 3.0], requires_grad=True).add_(1).tolist(),   # a leaf
    lambda L: L.tensor([1.0, 3.0], requires_grad=True).copy_(L.ones(2)).tolist(),
], ids=["int add_ float", "int mul_ float tensor", "int div_", "bool add_ int", "int copy_",
        "int fill_ float", "output shape", "leaf add_", "leaf copy_"])
def test_in_place_dtype_shape_and_leaf_rules(program):
    same_as_torch(program)


def test_in_place_on_a_leaf_is_fine_under_no_grad():
    def program(L):
        x = L.tensor([1.0, 3.0], requires_grad=True)
        with L.no_grad():
            x.add_(1).mul_(L.tensor([2.0, 2.0]))
        return x.tolist(), x.is_leaf, x.grad_fn is None
    assert same_as_torch(program) == ("ok", ([4.0, 8.0], True, True))
