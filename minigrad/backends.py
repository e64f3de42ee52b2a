"""`minigrad.backends`: the switches PyTorch code sets for GPU libraries, accepted and unused.

Seeding helpers commonly write `torch.backends.cudnn.deterministic = True`, and GPT training
scripts `torch.backends.cuda.matmul.allow_tf32 = True`; minigrad is deterministic on the CPU
already (given a seed) and multiplies float32 in float32, so the flags are plain attributes.
"""
from types import SimpleNamespace

cudnn = SimpleNamespace(deterministic=False, benchmark=False, enabled=False, allow_tf32=False,
                        is_available=lambda: False)
cuda = SimpleNamespace(matmul=SimpleNamespace(allow_tf32=False), is_built=lambda: False)
mps = SimpleNamespace(is_available=lambda: False, is_built=lambda: False)
