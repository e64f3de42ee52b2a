"""The random generators. One default generator is behind every random op, so `manual_seed(n)`
makes runs repeatable; a `Generator` is an independent stream passed as `generator=` (PyTorch's
`torch.Generator`, e.g. `g = Generator().manual_seed(42); randn(3, generator=g)`)."""
from __future__ import annotations

import contextlib

import numpy as np


def _check_seed(seed, op):
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"{op}: seed must be a non-negative int, got {seed!r}")
    return int(seed)


class Generator:
    """A seeded stream of random numbers (a NumPy PCG64 generator underneath)."""

    def __init__(self, device="cpu"):
        from .platform.device import check_device
        check_device(device, "Generator")
        self._seed = int(np.random.SeedSequence().entropy % 2**63)
        self._rng = np.random.default_rng(self._seed)

    def manual_seed(self, seed):
        """Restart the stream from `seed`; returns the generator, so calls chain."""
        self._seed = _check_seed(seed, "Generator.manual_seed")
        self._rng = np.random.default_rng(self._seed)
        return self

    def seed(self):
        """Reseed from the operating system's entropy; returns the new seed."""
        self.manual_seed(int(np.random.SeedSequence().entropy % 2**63))
        return self._seed

    def initial_seed(self):
        return self._seed

    def get_state(self):
        return self._rng.bit_generator.state

    def set_state(self, state):
        self._rng.bit_generator.state = state
        return self


default_generator = Generator().manual_seed(0)


def manual_seed(seed: int) -> Generator:
    """Reseed the default generator (randn, rand, randint, dropout, the nn initialisers)."""
    return default_generator.manual_seed(_check_seed(seed, "manual_seed"))


def seed() -> int:
    """Reseed the default generator non-deterministically; returns the seed used."""
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def generator(gen: Generator | None = None) -> np.random.Generator:
    """The NumPy generator to draw from: `gen`'s if given, else the default one."""
    if gen is None:
        return default_generator._rng
    if not isinstance(gen, Generator):
        raise TypeError(f"generator: expected a minigrad.Generator, got {type(gen).__name__}")
    return gen._rng


def next_seed() -> int:
    """A fresh 63-bit seed for a counter-based kernel (dropout) drawn from the generator."""
    return int(default_generator._rng.integers(0, 2**63 - 1))


def get_rng_state() -> dict:
    """The default generator's state as plain JSON-able data (checkpoints store it)."""
    return default_generator.get_state()


def set_rng_state(new_state: dict) -> None:
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, device_type="cuda"):
    """Run a block with the default generator's state saved, and put it back afterwards: the
    draws inside do not change the numbers drawn after it (PyTorch's `torch.random.fork_rng`).
    There are no accelerator generators to fork, so `devices` must be empty or None."""
    if devices:
        raise ValueError(f"fork_rng: there are no {device_type} devices to fork, got devices="
                         f"{list(devices)}")
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
