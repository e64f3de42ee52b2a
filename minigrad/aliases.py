"""PyTorch's other names for functions minigrad has, the NumPy-style spellings scripts use:
the comparisons `eq`, `ne`, `gt`, `ge`, `lt`, `le` and `greater`, `less`, `greater_equal`,
`less_equal`, `not_equal`; `subtract`, `multiply`, `divide`, `true_divide`, `negative`,
`absolute`, `fix`, `positive`, `rsub` (subtraction with its
operands swapped); `clone`; `swapaxes`, `swapdims`, `moveaxis`, `ravel`, `fliplr`, `flipud`;
`msort`; `concatenate` (`cat`), `row_stack` (`vstack`); the functions of tensor methods
`adjoint`, `detach`, `unflatten`, `is_nonzero`, `is_signed`, and `narrow_copy` (`narrow`'s
copy). Each calls the op it names, so values, dtypes and gradients are that op's.
"""
from __future__ import annotations

__all__ = ["absolute", "adjoint", "clone", "concatenate", "detach", "divide", "eq", "fix",
           "fliplr", "flipud", "ge", "greater", "greater_equal", "gt", "is_nonzero", "is_signed",
           "le", "less", "less_equal", "lt", "moveaxis", "msort", "multiply", "narrow_copy", "ne",
           "negative", "not_equal", "positive", "ravel", "row_stack", "rsub", "subtract",
           "swapaxes", "swapdims", "true_divide", "unflatten"]


def eq(input, other):
    """input == other, element-wise, bool."""
    return input.eq(other)


def ne(input, other):
    """input != other, element-wise, bool."""
    return input.ne(other)


def gt(input, other):
    """input > other, element-wise, bool."""
    return input.gt(other)


def ge(input, other):
    """input >= other, element-wise, bool."""
    return input.ge(other)


def lt(input, other):
    """input < other, element-wise, bool."""
    return input.lt(other)


def le(input, other):
    """input <= other, element-wise, bool."""
    return input.le(other)


greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


def subtract(input, other, *, alpha=1):
    """`sub`: input - alpha * other."""
    from .functional import sub
    return sub(input, other, alpha=alpha)


def multiply(input, other):
    """`mul`."""
    from .functional import mul
    return mul(input, other)


def divide(input, other, *, rounding_mode=None):
    """`div`, with rounding_mode None, 'trunc' or 'floor'."""
    from .functional import div
    return div(input, other, rounding_mode=rounding_mode)


def true_divide(input, other):
    """`div` without rounding."""
    from .functional import div
    return div(input, other)


def negative(input):
    """`neg`."""
    return -input


def absolute(input):
    """`abs`."""
    return input.abs()


def fix(input):
    """`trunc`: rounding toward zero."""
    return input.trunc()


def clone(input, *, memory_format=None):
    """A copy of input that records the copy in the graph (memory_format is accepted and
    has no meaning for NumPy arrays)."""
    return input.clone(memory_format=memory_format)


def swapaxes(input, axis0, axis1):
    """`transpose` of two dims."""
    return input.transpose(axis0, axis1)


def swapdims(input, dim0, dim1):
    """`transpose` of two dims."""
    return input.transpose(dim0, dim1)


def moveaxis(input, source, destination):
    """`movedim`."""
    from .functional import movedim
    return movedim(input, source, destination)


def ravel(input):
    """The elements as a 1-D tensor, (numel,)."""
    return input.reshape(-1)


def fliplr(input):
    """Reverses dim 1 (left and right) of a tensor of at least 2 dims."""
    if input.ndim < 2:
        raise RuntimeError(f"Input must be >= 2-d. (fliplr of shape {tuple(input.shape)})")
    return input.flip([1])


def flipud(input):
    """Reverses dim 0 (up and down) of a tensor of at least 1 dim."""
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d. (flipud of a 0-d tensor)")
    return input.flip([0])


def msort(input):
    """`sort(input, dim=0).values`."""
    return input.sort(0).values


def positive(input):
    """`+input`: input itself (a bool tensor is refused, as PyTorch's)."""
    if input.dtype.kind == "b":
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def rsub(input, other, alpha=1):
    """other - alpha * input (subtraction with its operands swapped)."""
    return other - (input if alpha == 1 else input * alpha)


def concatenate(tensors, axis=0):
    """`cat` under NumPy's name, `axis` for `dim`."""
    from .functional import cat
    return cat(tensors, axis)


def row_stack(tensors):
    """`vstack`."""
    from .tensor_assembly import vstack
    return vstack(tensors)


def adjoint(input):
    """The conjugate transpose of the last two dims (a view, as `input.mH`)."""
    return input.adjoint()


def detach(input):
    """`input.detach()`: the same values, outside the graph."""
    return input.detach()


def unflatten(input, dim, sizes):
    """`input.unflatten(dim, sizes)`: dim split into the dims `sizes`."""
    return input.unflatten(dim, sizes)


def is_nonzero(input):
    """Whether a one-element tensor's value is nonzero (an error for any other size)."""
    return input.is_nonzero()


def is_signed(input):
    """Whether input's dtype holds negative values (False for uint8 and bool)."""
    return input.is_signed()


def narrow_copy(input, dim, start, length):
    """`input.narrow(dim, start, length)` as a new tensor (not a view)."""
    return input.narrow(dim, start, length).clone()
