"""Error messages: each names the op and the values that were wrong."""
import numpy as np
import pytest

import minigrad as mg
from minigrad import ops
from helpers import raises


# --- matmul ---------------------------------------------------------------------------------

def test_matmul_inner_dimensions():
    a, b = mg.zeros(2, 3), mg.zeros(4, 5)
    with raises(ValueError,
                "matmul: cannot multiply (2, 3) by (4, 5): inner dimensions 3 and 4 differ"):
        a @ b
    with raises(ValueError, "matmul: cannot multiply (2, 3) by (4, 5)"):
        mg.matmul(a, b)
    with raises(ValueError, "matmul: cannot multiply (2, 3) by (4, 5)"):
        a.matmul(b)


@pytest.mark.parametrize("sa, sb, k1, k2", [
    ((3,), (4,), 3, 4), ((3,), (4, 2), 3, 4), ((2, 3), (4,), 3, 4),
    ((5, 2, 3), (4, 2), 3, 4), ((2, 3), (5, 4, 2), 3, 4),
])
def test_matmul_inner_dimensions_all_ranks(sa, sb, k1, k2):
    with raises(ValueError, f"matmul: cannot multiply {sa} by {sb}: inner dimensions {k1} "
                            f"and {k2} differ"):
        mg.zeros(*sa) @ mg.zeros(*sb)


def test_matmul_scalar_operand():
    with raises(ValueError, "matmul: both operands need at least 1 dim"):
        mg.tensor(2.0) @ mg.zeros(3)


def test_matmul_batch_dims_that_do_not_broadcast():
    with pytest.raises(ValueError) as info:
        mg.zeros(2, 3, 4) @ mg.zeros(5, 4, 6)
    msg = str(info.value)
    assert msg.startswith("matmul")
    assert "(2, 3, 4)" in msg and "(5, 4, 6)" in msg


def test_matmul_dtype_mismatch():
    with raises(TypeError, "matmul: operands have different dtypes float32 and float64"):
        mg.zeros(2, 3) @ mg.zeros(3, 2, dtype=mg.float64)


# --- broadcasting ---------------------------------------------------------------------------

@pytest.mark.parametrize("name, fn", [
    ("add", lambda a, b: a + b), ("sub", lambda a, b: a - b), ("mul", lambda a, b: a * b),
    ("div", lambda a, b: a / b), ("pow", lambda a, b: a ** b),
    ("maximum", lambda a, b: a.maximum(b)), ("minimum", lambda a, b: mg.minimum(a, b)),
])
def test_broadcast_errors_name_op_and_shapes(name, fn):
    a, b = mg.ones(2, 3), mg.ones(4)
    with raises(ValueError, f"{name}: shapes (2, 3) and (4,) cannot be broadcast together"):
        fn(a, b)
    with raises(ValueError, f"{name}: shapes (4,) and (2, 3) cannot be broadcast together"):
        fn(b, a)


def test_broadcast_error_with_array_operand():
    with raises(ValueError, "add: shapes (2, 3) and (4,) cannot be broadcast together"):
        mg.ones(2, 3) + np.ones(4, dtype=np.float32)
    with raises(ValueError, "mul: shapes (4,) and (2, 3) cannot be broadcast together"):
        np.ones(4, dtype=np.float32) * mg.ones(2, 3)


def test_broadcast_error_with_grad_and_no_grad():
    a = mg.ones(2, 3, requires_grad=True)
    with raises(ValueError, "sub: shapes (2, 3) and (3, 2) cannot be broadcast together"):
        a - mg.ones(3, 2)
    with mg.no_grad():
        with raises(ValueError, "sub: shapes (2, 3) and (3, 2)"):
            a - mg.ones(3, 2)


def test_where_broadcast_error_names_op():
    with pytest.raises(ValueError) as info:
        mg.where(mg.tensor([True, False]), mg.ones(3), mg.ones(3))
    assert str(info.value).startswith("where")
    assert "(2,)" in str(info.value) and "(3,)" in str(info.value)


def test_where_condition_must_be_bool():
    with raises(TypeError, "where: condition must be a bool tensor, got dtype int64"):
        mg.where(mg.tensor([1, 0]), mg.ones(2), mg.zeros(2))


def test_expand_error():
    with raises(ValueError, "expand: cannot expand shape (2, 3) to (4, 3)"):
        mg.ones(2, 3).expand(4, 3)


