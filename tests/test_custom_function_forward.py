"""Forward mode through a custom `autograd.Function` (its `jvp`, minigrad/autograd/
function_jvp.py) and `apply` with keyword arguments, side by side with PyTorch."""
import numpy as np
import pytest

import minigrad as mg


def sin_scale(lib, log=None):
    """(x, y, k) -> (sin(x) * y, k * x): two outputs, a number among the inputs; `log` gets
    the tangents jvp saw of k and y."""
    class SinScale(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, k):
            ctx.save_for_forward(x, y)
            ctx.k = k
            return x.sin() * y, k * x

        @staticmethod
        def backward(ctx, ga, gb):
            raise AssertionError("forward mode ran backward")

        @staticmethod
        def jvp(ctx, tx, ty, tk):
            x, y = ctx.saved_tensors
            if log is not None:
                log.append((tk, None if ty is None else ty.tolist()))
            return tx * x.cos() * y + ty * x.sin(), ctx.k * tx
    return SinScale


def _tangents(lib, fn, primals, tangents, *rest):
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        duals = [fw.make_dual(lib.tensor(p), lib.tensor(t)) if t is not None else lib.tensor(p)
                 for p, t in zip(primals, tangents)]
        outs = fn(*duals, *rest)
        outs = outs if isinstance(outs, tuple) else (outs,)
        return [None if t is None else t.tolist()
                for t in (fw.unpack_dual(o).tangent for o in outs)]


@pytest.mark.parametrize("with_ty", [True, False])
def test_jvp_gives_every_output_its_tangent(torch, with_ty):
    rng = np.random.default_rng(0)
    x, y, tx, ty = (rng.uniform(-1, 1, 3) for _ in range(4))
    seen = []
    for lib in (torch, mg):
        fn = sin_scale(lib)
        got = _tangents(lib, fn.apply, (x, y), (tx, ty if with_ty else None), 1.5)
        seen.append(got)
    np.testing.assert_allclose(seen[1], seen[0], rtol=1e-12)
    want = [tx * np.cos(x) * y + (ty * np.sin(x) if with_ty else 0), 1.5 * tx]
    np.testing.assert_allclose(seen[1], want, rtol=1e-12)


def test_jvp_matches_central_differences():
    """The jvp is checked against the function itself, in float64."""
    rng = np.random.default_rng(1)
    x, y, tx, ty = (rng.uniform(-1, 1, 4) for _ in range(4))
    got = _tangents(mg, sin_scale(mg).apply, (x, y), (tx, ty), 0.5)
    eps = 1e-6

    def f(s):
        with mg.no_grad():
            a, b = sin_scale(mg).apply(mg.tensor(x + s * tx), mg.tensor(y + s * ty), 0.5)
        return np.stack([a.numpy(), b.numpy()])
    np.testing.assert_allclose(got, (f(eps) - f(-eps)) / (2 * eps), rtol=1e-7, atol=1e-9)


def test_jvp_sees_zero_tangents_and_save_for_forward(torch):
    seen = []
    for lib in (torch, mg):
        log = []
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(lib.tensor([0.5, 1.0], dtype=lib.float64),
                             lib.tensor([1.0, 2.0], dtype=lib.float64))
            a, b = sin_scale(lib, log).apply(x, lib.tensor([3.0, 4.0], dtype=lib.float64), 2.0)
            seen.append((log[0], fw.unpack_dual(b).tangent.tolist()))
    assert seen[0] == seen[1] == ((None, [0.0, 0.0]), [2.0, 4.0])


