"""`minigrad.optim`: optimizers (SGD, Adam, AdamW) and learning-rate schedules.

The usual loop, as in PyTorch:

    opt = minigrad.optim.Adam(model.parameters(), lr=1e-3)
    for x, y in batches:
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()
"""
from . import lr_scheduler
from .adam import Adam, AdamW
from .lr_scheduler import LambdaLR, LRScheduler, StepLR, WarmupScheduler, noam_lr
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "lr_scheduler", "LRScheduler", "LambdaLR",
           "StepLR", "WarmupScheduler", "noam_lr"]
