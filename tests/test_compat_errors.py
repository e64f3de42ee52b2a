"""Bad input to the PyTorch-compatible API gives one clear error naming the operation and the
values involved, never a silently wrong result: randint's forms, devices, dtypes NumPy lacks,
sampling, scatter and in-place writes."""
import numpy as np
import pytest

import minigrad as mg


# --- randint ----------------------------------------------------------------------------------

@pytest.mark.parametrize("args, kwargs, low, high, shape", [
    ((2, (10,)), {}, 0, 2, (10,)),         # randint(high, size): once read as low=2, high=(10,)
    ((3, 7, (2, 3)), {}, 3, 7, (2, 3)),
    ((5,), {"size": (4,)}, 0, 5, (4,)),
    ((1, 5), {"size": (2, 2)}, 1, 5, (2, 2)),
    ((), {"high": 5, "size": (3,)}, 0, 5, (3,)),
    ((), {"low": 2, "high": 5, "size": (3,)}, 2, 5, (3,)),
    ((5,), {"high": 9, "size": (3,)}, 5, 9, (3,)),
    ((4, ()), {}, 0, 4, ()),
    ((4, [2, 2]), {}, 0, 4, (2, 2)),
])
def test_randint_forms_give_pytorchs_shapes(args, kwargs, low, high, shape, torch):
    assert tuple(torch.randint(*args, **kwargs).shape) == shape
    mg.manual_seed(0)
    r = mg.randint(*args, **kwargs)
    assert r.shape == shape and r.dtype == np.int64
    assert (r.numpy() >= low).all() and (r.numpy() < high).all()


def test_randint_values_cover_the_range():
    mg.manual_seed(1)
    assert set(mg.randint(2, (200,)).tolist()) == {0, 1}
    assert set(mg.randint(3, 6, (300,)).tolist()) == {3, 4, 5}
    assert mg.randint(5, (3,), dtype=mg.float32).dtype == np.float32


@pytest.mark.parametrize("call, message", [
    (lambda: mg.randint(2, 10), r"randint\(2, 10\): two numbers and no size is ambiguous"),
    (lambda: mg.randint(10), "size must be a tuple and is required, got no size"),
    (lambda: mg.randint(0, 10, 5), "size must be a tuple and is required, got size 5"),
    (lambda: mg.randint(1, 2, 3, (4,)), "expected high, or low and high"),
    (lambda: mg.randint(2.5, (3,)), "low and high must be ints"),
    (lambda: mg.randint(5, 5, (3,)), r"high \(5\) must be greater than low \(5\)"),
    (lambda: mg.randint(low=2, size=(3,)), "expected high"),
])
def test_randint_rejects_ambiguous_or_bad_calls(call, message, torch):
    with pytest.raises((TypeError, ValueError), match=message):
        call()


# --- devices and dtypes -----------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda: mg.zeros(2, device="cuda"),
    lambda: mg.tensor([1.0], device=mg.device("cuda", 0)),
    lambda: mg.ones(2).to("cuda:0"),
    lambda: mg.ones(2).to(mg.device("mps")),
    lambda: mg.ones(2).cuda(),
    lambda: mg.randn(2, device="cuda"),
    lambda: mg.Generator(device="cuda"),
    lambda: mg.load("unused.npz", map_location="cuda"),
    lambda: mg.load("unused.npz", map_location={"cpu": "cuda:0"}),
])
def test_a_gpu_device_is_one_clear_error(call):
    with pytest.raises(RuntimeError, match="minigrad runs on the CPU only, so device '(cuda|mps)"):
        call()


def test_cpu_devices_are_accepted_everywhere():
    cpu = mg.device("cpu")
    x = mg.zeros(2, device=cpu) + mg.ones(2, device="cpu:0")
    assert x.to("cpu") is x and x.to(cpu, mg.float64).dtype == np.float64
    assert x.to(device="cpu", dtype=mg.int64).dtype == np.int64
    assert x.to("cpu", copy=True) is not x and x.cpu() is x
    assert str(x.device) == "cpu" and repr(cpu) == "device(type='cpu')"
    assert mg.device("cuda", 1) == mg.device("cuda:1") and mg.device("cpu") != "cpu"
    with pytest.raises(ValueError, match="unknown device type 'gpu'"):
        mg.device("gpu")


