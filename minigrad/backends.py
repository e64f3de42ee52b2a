"""`minigrad.backends`: the switches PyTorch code sets for GPU libraries, accepted and unused.

Seeding helpers commonly write `torch.backends.cudnn.deterministic = True`; minigrad is
deterministic on the CPU already (given a seed), so the flags are plain attributes here.
"""
from types import SimpleNamespace

cudnn = SimpleNamespace(deterministic=False, benchmark=False, enabled=False,
                        is_available=lambda: False)
mps = SimpleNamespace(is_available=lambda: False, is_built=lambda: False)
