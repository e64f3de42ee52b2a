"""Compatibility cases: the in-place forms of the math methods (`t.exp_()`, `t.addmm_(...)`, ...),
written on tensors inside the graph, so the runner compares the gradients through the writes."""
import numpy as np

from compat_table import A, case, f32, f64, ints

CASES = []
add = CASES.append


@add
@case("Tensor.abs_", "Tensor.neg_", "Tensor.sign_", "Tensor.exp_", "Tensor.expm1_",
      "Tensor.sigmoid_", "Tensor.tanh_", "Tensor.sin_", "Tensor.cos_", "Tensor.square_",
      "Tensor.floor_", "Tensor.ceil_", "Tensor.trunc_", "Tensor.round_", "Tensor.clamp_min_",
      "Tensor.clamp_max_", "Tensor.pow_", inputs=(f32(3, 4),))
def _(lib, x):
    """Each write on its own copy of x * 1 (a node in the graph, as PyTorch requires)."""
    def write(name, *args):
        return getattr(x * 1, name)(*args)
    return ([write(n) for n in ("abs_", "neg_", "sign_", "exp_", "expm1_", "sigmoid_", "tanh_",
                                "sin_", "cos_", "square_", "floor_", "ceil_", "trunc_", "round_")]
            + [write("clamp_min_", -0.5), write("clamp_max_", 0.5), write("pow_", 3),
               write("pow_", x.detach().abs() + 0.5)])


@add
@case("Tensor.log_", "Tensor.log1p_", "Tensor.sqrt_", "Tensor.rsqrt_", "Tensor.reciprocal_",
      inputs=(f64(2, 3, low=0.2, high=3),))
def _(lib, x):
    h = x.t() * 2  # a non-contiguous tensor, and a view of one row of it, written in place
    h[1].log1p_()
    return x.clone().log_(), x.clone().rsqrt_(), x.clone().reciprocal_(), h, h.t().sqrt_()


@add
@case("Tensor.floor_divide_", "Tensor.remainder_", inputs=(ints(5, low=-9, high=9),))
def _(lib, i):
    return i.clone().floor_divide_(4), i.clone().remainder_(-3), i.clone().remainder_(i.abs() + 1)


@add
@case("Tensor.cumsum_", "Tensor.cumprod_", inputs=(f32(3, 4),))
def _(lib, x):
    return (x * 1).cumsum_(1), (x * 1).cumprod_(0), lib.tensor([1, 2, 3], dtype=lib.int32).cumsum_(0)


@add
@case("Tensor.addmm_", "Tensor.baddbmm_",
      inputs=(f32(3, 2), f32(3, 4), f32(4, 2), f32(2, 3, 4), f32(2, 4, 2)))
def _(lib, c, a, b, a3, b3):
    out = (c * 1).addmm_(a, b, beta=0.5, alpha=2)
    batched = (c.expand(2, 3, 2) * 1).baddbmm_(a3, b3, alpha=-1)
    with lib.no_grad():  # the update optimizers and hand-written layers make
        plain = c.detach().clone().addmm_(a, b)
    return out, batched, plain


@add
@case("Tensor.exp_", "Tensor.sigmoid_", compare="raises", match="leaf Variable that requires grad")
def _(lib):
    return lib.ones(2, requires_grad=True).exp_()


@add
@case("Tensor.sqrt_", compare="raises", match="sqrt_: result type float32 can't be cast to the "
                                              "desired output type int64")
def _(lib):
    return lib.tensor([1, 4]).sqrt_()


@add
@case("Tensor.addmm_", compare="raises", match=r"addmm_: output with shape \[2\]")
def _(lib):
    return lib.ones(2).addmm_(lib.ones(2, 3), lib.ones(3, 2))


