"""Compatibility cases: `torch.func` (function transforms) and `nn.utils.stateless`. Inputs
that require grad check that a transform's results stay differentiable by ordinary autograd,
as PyTorch's do (the runner backpropagates through what each program returns)."""
from compat_table import case, f64

CASES = []
add = CASES.append


@add
@case("func.grad", "func.grad_and_value", inputs=(f64(3), f64(3, 4, grad=False)))
def _(lib, x, w):
    f = (lambda a, b: ((a @ b).tanh() ** 2).sum())
    g = lib.func.grad(f, argnums=(0, 1))(x, w)
    gv = lib.func.grad_and_value(lambda a: ((a.sin() * a).sum(), a.cos()), has_aux=True)(x)
    second = lib.func.grad(lambda a: lib.func.grad(lambda c: (c ** 3).sum())(a).sin().sum())
    return g, gv, second(x)


@add
@case("func.vjp", "func.jvp", inputs=(f64(2, 3), f64(2, 3, grad=False)))
def _(lib, x, v):
    f = (lambda a: a.sigmoid().log_softmax(-1))
    out, fn = lib.func.vjp(f, x)
    return out, fn(v), lib.func.jvp(f, (x,), (v,))


@add
@case("func.linearize", inputs=(f64(2, 3, grad=False), f64(2, 3, grad=False)))
def _(lib, x, v):
    # inputs without grad: PyTorch's jvp_fn is a traced graph whose results do not depend on
    # the primals under autograd (see compat_notes)
    out, jvp_fn = lib.func.linearize(lambda a: a.sigmoid().log_softmax(-1), x)
    return out, jvp_fn(v), jvp_fn(v * 2)


@add
@case("func.jacrev", "func.jacfwd", "func.hessian", inputs=(f64(3), f64(3, 2, grad=False)))
def _(lib, x, w):
    f = (lambda a, b: (a @ b).exp())
    s = (lambda a: (a.tanh() * a.roll(1)).sum())
    return (lib.func.jacrev(f, argnums=(0, 1))(x, w), lib.func.jacfwd(f)(x, w),
            lib.func.hessian(s)(x))


@add
@case("func.vmap", "minigrad.vmap", inputs=(f64(4, 3), f64(3, 2, grad=False)))
def _(lib, xs, w):
    per_example = lib.vmap(lib.func.grad(lambda b, x: (x @ b).sin().sum()),
                           in_dims=(None, 0))(w, xs)
    return lib.func.vmap(lambda x, b: (x @ b, x.sum()), in_dims=(0, None),
                         out_dims=(1, 0))(xs, w), per_example


@add
@case("func.functional_call", "func.stack_module_state", "nn.utils.stateless.functional_call",
      inputs=(f64(5, 3, grad=False),))
def _(lib, x):
    lib.manual_seed(0)
    models = [lib.nn.Linear(3, 2).double() for _ in range(3)]
    params, buffers = lib.func.stack_module_state(models)
    for i, m in enumerate(models):
        m.weight.data.fill_(0.1 * i)
        m.bias.data.fill_(-0.2 * i)
    params, buffers = lib.func.stack_module_state(models)
    base = models[0]
    out = lib.func.vmap(lambda p, b: lib.func.functional_call(base, (p, b), (x,)))(params,
                                                                                 buffers)
    one = lib.nn.utils.stateless.functional_call(base, {"weight": params["weight"][2]}, x)
    return out, one, params["weight"].requires_grad
