"""Complex tensors: their parts, `complex`, `polar`, `view_as_real`, `view_as_complex`, the
conjugate (with PyTorch's `is_conj` flag) and `sgn`, z / |z|.

A complex tensor holds a NumPy complex64 or complex128 array. Gradients follow PyTorch's
convention: for a real loss L of complex z = x + iy, z.grad is dL/dx + i dL/dy (twice the
conjugate Wirtinger derivative dL/d(conj z)), so that `z -= lr * z.grad` descends. An op's
backward therefore multiplies the incoming gradient by the *conjugate* of its derivative where
the op is holomorphic (mul, div, matmul, the transforms of fft.py, the elementwise math whose
`Pointwise` and `Sloped` bases conjugate the slope, the linear algebra's conjugate transposes),
and for the other ops here applies the chain rule to the parts. A real input of an op that computed in complex gets the
real part of its gradient, in the engine's one fitting place (`_fit` in autograd/engine.py).

Only the ops marked `complex_aware` accept complex operands; any other refuses them with an
error naming the op (`Op.apply`), since its backward would omit the conjugates.
"""
from __future__ import annotations

import numpy as np

from .autograd.op import Op
from .dtypes import complex_of, get_default_dtype, real_of
from .tensor import Tensor

__all__ = ["angle", "complex", "conj", "conj_physical", "imag", "is_complex", "is_conj", "is_neg",
           "isreal", "polar", "real", "resolve_conj", "resolve_neg", "sgn", "view_as_complex",
           "view_as_real"]


class Real(Op):
    """z.real, a view of the real parts; its gradient g (real) is dL/dx, the complex g + 0i."""
    complex_aware = True

    @staticmethod
    def forward(ctx, a):
        return a.real

    @staticmethod
    def backward(ctx, g):
        return g  # the engine casts it to the input's complex dtype


class Imag(Op):
    """z.imag, a view of the imaginary parts; dL/dy = g enters the gradient as i g."""
    complex_aware = True

    @staticmethod
    def forward(ctx, a):
        return a.imag

    @staticmethod
    def backward(ctx, g):
        out = np.zeros(g.shape, complex_of(g.dtype))
        out.imag = g
        return out


class Conj(Op):
    """The conjugate; the gradient is conj(g), since conj is antiholomorphic."""
    complex_aware = True

    @staticmethod
    def forward(ctx, a):
        return np.conj(a)

    @staticmethod
    def backward(ctx, g):
        return np.conj(g)


class Angle(Op):
    """arg(z) = atan2(y, x), real; d/dx = -y/|z|^2, d/dy = x/|z|^2, so the gradient is
    g * i z / |z|^2 (0 at z = 0, as in PyTorch). For a real input it is 0 or pi, gradient 0."""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return np.angle(a).astype(real_of(a.dtype), copy=False)

    @staticmethod
    def backward(ctx, g):
        z = ctx.saved[0]
        if z.dtype.kind != "c":
            return np.zeros_like(g)
        r2 = (z * np.conj(z)).real
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(r2 == 0, 0, g * 1j * z / r2).astype(z.dtype, copy=False)


class Sgn(Op):
    """z / |z|, 0 at 0. Not holomorphic: with s = z / |z|, ds = (dz - s Re(conj(s) dz)) / |z|,
    so the gradient of a real loss is (g - s Re(g conj(s))) / |z|, 0 at z = 0 (PyTorch's)."""
    complex_aware = True

    @staticmethod
    def forward(ctx, a):
        r = np.abs(a)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.where(r == 0, 0, a / r).astype(a.dtype, copy=False)
        ctx.save_for_backward(r, out)
        return out

    @staticmethod
    def backward(ctx, g):
        r, s = ctx.saved
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(r == 0, 0, (g - s * (g * np.conj(s)).real) / r).astype(
                s.dtype, copy=False)


class Complex(Op):
    """real + i imag for two float arrays of one dtype (broadcast); gradients Re g and Im g."""
    complex_aware = True

    @staticmethod
    def forward(ctx, re, im):
        out = np.empty(np.broadcast_shapes(re.shape, im.shape), complex_of(re.dtype))
        out.real, out.imag = re, im
        return out

    @staticmethod
    def backward(ctx, g):
        return g.real, g.imag


class Polar(Op):
    """abs * (cos(angle) + i sin(angle)); gradients Re(g conj(sgn z)) for abs and
    Re(g conj(i z)) for angle. sgn z = z / |z| is e^{i angle} for abs > 0, polar's domain;
    outside it PyTorch's rule gives -e^{i angle} for abs < 0 and 0 at abs = 0, and so does
    this one."""
    complex_aware = True

    @staticmethod
    def forward(ctx, r, theta):
        out = np.empty(np.broadcast_shapes(r.shape, theta.shape), complex_of(r.dtype))
        out.real, out.imag = r * np.cos(theta), r * np.sin(theta)
        ctx.save_for_backward(r, theta, out)
        return out

    @staticmethod
    def backward(ctx, g):
        r, theta, z = ctx.saved
        unit = (np.cos(theta) - 1j * np.sin(theta)) * np.sign(r)  # conj(sgn z)
        return (g * unit).real, (g * np.conj(1j * z)).real


