"""Small helpers shared by the test files."""
import numpy as np

import minigrad as mg


def t64(arr, requires_grad=True):
    return mg.tensor(np.asarray(arr, dtype=np.float64), dtype=np.float64,
                     requires_grad=requires_grad)


def t32(arr, requires_grad=False):
    return mg.tensor(np.asarray(arr, dtype=np.float32), dtype=np.float32,
                     requires_grad=requires_grad)