@pytest.mark.parametrize("call", [
    lambda: mg.zeros(2, dtype=mg.bfloat16),
    lambda: mg.tensor([1.0], dtype=mg.bfloat16),
    lambda: mg.ones(2).to(mg.bfloat16),
    lambda: mg.ones(2).to("cpu", mg.bfloat16),
    lambda: mg.nn.Linear(2, 2).to(mg.bfloat16),
    lambda: mg.full((2,), 1.0, dtype=mg.bfloat16),
])
def test_bfloat16_is_one_clear_error_naming_what_to_use(call):
    with pytest.raises(TypeError, match="dtype minigrad.bfloat16: .* NumPy has no bfloat16; "
                                        "use float32"):
        call()


def test_other_missing_dtypes_name_themselves():
    for dt, name in [(mg.float8_e4m3fn, "float8_e4m3fn"), (mg.complex32, "complex32")]:
        with pytest.raises(TypeError, match=f"NumPy has no {name}"):
            mg.zeros(1, dtype=dt)


def test_type_names_and_conversions():
    x = mg.tensor([1.5, -2.5])
    assert x.type() == "minigrad.FloatTensor" and x.long().type() == "minigrad.LongTensor"
    assert x.type(mg.LongTensor).tolist() == [1, -2]
    with pytest.raises(ValueError, match="unknown tensor type 'torch.FooTensor'"):
        x.type("torch.FooTensor")


# --- sampling ---------------------------------------------------------------------------------

@pytest.mark.parametrize("probs, n, replacement, message", [
    ([0.5, -0.1, 0.6], 1, True, "finite and non-negative"),
    ([0.5, float("nan")], 1, True, "finite and non-negative"),
    ([[0.0, 0.0], [1.0, 0.0]], 1, True, "positive total weight"),
    ([0.5, 0.5], 3, False, "cannot draw 3 samples without replacement from 2 categories"),
    ([0.5, 0.0, 0.5], 3, False, "fewer than 3 categories of nonzero weight"),
    ([0.5, 0.5], 0, True, "num_samples must be a positive int"),
    ([[[1.0]]], 1, True, "must be 1-D or 2-D"),
    ([], 1, False, "positive total weight"),
    ([1.0, float("inf")], 1, False, "finite and non-negative"),
])
def test_multinomial_rejects_bad_weights(probs, n, replacement, message):
    with pytest.raises(ValueError, match=message):
        mg.multinomial(mg.tensor(probs), n, replacement)


def test_multinomial_draws_in_proportion_and_never_a_zero_weight():
    g = mg.Generator().manual_seed(0)
    p = mg.tensor([0.1, 0.0, 0.6, 0.3])
    draws = mg.multinomial(p, 20000, replacement=True, generator=g).numpy()
    freq = np.bincount(draws, minlength=4) / draws.size
    np.testing.assert_allclose(freq, [0.1, 0.0, 0.6, 0.3], atol=0.015)
    rows = mg.multinomial(mg.tensor([[1.0, 0.0, 2.0, 1.0]] * 500), 3, generator=g).numpy()
    assert (np.sort(rows, 1) == [0, 2, 3]).all()  # without replacement: each once, never 1
    first = np.bincount(rows[:, 0], minlength=4) / 500
    np.testing.assert_allclose(first, [0.25, 0.0, 0.5, 0.25], atol=0.07)


def test_multinomial_one_draw_is_the_first_of_many():
    # one draw without replacement takes the largest key (a language model's next token);
    # several sort the keys: from the same seed, both start with the same category
    p = mg.tensor(np.random.default_rng(0).random((50, 7)) * [1, 0, 1, 1, 0, 1, 1])
    one = mg.multinomial(p, 1, generator=mg.Generator().manual_seed(3)).numpy()
    five = mg.multinomial(p, 5, generator=mg.Generator().manual_seed(3)).numpy()
    assert one.shape == (50, 1)
    np.testing.assert_array_equal(one[:, 0], five[:, 0])
    assert not np.isin(one, [1, 4]).any()


def test_generators_are_independent_and_repeatable():
    a = mg.randn(3, generator=mg.Generator().manual_seed(7))
    mg.manual_seed(0)
    b = mg.randn(3, generator=mg.Generator().manual_seed(7))
    assert a.tolist() == b.tolist()
    mg.manual_seed(5)
    first = mg.rand(2).tolist()
    mg.rand(2, generator=mg.Generator().manual_seed(1))  # does not advance the default stream
    mg.manual_seed(5)
    assert mg.rand(2).tolist() == first


