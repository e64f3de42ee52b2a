"""PyTorch's hardware and runtime API on a CPU-only library: devices (`device.py`), the GPU
queries (`cuda.py`, `accelerator.py`, `cpu.py`), mixed precision (`amp.py`), the library
switches (`backends.py`, `settings.py`), `compile` (`compiler.py`), distributed training
(`distributed.py`) and the legacy tensor types (`tensortypes.py`).

Each module answers the way PyTorch answers on a machine without a GPU, so that training
scripts written for PyTorch run unchanged. `minigrad/__init__.py` makes them reachable under
PyTorch's paths (`minigrad.cuda`, `minigrad.backends.cudnn`, `minigrad.distributed`, ...).
This package imports nothing by itself: the Tensor imports `device.py` from here.
"""