@pytest.mark.parametrize("shape, sizes, message", [
    ((3,), (-1, 3), "expand: size -1 is not allowed for a new leading dim (expanding shape (3,) "
                    "to (-1, 3))"),
    ((2, 1), (-1, -1, 4), "expand: size -1 is not allowed for a new leading dim"),
    ((2, 1), (3,), "expand: 1 sizes (3,) given for a tensor of shape (2, 1); give at least one "
                   "per dim"),
])
def test_expand_sizes_refused_as_pytorch_refuses_them(torch, shape, sizes, message):
    with pytest.raises(RuntimeError):
        torch.ones(shape).expand(*sizes)
    with raises(ValueError, message):
        mg.ones(*shape).expand(*sizes)


def test_copy_shape_mismatch():
    t = mg.zeros(2, 3)
    with raises(ValueError,
                "copy_: source of shape minigrad.Size([2, 2, 3]) does not fit a tensor of shape minigrad.Size([2, 3])"):
        t.copy_(np.zeros((2, 2, 3)))
    with raises(ValueError, "copy_: source of shape minigrad.Size([4]) does not fit a tensor of shape minigrad.Size([2, 3])"):
        t.copy_(np.zeros(4))


# --- reshape and dims -----------------------------------------------------------------------

def test_reshape_error():
    with raises(ValueError, "reshape: cannot reshape a tensor of shape (2, 3) (6 elements) "
                            "into (4,)"):
        mg.zeros(2, 3).reshape(4)
    with raises(ValueError, "reshape: cannot reshape a tensor of shape (2, 3) (6 elements) "
                            "into (4, -1)"):
        mg.zeros(2, 3).view(4, -1)


@pytest.mark.parametrize("name, call", [
    ("sum", lambda t: t.sum(dim=5)),
    ("mean", lambda t: t.mean(dim=5)),
    ("amax", lambda t: t.amax(dim=5)),
    ("amin", lambda t: t.amin(dim=5)),
    ("var", lambda t: t.var(dim=5)),
    ("logsumexp", lambda t: t.logsumexp(dim=5)),
    ("softmax", lambda t: t.softmax(dim=5)),
    ("log_softmax", lambda t: t.log_softmax(dim=5)),
    ("argmax", lambda t: t.argmax(dim=5)),
    ("argmin", lambda t: t.argmin(dim=5)),
    ("transpose", lambda t: t.transpose(0, 5)),
    ("unsqueeze", lambda t: t.unsqueeze(5)),
    ("flatten", lambda t: t.flatten(5)),
    ("split", lambda t: t.split(1, dim=5)),
    ("chunk", lambda t: t.chunk(2, dim=5)),
    ("size", lambda t: t.size(5)),
    ("permute", lambda t: t.permute(0, 5)),
    ("cat", lambda t: mg.cat([t, t], dim=5)),
    ("gather", lambda t: t.gather(5, mg.zeros(2, 3, dtype=mg.int64))),
    ("index_select", lambda t: t.index_select(5, mg.tensor([0]))),
])
def test_bad_dim_names_op_and_range(name, call):
    t = mg.ones(2, 3)
    nd = 3 if name == "unsqueeze" else 2  # unsqueeze may insert after the last dim
    expected = (f"{name}: dim 5 is out of range for a tensor with {nd} dims "
                f"(expected a value in [{-nd}, {nd - 1}])")
    with raises(IndexError, expected):
        call(t)


def test_bad_negative_dim_and_stack_dim():
    with raises(IndexError, "sum: dim -3 is out of range for a tensor with 2 dims "
                            "(expected a value in [-2, 1])"):
        mg.ones(2, 3).sum(dim=(0, -3))
    with raises(IndexError, "stack: dim 4 is out of range for a tensor with 3 dims"):
        mg.stack([mg.ones(2, 3), mg.ones(2, 3)], dim=4)


def test_repeated_dim():
    with raises(ValueError, "sum: dim (1, -1) names the same dimension twice"):
        mg.ones(2, 3).sum(dim=(1, -1))


def test_permute_not_a_permutation():
    with raises(ValueError, "permute: dims (0, 0) are not a permutation of the 2 dims of a "
                            "tensor of shape (2, 3)"):
        mg.ones(2, 3).permute(0, 0)