def _class(lib, jvp, dirty=False, frozen=False, n_out=1):
    """A Function doubling x, whose jvp is `jvp(t)`; it may write x in place (`dirty`) or give
    a second output marked non-differentiable (`frozen`)."""
    class Case(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            if dirty:
                x.mul_(2)
                ctx.mark_dirty(x)
                return x
            out = (x * 2, (x * 0).detach())
            if frozen:
                ctx.mark_non_differentiable(out[1])
            return out[0] if n_out == 1 else out

        @staticmethod
        def backward(ctx, *g):
            return g[0] * 2

    if jvp is not None:
        Case.jvp = staticmethod(jvp)
    return Case


ERRORS = [
    (None, {}, NotImplementedError, "You must implement the jvp function for custom "
     "autograd.Function to use it with forward mode AD."),
    (lambda ctx, t: (t * 2, t), {}, RuntimeError,
     r"Function's jvp returned an invalid number of forward gradients \(expected 1 but got 2\)"),
    (lambda ctx, t: t.sum(), {}, RuntimeError, r"Trying to set a forward gradient that has a "
     r"different size than that of the original Tensor, this is not supported. Tensor is of "
     r"size \[2\] while the given forward gradient is of size \[\]."),
    (lambda ctx, t: 3.0, {}, RuntimeError, r"expected Variable or None \(got float\) for grad "
     r"output 0."),
    (lambda ctx, t: t * 2, dict(dirty=True), RuntimeError, "An inplace custom Function is not "
     "modifying the forward mode gradients inplace. If the forward is modifying an input "
     "inplace, then the jvp function must modify the corresponding gradient inplace."),
    (lambda ctx, t: (t * 2, t * 5), dict(frozen=True, n_out=2), RuntimeError,
     "Function's jvp returned a gradient at position 1, but  the corresponding forward output "
     "is not a differentiable Tensor.You should return None at that position instead."),
]


@pytest.mark.parametrize("jvp, kind, error, message", ERRORS)
def test_jvp_errors_as_pytorch(torch, jvp, kind, error, message):
    for lib in (torch, mg):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(lib.ones(2), lib.full((2,), 0.5)) * 1
            with pytest.raises(error, match=message):
                _class(lib, jvp, **kind).apply(x)


def test_an_in_place_jvp_of_a_dirty_input_and_a_none_tangent(torch):
    def in_place(ctx, t):
        t.mul_(2)
        return t

    seen = []
    for lib in (torch, mg):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(lib.ones(2), lib.full((2,), 0.5)) * 1
            out = _class(lib, in_place, dirty=True).apply(x)
            a, b = _class(lib, lambda ctx, t: (t * 2, None), frozen=True, n_out=2).apply(x)
            seen.append((out is x, x._version, fw.unpack_dual(out).tangent.tolist(),
                         fw.unpack_dual(a).tangent.tolist(), fw.unpack_dual(b).tangent))
    assert seen[0] == seen[1] == (True, 2, [1.0, 1.0], [2.0, 2.0], None)


def test_reverse_mode_leaves_jvp_alone_and_no_level_no_jvp(torch):
    for lib in (torch, mg):
        x = lib.ones(2, requires_grad=True)
        case = _class(lib, lambda ctx, t: (_ for _ in ()).throw(AssertionError("jvp ran")))
        case.apply(x).sum().backward()
        assert x.grad.tolist() == [2.0, 2.0]


def keyword(lib):
    class Affine(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, w=None, *, shift=0.0):
            return x * (2.0 if w is None else w) + shift

        @staticmethod
        def backward(ctx, g):
            return g * 2
    return Affine


def keyword_setup(lib):
    class Scaled(lib.autograd.Function):
        @staticmethod
        def forward(x, k=3.0):
            return x * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.k = inputs[1]

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k, None
    return Scaled


def test_apply_binds_keyword_arguments_to_forward_inputs(torch):
    seen = []
    for lib in (torch, mg):
        fn = keyword(lib)
        x = lib.ones(2, requires_grad=True)
        y = fn.apply(x=x)
        row = [len(y.grad_fn.next_functions), y.tolist()]
        y.sum().backward()
        row.append(x.grad.tolist())
        y = fn.apply(x, w=lib.ones(2, requires_grad=True))
        row.append(len(y.grad_fn.next_functions))
        with pytest.raises(RuntimeError, match=r"incorrect number of gradients \(expected 2, "
                                               r"got 1\)"):
            y.sum().backward()  # w, given by keyword, is an input: it needs its gradient
        with pytest.raises(TypeError, match="forward\\(\\) got an unexpected keyword argument "
                                            "'shift'"):
            fn.apply(x, shift=1.0)
        y = keyword_setup(lib).apply(x)  # setup_context's style: the default is an input
        row.append((len(y.grad_fn.next_functions), y.tolist()))
        seen.append(row)
    assert seen[0] == seen[1] == [1, [2.0, 2.0], [2.0, 2.0], 2, (1, [3.0, 3.0])]


def transformed(lib, jvp=False, rule=None):
    """sin in the setup_context style (which every transform needs), with a jvp and a vmap
    rule (`rule`: "generate", "own" or, refused, "both") as asked."""
    class Sin(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x.sin()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])
            ctx.save_for_forward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x.cos()

    if jvp:
        Sin.jvp = staticmethod(lambda ctx, t: t * ctx.saved_tensors[0].cos())
    if rule in ("generate", "both"):
        Sin.generate_vmap_rule = True
    if rule in ("own", "both"):
        Sin.vmap = staticmethod(lambda info, in_dims, x: (Sin.apply(x), in_dims[0]))
    return Sin


