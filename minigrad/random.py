"""The random generators. One default generator is behind every random op, so `manual_seed(n)`
makes runs repeatable; a `Generator` is an independent stream passed as `generator=` (PyTorch's
`torch.Generator`, e.g. `g = Generator().manual_seed(42); randn(3, generator=g)`).

The engine is PyTorch's CPU one, a 32-bit Mersenne Twister (mt19937) seeded with the seed's low
32 bits, and random_draws.py turns its words into numbers as PyTorch does: after the same
`manual_seed`, `randn`, `rand`, `randint`, `randperm` and the `nn.init` fills give PyTorch's
numbers. NumPy's MT19937 is the same engine (seeded as its legacy RandomState is), so the words
come out vectorised. The samplers PyTorch has no simple rule for (gamma, Poisson, ...) draw from
a NumPy Generator on that same engine: they stay seeded and repeatable, from the same stream.
"""
from __future__ import annotations

import contextlib

import numpy as np

from .autograd import op as autograd_op
from .random_state import pack_state, unpack_state

# torch.Generator()'s seed when none is given (c10's default_rng_seed_val)
DEFAULT_SEED = 67280421310721


def _check_seed(seed, op):
    """`seed` as PyTorch takes it: an int in [-2**63, 2**64), a negative one read modulo 2**64."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"{op}: seed must be an int, got {seed!r}")
    seed = int(seed)
    if not -2 ** 63 <= seed < 2 ** 64:
        raise ValueError(f"{op}: seed must lie in [-2**63, 2**64), got {seed}")
    return seed % 2 ** 64


# from this many words the compiled loop: it is twice random_raw's speed on long runs, but
# compiling it costs a fresh install about a second, more than it saves on a model's weights
_COMPILED_WORDS = 1 << 20
_layout_ok = None       # whether NumPy's MT19937 state is the 624 words then the position


def _state_view(bits):
    """NumPy's mt19937_state of `bits` (uint32 key[624], int pos) as a uint32 array of 625
    on its memory, for the compiled loop; None if this NumPy lays it out otherwise (checked
    once per process against the `state` property)."""
    global _layout_ok
    import ctypes
    view = np.ctypeslib.as_array((ctypes.c_uint32 * 625).from_address(
        bits.ctypes.state_address))
    if _layout_ok is None:
        state = bits.state["state"]
        _layout_ok = bool(np.array_equal(view[:624], state["key"])
                          and int(view[624]) == int(state["pos"]))
    return view if _layout_ok else None


class Generator:
    """A seeded stream of random numbers: PyTorch's mt19937 engine (NumPy's MT19937 underneath),
    with the second value of a Box-Muller pair kept for the next normal draw, as PyTorch's."""

    def __init__(self, device="cpu"):
        from .platform.device import check_device
        check_device(device, "Generator")
        self.manual_seed(DEFAULT_SEED)

    def manual_seed(self, seed):
        """Restart the stream from `seed`; returns the generator, so calls chain."""
        self._seed = _check_seed(seed, "Generator.manual_seed")
        self._bits = np.random.MT19937()
        self._bits._legacy_seeding(self._seed & 0xFFFFFFFF)
        self._state = _state_view(self._bits)
        self._rng = np.random.Generator(self._bits)
        self.normal_cache = None  # a float64 normal draw waiting to be used
        self._float_normal = None  # PyTorch's float cache: carried through states, never drawn
        return self

    def __getstate__(self):
        # (pickle and copy.deepcopy) without the views of the engine's memory: a copy gets
        # views of its own engine's, or the compiled draws would move a detached array
        state = dict(self.__dict__)
        del state["_state"], state["_rng"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._state = _state_view(self._bits)
        self._rng = np.random.Generator(self._bits)

    def seed(self):
        """Reseed from the operating system's entropy; returns the new seed."""
        self.manual_seed(int(np.random.SeedSequence().entropy % 2 ** 63))
        return self._seed

    def initial_seed(self):
        return self._seed

    def random32(self, n):
        """The next n 32-bit words (PyTorch's `random()`), as uint64: a long run from the
        compiled loop of kernels/mt19937.py on NumPy's state in place (the same words)."""
        if n < _COMPILED_WORDS or self._state is None:
            return self._bits.random_raw(n)
        from .kernels.mt19937 import words
        out = np.empty(n, np.uint64)
        words(self._state, n, out)
        return out

    def random64(self, n):
        """The next n 64-bit words (PyTorch's `random64()`: two words, the first the high)."""
        w = self.random32(2 * n)
        return (w[0::2] << np.uint64(32)) | w[1::2]

    def get_state(self):
        """The state as PyTorch's 5056-byte uint8 tensor (torch.Generator.get_state's layout)."""
        return autograd_op.Tensor._wrap(pack_state(self))  # the class tensor.py registered

    def set_state(self, state):
        """Load a state from `get_state` (minigrad's or PyTorch's: the layout is the same)."""
        unpack_state(self, state)
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


def engine(gen: Generator | None = None) -> Generator:
    """The minigrad Generator to draw from: `gen` if given, else the default one."""
    if gen is None:
        return default_generator
    if not isinstance(gen, Generator):
        raise TypeError(f"generator: expected a minigrad.Generator, got {type(gen).__name__}")
    return gen


def generator(gen: Generator | None = None) -> np.random.Generator:
    """The NumPy generator on `gen`'s engine (or the default one's), for the samplers that
    follow PyTorch's distributions but not its exact numbers."""
    return engine(gen)._rng


def next_seed() -> int:
    """A seed for a counter-based kernel (dropout): one 32-bit word of the default stream."""
    return int(default_generator.random32(1)[0])


_pytorch_dropout = True


class use_pytorch_dropout:
    """Whether every dropout in minigrad draws PyTorch's masks (the default) or, with False,
    the counter-based hash: a process-wide setting that takes effect when called, and used
    as a context manager (`with use_pytorch_dropout(False): ...`) it is put back on exit, as
    torch.set_grad_enabled.

    By default each dropout draws as PyTorch's CPU dropout does, from the default generator:
    `torch.empty_like(x).bernoulli_(1 - p)` divided by 1 - p (a mask of (N, C, 1, ...) for
    the channel dropouts, alpha dropout's affine map of it), nothing for p == 0, evaluation
    or an empty input. The mask is drawn in the compiled pass that applies it
    (kernels/stream_dropout.py), inside the Transformer's fused ops (ReLU + dropout,
    multi-head attention, the residual connections, the embedding's input). After the same
    `manual_seed`, the same model drops the same elements as in PyTorch and leaves the
    generator in the same state.

    The opt-out, False: a mask is a counter-based hash of one seed word drawn from the
    default generator (kernels/dropout_kernels.py): faster (no generator to step, every
    element independent, so the passes run on every thread), the same for any thread count,
    and regenerated from the seed by the fused ops' backward passes; but not PyTorch's mask,
    and the generator moves on by one word per dropout instead of PyTorch's count."""

    def __init__(self, enabled: bool = True):
        global _pytorch_dropout
        self.prev = _pytorch_dropout
        _pytorch_dropout = bool(enabled)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        global _pytorch_dropout
        _pytorch_dropout = self.prev
        return False


def pytorch_dropout_enabled() -> bool:
    """Whether dropout draws PyTorch's masks (`use_pytorch_dropout`; True by default)."""
    return _pytorch_dropout


def get_rng_state():
    """The default generator's state, a uint8 tensor in PyTorch's layout (checkpoints store it,
    and torch.set_rng_state loads it)."""
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
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
