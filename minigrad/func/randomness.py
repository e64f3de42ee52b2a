"""vmap's `randomness` argument on a loop over the batch: 'error' refuses a random op inside
the function, 'same' gives every slice the same draws, 'different' gives each its own.

A random op is seen as a change of the default generator's state (ops given a Generator of
their own are not seen)."""
from __future__ import annotations

import minigrad

RANDOMNESS = ("error", "different", "same")

_ERROR = ("vmap: called random operation while in randomness error mode. Please either use the "
          "'same' or 'different' randomness flags on vmap or perform the randomness operation "
          "out of vmap")


def check_randomness(randomness):
    if randomness not in RANDOMNESS:
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")


class Draws:
    """Around each slice's call: `before()` then `after()`."""

    def __init__(self, randomness):
        self.randomness = randomness
        self.start = minigrad.get_rng_state()

    def before(self):
        if self.randomness == "same":  # every slice draws what the first drew
            minigrad.set_rng_state(self.start)

    def after(self):
        if self.randomness == "error" and not minigrad.equal(minigrad.get_rng_state(),
                                                              self.start):
            minigrad.set_rng_state(self.start)
            raise RuntimeError(_ERROR)


__all__ = ["Draws", "check_randomness"]