class ViewAsReal(Op):
    """(*S) complex as (*S, 2) real, a view of the same memory (real, imaginary)."""
    complex_aware = True

    @staticmethod
    def forward(ctx, a):
        return a[..., None].view(real_of(a.dtype))

    @staticmethod
    def backward(ctx, g):
        out = np.empty(g.shape[:-1], complex_of(g.dtype))
        out.real, out.imag = g[..., 0], g[..., 1]
        return out


class ViewAsComplex(Op):
    """(*S, 2) real as (*S) complex, a view of the same memory."""
    complex_aware = True

    @staticmethod
    def forward(ctx, a):
        return a.view(complex_of(a.dtype))[..., 0]

    @staticmethod
    def backward(ctx, g):
        return g[..., None].view(real_of(g.dtype))


def is_complex(input):
    """Whether `input`'s dtype is complex64 or complex128."""
    return input.dtype.kind == "c"


def real(input):
    """The real parts (a view); a real tensor is its own real part, as in PyTorch."""
    return Real.apply(input) if is_complex(input) else input


def imag(input):
    """The imaginary parts (a view); PyTorch refuses real tensors, and so does this."""
    if not is_complex(input):
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return Imag.apply(input)


def conj(input):
    """The complex conjugate; a real tensor itself. PyTorch's conj is lazy and flags its
    result (`is_conj()`); here the values are computed at once and the flag kept alongside,
    on this result only (not on views taken of it), for code that tests it."""
    if not is_complex(input):
        return input
    out = Conj.apply(input)
    out._conj_flag = True
    return out


def conj_physical(input):
    """The complex conjugate, computed (`is_conj()` is False); a real tensor itself."""
    return Conj.apply(input) if is_complex(input) else input


def is_conj(input):
    """Whether `input` is `conj()`'s result, which PyTorch flags as a lazy conjugate."""
    return getattr(input, "_conj_flag", False)


def resolve_conj(input):
    """`input` with the conjugate flag resolved: a copy of a `conj()` result (same values,
    gradient through), `input` itself otherwise, as in PyTorch."""
    return input.clone() if is_conj(input) else input


def resolve_neg(input):
    """`input`: negation is never lazy here, so no tensor has a negative bit to resolve."""
    return input


def is_neg(input):
    """Whether `input` has PyTorch's lazy negative bit: never, here (see `resolve_neg`)."""
    return False


def isreal(input):
    """Element-wise, bool: whether each value has no imaginary part (every real one)."""
    if is_complex(input):
        return input.imag == 0
    return input.new_ones(input.shape, dtype=np.bool_)


def sgn(input):
    """z / |z| (0 at 0) for complex input, PyTorch's sign of complex numbers; sign for real
    ones (a bool tensor is its own sign, which sign refuses)."""
    if is_complex(input):
        return Sgn.apply(input)
    return input.clone() if input.dtype.kind == "b" else input.sign()


def angle(input):
    """arg(z) in (-pi, pi]; for real inputs 0 or pi (integers give the default float)."""
    if input.dtype.kind not in "fc":
        input = input.to(get_default_dtype())
    return Angle.apply(input)


def complex(real, imag):
    """real + i imag: two float tensors of one dtype (float32 gives complex64), broadcast."""
    _check_parts("complex", real, imag, "real", "imag")
    return Complex.apply(real, imag)


def polar(abs, angle):
    """abs * (cos(angle) + i sin(angle)): two float tensors of one dtype, broadcast."""
    _check_parts("polar", abs, angle, "abs", "angle")
    return Polar.apply(abs, angle)


def view_as_real(input):
    """A complex (*S) tensor as a real (*S, 2) view: the last dim holds (real, imag)."""
    if not is_complex(input):
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return ViewAsReal.apply(input)


def view_as_complex(input):
    """A float (*S, 2) tensor as a complex (*S) view; the last dim must have size 2 and
    stride 1, as in PyTorch."""
    a = input._array
    if a.dtype not in (np.float32, np.float64):
        raise RuntimeError(f"view_as_complex is only supported for float and double tensors, "
                           f"but got a tensor of scalar type: {a.dtype}")
    if a.ndim == 0 or a.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if a.strides[-1] != a.itemsize:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % (2 * a.itemsize) for s in a.strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    return ViewAsComplex.apply(input)


def _check_parts(op, a, b, name_a, name_b):
    for t, name in ((a, name_a), (b, name_b)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}(): argument '{name}' must be Tensor, not {type(t).__name__}")
    if a.dtype != b.dtype:
        raise RuntimeError(f"{op}: expected {name_a} and {name_b} of one dtype, got {a.dtype} "
                           f"and {b.dtype}")
    if a.dtype not in (np.float32, np.float64):  # float16 would give complex32, which
        raise RuntimeError(f"{op}: expected both inputs to be Float or Double tensors "  # NumPy lacks
                           f"but got {a.dtype}")