# --- scatter, indexing and in-place writes ------------------------------------------------------

@pytest.mark.parametrize("call, error, message", [
    (lambda x: x.scatter(1, mg.tensor([[4]]), 1.0), IndexError,
     "scatter: index 4 is out of range for dim 1 of size 4"),
    (lambda x: x.scatter(1, mg.tensor([0, 1]), 1.0), ValueError,
     "scatter: index has 1 dims but the tensor of shape"),
    (lambda x: x.scatter(0, mg.tensor([[0.5]]), 1.0), TypeError, "index must be an integer"),
    (lambda x: x.scatter(0, mg.tensor([[0, 1, 2, 0, 1]]), mg.ones(1, 5)), ValueError,
     r"index of shape \(1, 5\) is larger than the tensor of shape \(3, 4\) in dim 1"),
    (lambda x: x.scatter(0, mg.zeros(1, 3, dtype=mg.long), mg.ones(1, 2)), ValueError,
     r"larger than src of shape \(1, 2\)"),
    (lambda x: x.index_put((mg.tensor([5]),), 1.0), IndexError, "index_put_: index 5 is out"),
    (lambda x: x.index_put((mg.tensor([0, 1]),), mg.ones(3)), ValueError,
     r"values of shape \(3,\) do not broadcast"),
    (lambda x: x.topk(5), ValueError, r"topk: k \(5\) must be in \[0, 4\]"),
    (lambda x: mg.einsum("ij,jk->ik", x), ValueError, "names 2 operands but 1 were given"),
    (lambda x: mg.einsum("ijk->i", x), ValueError, "operand 0 has 2 dims but 'ijk'"),
    (lambda x: mg.einsum("ij,jk->ik", x, x), ValueError, "does not fit operands of shapes"),
    (lambda x: x.repeat(2), ValueError, "1 repeat counts for a tensor with 2 dims"),
    (lambda x: x.narrow(1, 3, 2), IndexError, "narrow: start 3 and length 2 do not fit"),
    (lambda x: x.mm(mg.ones(4)), ValueError, "mm: expects two 2-D tensors"),
    (lambda x: x.norm(p=0), ValueError, "norm: p must be positive"),
    (lambda x: mg.nn.functional.linear(x, mg.ones(2, 4), mg.ones(3)), ValueError,
     r"linear: bias of shape \(3,\) does not fit the 2 outputs of the weight of shape"),
    (lambda x: x.long() // 0, ZeroDivisionError, "floor_divide: ZeroDivisionError"),
    (lambda x: x.long() % 0, RuntimeError, "remainder: ZeroDivisionError"),
])
def test_bad_indexing_and_shapes_are_named(call, error, message):
    with pytest.raises(error, match=message):
        call(mg.zeros(3, 4))


def test_in_place_errors_say_what_to_do():
    w = mg.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="index_put_: a leaf Variable that requires grad .*"
                                           "no_grad"):
        w[0] = 1.0
    with mg.no_grad():
        w[0] = 1.0  # the usual way to initialise a weight
    assert w.tolist() == [1.0, 0.0, 0.0] and w.grad_fn is None
    x = mg.zeros(2, 3)
    with mg.no_grad():
        row = x[0]  # a view taken outside the graph cannot pass a gradient on to x
    with pytest.raises(RuntimeError, match=r"view of another tensor's memory made outside the "
                                           r"graph .* clone\(\) it first"):
        row[1] = w[0]
    assert x.tolist() == [[0.0] * 3] * 2  # nothing was written
    e = mg.zeros(1, 3).expand(2, 3)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor refers to a single memory location. Please clone"):
        e[0, 0] = 1.0
    i = mg.zeros(3, dtype=mg.long)
    with pytest.raises(RuntimeError, match="add_: result type float(32|64) can't be cast to the "
                                           "desired output type int64"):
        i += 0.5


def test_format_needs_one_element():
    assert f"{mg.tensor([[2.5]]):.2f}" == "2.50" and format(mg.tensor([1]), "") == "tensor([1])"
    assert format(mg.tensor(1), "") == "1" and f"{mg.tensor(2.5)}" == "2.5"  # as PyTorch's
    with pytest.raises(TypeError, match=r"format: spec '.2f' needs a one-element tensor, this "
                                        r"one has shape minigrad.Size\(\[2\]\)"):
        format(mg.tensor([1.0, 2.0]), ".2f")
