"""PyTorch's tensor layouts (`torch.strided`, `torch.sparse_coo`, ...) and the two factory
arguments that ask for memory minigrad does not have (`layout=`, `pin_memory=`).

Every minigrad tensor is strided: a NumPy array, dense, with strides. The other layouts exist
as names so that a program comparing against them (`x.layout == torch.sparse_coo`) runs; a
factory function asked for one of them, or for pinned memory (which needs a GPU), raises the
error PyTorch raises on a machine without one.
"""

import functools
import inspect

__all__ = ["check_factory_memory", "factory_keywords", "jagged", "layout", "sparse_bsc",
           "sparse_bsr", "sparse_coo", "sparse_csc", "sparse_csr", "strided"]


class layout:
    """One of PyTorch's layouts; the instances below are the only ones."""

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"minigrad.{self._name}"

    def __reduce__(self):  # pickled as the shared instance
        return self._name


strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")
sparse_csc = layout("sparse_csc")
sparse_bsr = layout("sparse_bsr")
sparse_bsc = layout("sparse_bsc")
jagged = layout("jagged")


def check_factory_memory(layout_, pin_memory, op):
    """The checks of a factory function's `layout=` and `pin_memory=` (None and False are the
    defaults)."""
    if layout_ is not None and layout_ is not strided:
        if not isinstance(layout_, layout):
            raise TypeError(f"{op}(): argument 'layout' must be minigrad.layout, not "
                            f"{type(layout_).__name__}")
        raise NotImplementedError(f"{op}: minigrad has dense (strided) tensors only, got "
                                  f"layout={layout_!r}")
    if pin_memory:
        raise RuntimeError(f"{op}: Cannot access accelerator device when none is available "
                           f"(pin_memory=True needs a GPU)")


def factory_keywords(fn):
    """fn with `layout=` and `pin_memory=` added to its signature: checked, then dropped."""
    @functools.wraps(fn)
    def factory(*args, layout=None, pin_memory=False, **kwargs):
        if layout is not None or pin_memory:
            check_factory_memory(layout, pin_memory, fn.__name__)
        return fn(*args, **kwargs)

    sig = inspect.signature(fn)
    extra = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default)
             for name, default in (("layout", None), ("pin_memory", False))]
    factory.__signature__ = sig.replace(parameters=[*sig.parameters.values(), *extra])
    return factory
