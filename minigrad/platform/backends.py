"""`minigrad.backends`: the switches PyTorch code sets for its math libraries, with the values
PyTorch reports on a machine without a GPU.

Seeding helpers write `torch.backends.cudnn.deterministic = True` and GPT training scripts
`torch.backends.cuda.matmul.allow_tf32 = True`. minigrad has no cuDNN and multiplies float32 in
float32, so the cuDNN flags are plain attributes that nothing reads; `cuda.matmul.allow_tf32`
is, as in PyTorch, another view of `get_float32_matmul_precision()` ("highest" means no TF32).
"""
from __future__ import annotations

from . import settings


class _Flags:
    """A namespace of settable flags and query functions (PyTorch's backend modules)."""

    def __init__(self, name, **attrs):
        self.__name__ = f"minigrad.backends.{name}"
        self.__dict__.update(attrs)

    def __repr__(self):
        return f"<backend {self.__name__!r}>"


class _Matmul:
    """`backends.cuda.matmul`: `allow_tf32` reads and sets the float32 matmul precision."""

    allow_fp16_reduced_precision_reduction = True
    allow_bf16_reduced_precision_reduction = True

    @property
    def allow_tf32(self) -> bool:
        return settings.get_float32_matmul_precision() != "highest"

    @allow_tf32.setter
    def allow_tf32(self, value):
        settings.set_float32_matmul_precision("high" if value else "highest")


cudnn = _Flags("cudnn", enabled=True, benchmark=False, deterministic=False, allow_tf32=True,
               is_available=lambda: False, version=lambda: None)
cuda = _Flags("cuda", matmul=_Matmul(), is_built=lambda: False)
mps = _Flags("mps", is_available=lambda: False, is_built=lambda: False)