def test_split_sizes_must_add_up():
    with raises(ValueError, "split: sizes [1, 1] do not add up to 3, the size of dim 1"):
        mg.ones(2, 3).split([1, 1], dim=1)


def test_amax_of_empty():
    with raises(ValueError, "amax: cannot reduce an empty tensor of shape (0,)"):
        mg.zeros(0).amax()


# --- indexing -------------------------------------------------------------------------------

@pytest.mark.parametrize("index, text", [
    (5, "index: index 5 is out of range for dim 0 of size 3 (tensor shape (3, 4))"),
    (-4, "index: index -4 is out of range for dim 0 of size 3 (tensor shape (3, 4))"),
    ((0, 4), "index: index 4 is out of range for dim 1 of size 4 (tensor shape (3, 4))"),
    ((slice(None), 7), "index: index 7 is out of range for dim 1 of size 4"),
    ((Ellipsis, 9), "index: index 9 is out of range for dim 1 of size 4"),
    ((None, 3), "index: index 3 is out of range for dim 0 of size 3"),
    ([0, 3], "index: index 3 is out of range for dim 0 of size 3"),
    ((np.array([1, 2]), np.array([0, 6])), "index: index 6 is out of range for dim 1 of size 4"),
    ((0, 0, 0), "index: too many indices for a tensor of shape (3, 4)"),
])
def test_index_out_of_range(index, text):
    t = mg.zeros(3, 4, requires_grad=True)
    with raises(IndexError, text):
        t[index]


def test_gather_out_of_range():
    t = mg.zeros(2, 3)
    with raises(IndexError, "gather: index out of range for dim 1 of size 3"):
        t.gather(1, mg.tensor([[0, 3], [1, 1]]))
    with raises(ValueError, "gather: index has 1 dims but the input of shape (2, 3) has 2"):
        t.gather(1, mg.tensor([0, 1]))


def test_index_select_out_of_range():
    t = mg.zeros(2, 3)
    with raises(IndexError, "index_select: index 3 is out of range for dim 1 of size 3"):
        t.index_select(1, mg.tensor([0, 3]))
    with raises(IndexError, "index_select: index -3 is out of range for dim 0 of size 2"):
        t.index_select(0, mg.tensor([-3]))
    with raises(ValueError, "index_select: index must be 1-D, got shape (1, 2)"):
        t.index_select(0, mg.tensor([[0, 1]]))


def test_embedding_out_of_range():
    w = mg.zeros(5, 2, requires_grad=True)
    with raises(IndexError, "embedding: id 7 is out of range for a table of 5 rows"):
        ops.Embedding.apply(w, ids=np.array([[1, 7]]))
    with raises(IndexError, "embedding: id -1 is out of range for a table of 5 rows"):
        ops.Embedding.apply(w, ids=np.array([-1, 2]))
    with raises(TypeError, "embedding: ids must be integers, got dtype float64"):
        ops.Embedding.apply(w, ids=np.array([1.0]))


# --- cat / stack ----------------------------------------------------------------------------

def test_cat_shape_mismatch():
    with raises(ValueError, "cat: tensor 1 has shape (2, 4), which does not match (3, 3) "
                            "except in dim 1"):
        mg.cat([mg.zeros(3, 3), mg.zeros(2, 4)], dim=1)
    with raises(ValueError, "cat: tensor 2 has shape (3,), which does not match (3, 3) "
                            "except in dim 0"):
        mg.cat([mg.zeros(3, 3), mg.zeros(1, 3), mg.zeros(3)])
    with raises(ValueError, "cat: expected a non-empty sequence of tensors"):
        mg.cat([])


def test_stack_shape_mismatch():
    with raises(ValueError, "stack: tensor 1 has shape (2, 4) but tensor 0 has (2, 3); all "
                            "must be equal"):
        mg.stack([mg.zeros(2, 3), mg.zeros(2, 4)])
    with raises(ValueError, "stack: expected a non-empty sequence of tensors"):
        mg.stack([])


# --- dtypes and grads -----------------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda: mg.tensor([1, 2], requires_grad=True),
    lambda: mg.tensor([True], requires_grad=True),
    lambda: mg.zeros(2, dtype=mg.int64, requires_grad=True),
    lambda: mg.ones(2, dtype=mg.int32, requires_grad=True),
    lambda: mg.arange(3, requires_grad=True),
    lambda: mg.full((2,), 3, requires_grad=True),
])
def test_requires_grad_on_integer_tensors(make):
    with pytest.raises(TypeError, match=r"(int64|int32|bool)"):
        make()


