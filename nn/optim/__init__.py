"""`minigrad.optim`: optimizers (SGD, Adam, AdamW, Adamax, NAdam, RAdam, RMSprop, Adagrad,
Adadelta, Adafactor, Rprop, ASGD, LBFGS, Muon), learning-rate schedules
(`minigrad.optim.lr_scheduler`) and weight averaging (`minigrad.optim.swa_utils`).

The usual loop, as in PyTorch:

    opt = minigrad.optim.Adam(model.parameters(), lr=1e-3)
    for x, y in batches:
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()
"""
from . import lr_scheduler, swa_utils
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adam_variants import Adamax, NAdam, RAdam
from .asgd import ASGD
from .lbfgs import LBFGS
from .lr_scheduler import LambdaLR, LRScheduler, StepLR, WarmupScheduler, noam_lr
from .muon import Muon
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD

__all__ = ["ASGD", "Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax", "LBFGS",
           "LRScheduler", "LambdaLR", "Muon", "NAdam", "Optimizer", "RAdam", "RMSprop", "Rprop",
           "SGD", "StepLR", "WarmupScheduler", "lr_scheduler", "noam_lr", "swa_utils"]