@add
@case("Tensor.eq_", "Tensor.ne_", "Tensor.lt_", "Tensor.le_", "Tensor.gt_", "Tensor.ge_",
      "Tensor.logical_not_", "Tensor.logical_and_", "Tensor.logical_or_", "Tensor.logical_xor_",
      "Tensor.bitwise_not_", "Tensor.bitwise_and_", "Tensor.bitwise_or_", "Tensor.bitwise_xor_",
      inputs=(f32(3, 4, grad=False), ints(3, 4, low=-3, high=4), ints(4, low=-3, high=4)))
def _(lib, x, i, j):
    """Comparisons write 1s and 0s in the tensor's own dtype; bitwise ops need integers."""
    return ([getattr(x.clone(), n)(0.5) for n in ("eq_", "ne_", "lt_", "le_", "gt_", "ge_")]
            + [x.clone().logical_not_(), x.clone().logical_and_(x > 0),
               i.clone().logical_or_(j), i.clone().logical_xor_(j), i.clone().bitwise_not_(),
               i.clone().bitwise_and_(j), i.clone().bitwise_or_(3), i.clone().bitwise_xor_(j)])


@add
@case("Tensor.asin_", "Tensor.acos_", "Tensor.atan_", "Tensor.sinh_", "Tensor.cosh_",
      "Tensor.asinh_", "Tensor.atanh_", "Tensor.arcsin_", "Tensor.arccos_", "Tensor.arctan_",
      "Tensor.arcsinh_", "Tensor.arctanh_", "Tensor.atan2_", "Tensor.arctan2_",
      "Tensor.hypot_", inputs=(f32(3, 4, low=-0.9, high=0.9), f32(4)))
def _(lib, x, y):
    """Gradients through each write, except asinh_ and atanh_, which PyTorch cannot
    differentiate (a listed difference): their writes are compared on detached copies."""
    def write(name, *args):
        return getattr(x * 1, name)(*args)
    plain = x.detach()
    return ([write(n) for n in ("asin_", "acos_", "atan_", "sinh_", "cosh_", "arcsin_",
                                "arccos_", "arctan_")]
            + [getattr(plain.clone(), n)() for n in ("asinh_", "atanh_", "arcsinh_",
                                                      "arctanh_")]
            + [write("atan2_", y), write("arctan2_", y), write("hypot_", y)])


@add
@case("Tensor.acosh_", "Tensor.arccosh_", inputs=(f64(2, 3, low=1.1, high=4),))
def _(lib, x):
    return x.detach().clone().acosh_(), x.detach().t().clone().arccosh_()



_rng = np.random.default_rng(40)  # its own stream: the cases above keep their inputs


def _own(*shape, dtype=np.float32):
    return A(_rng.uniform(-2, 2, shape).astype(dtype), grad=True)


@add
@case("Tensor.fill_diagonal_", inputs=(_own(3, 3), _own(7, 3, dtype=np.float64), _own(2, 5),
                                       _own(2, 2, 2), A(np.arange(12).reshape(3, 4))))
def _(lib, square, tall, wide, cube, whole):
    """The main diagonal of each shape, a tall matrix wrapped and not, through a view of rows
    and of a transpose, and on integers; the written elements take no gradient."""
    rows = square * 1
    rows[1:].fill_diagonal_(-1.0)
    return ((square * 2).fill_diagonal_(0.5), (tall * 1).fill_diagonal_(3.0, wrap=True),
            (tall * 1).fill_diagonal_(3.0), (wide * 1).fill_diagonal_(2.0, True),
            (cube + 0).fill_diagonal_(-2.0), rows, (square * 1).t().fill_diagonal_(4.0),
            whole.clone().fill_diagonal_(7), lib.empty(0, 3).fill_diagonal_(1.0))


@add
@case("Tensor.fill_diagonal_", compare="raises", match="all dimensions of input must be of "
      "equal length", inputs=(A(np.zeros((2, 3, 3), np.float32)),))
def _(lib, x):
    return x.fill_diagonal_(1.0)


@add
@case("Tensor.fill_diagonal_", compare="raises", match="dimensions must larger than 1",
      inputs=(A(np.zeros(3, np.float32)),))
def _(lib, x):
    return x.fill_diagonal_(1.0)