TRANSFORMS = {
    "grad": lambda lib, f, x: lib.func.grad(lambda a: f.apply(a).sum())(x),
    "jacrev": lambda lib, f, x: lib.func.jacrev(f.apply)(x),
    "jvp": lambda lib, f, x: lib.func.jvp(f.apply, (x,), (lib.ones_like(x),))[1],
    "jacfwd": lambda lib, f, x: lib.func.jacfwd(f.apply)(x),
    "vmap": lambda lib, f, x: lib.func.vmap(f.apply)(x),
    "hessian": lambda lib, f, x: lib.func.hessian(lambda a: f.apply(a).sum())(x),
}


def _outcome(lib, make, transform):
    x = lib.tensor([0.1, 0.2, 0.3], dtype=lib.float64)
    try:
        return ("ok", TRANSFORMS[transform](lib, make(lib), x).tolist())
    except (RuntimeError, NotImplementedError) as e:
        return (type(e).__name__, str(e))


@pytest.mark.parametrize("transform", sorted(TRANSFORMS))
@pytest.mark.parametrize("kind", ["ctx style", "plain", "jvp", "generated rule",
                                  "own rule", "jvp and rule", "both rules"])
def test_func_transforms_need_what_pytorch_needs(torch, transform, kind):
    make = {"ctx style": lambda lib: cube_ctx(lib), "plain": transformed,
            "jvp": lambda lib: transformed(lib, jvp=True),
            "generated rule": lambda lib: transformed(lib, rule="generate"),
            "own rule": lambda lib: transformed(lib, rule="own"),
            "jvp and rule": lambda lib: transformed(lib, jvp=True, rule="generate"),
            "both rules": lambda lib: transformed(lib, rule="both")}[kind]
    want, got = _outcome(torch, make, transform), _outcome(mg, make, transform)
    assert got[0] == want[0]
    if want[0] == "ok":
        np.testing.assert_allclose(got[1], want[1], rtol=1e-12, atol=1e-15)
    else:
        assert got[1] == want[1].replace("torch", "minigrad") or got[1] == want[1]


def cube_ctx(lib):
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * g * x ** 2

        @staticmethod
        def jvp(ctx, t):
            return t
    return Cube


def test_save_for_forward_takes_tensors_only(torch):
    for lib in (torch, mg):
        class Saves(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_forward(x, 3.0)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2
        with pytest.raises(AssertionError, match="save_for_forward expects all arguments to be "
                                                 "tensors; you should save non-tensors as "
                                                 "attributes on ctx."):
            Saves.apply(lib.ones(2))
