"""The one random generator behind every random op, so `manual_seed(n)` makes runs repeatable."""
from __future__ import annotations

import numpy as np

_generator = np.random.default_rng(0)


def manual_seed(seed: int) -> None:
    """Reseed the generator used by randn, rand, randint, dropout and the nn initialisers."""
    global _generator
    if not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"manual_seed: seed must be a non-negative int, got {seed!r}")
    _generator = np.random.default_rng(int(seed))


def generator() -> np.random.Generator:
    return _generator


def next_seed() -> int:
    """A fresh 63-bit seed for a counter-based kernel (dropout) drawn from the generator."""
    return int(_generator.integers(0, 2**63 - 1))


def get_rng_state() -> dict:
    """The generator's state as plain JSON-able data (checkpoints store it)."""
    return _generator.bit_generator.state


def set_rng_state(state: dict) -> None:
    _generator.bit_generator.state = state
