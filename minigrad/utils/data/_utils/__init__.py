"""The DataLoader's helpers at PyTorch's paths: collation (`collate.py`, where scripts import
`default_collate` from) and the worker processes (`worker.py`)."""
from . import collate, fetch, worker

__all__ = ["collate", "fetch", "worker"]