def test_requires_grad_messages():
    with raises(TypeError, "tensor: only floating point tensors can require gradients, got "
                           "dtype int64"):
        mg.tensor([1, 2], requires_grad=True)
    with raises(TypeError, "requires_grad_: only floating point tensors can require gradients, "
                           "got dtype int64"):
        mg.tensor([1, 2]).requires_grad_()


def test_item_on_non_scalar():
    with raises(ValueError, "item: only a tensor with one element can be converted to a Python "
                            "number, this one has shape minigrad.Size([2, 2])"):
        mg.zeros(2, 2).item()
    with raises(ValueError, "this one has shape minigrad.Size([0])"):
        mg.zeros(0).item()
    with pytest.raises(ValueError, match="item"):
        float(mg.zeros(3))


def test_len_of_scalar():
    with raises(TypeError, "len() of a 0-d tensor"):
        len(mg.tensor(1.0))


def test_masked_fill_non_bool_mask():
    t = mg.zeros(2, 2)
    with raises(TypeError, "masked_fill: mask must be a bool tensor, got int64"):
        t.masked_fill(mg.tensor([[1, 0], [0, 1]]), 1.0)
    with raises(TypeError, "masked_fill: mask must be a bool tensor, got float32"):
        mg.masked_fill(t, mg.ones(2, 2), 1.0)


def test_masked_fill_mask_shape():
    with raises(ValueError, "masked_fill: mask of shape (3,) does not broadcast to the tensor's "
                            "shape (2, 2)"):
        mg.zeros(2, 2).masked_fill(mg.tensor([True, False, True]), 0.0)
    with raises(ValueError, "masked_fill: mask of shape (2, 2, 2) does not broadcast to the "
                            "tensor's shape (2, 2)"):
        mg.zeros(2, 2).masked_fill(mg.ones(2, 2, 2) > 0, 0.0)


@pytest.mark.parametrize("p", [1.0, -0.1, 1.5])
def test_dropout_p_out_of_range(p):
    with raises(ValueError, f"dropout: p must be in [0, 1), got {p}"):
        mg.dropout(mg.ones(3), p)
    with raises(ValueError, f"dropout: p must be in [0, 1), got {p}"):
        mg.dropout(mg.ones(3), p, training=False)


@pytest.mark.parametrize("idx, n, text", [
    ([0, 3], 3, "one_hot: indices must be in [0, 3), got values from 0 to 3"),
    ([-1, 2], 4, "one_hot: indices must be in [0, 4), got values from -1 to 2"),
    ([[5]], 2, "one_hot: indices must be in [0, 2), got values from 5 to 5"),
])
def test_one_hot_out_of_range(idx, n, text):
    with raises(ValueError, text):
        mg.one_hot(mg.tensor(idx), n)


def test_one_hot_non_integer():
    with raises(TypeError, "one_hot: indices must be integers, got dtype float32"):
        mg.one_hot(mg.tensor([1.0]), 3)


def test_gelu_bad_approximate():
    with raises(ValueError, "gelu: approximate must be 'none' or 'tanh', got 'fast'"):
        mg.ones(2).gelu(approximate="fast")


def test_backward_errors():
    with raises(RuntimeError, "backward: this tensor does not require grad"):
        mg.ones(2).sum().backward()
    x = mg.ones(2, 3, requires_grad=True)
    with raises(RuntimeError, "backward: grad can be implicitly created only for scalar outputs, "
                              "this one has shape minigrad.Size([2, 3])"):
        (x * 2).backward()
    with raises(ValueError, "backward: gradient has shape (3, 2) but the tensor has "
                "shape minigrad.Size([2, 3])"):
        (x * 2).backward(np.ones((3, 2)))


def test_inplace_error_message():
    w = mg.ones(2, requires_grad=True)
    with raises(RuntimeError, "add_: a leaf Variable that requires grad is being used in an "
                              "in-place operation. (A graph is being recorded: wrap the update "
                              "in minigrad.no_grad().)"):
        w.add_(1.0)


def test_gradcheck_needs_float64():
    with raises(TypeError, "gradcheck: input 0 has dtype float32; use float64"):
        mg.autograd.gradcheck(lambda t: t * 2, [mg.ones(2, requires_grad=True)])
