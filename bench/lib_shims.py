"""Run one PyTorch-style program with either library: `torch`, or `minigrad` in its place.

    lib = library("minigrad")     # or "torch"
    program(lib)                  # the program only ever says torch.xxx, torch.nn.xxx, ...

The benchmark programs are written once, against PyTorch's API, the way a user would write them
and then switch `import torch` to `import minigrad as torch`. Where minigrad lacks a function such
a program calls, or gives the same name a different signature, `library("minigrad")` returns
minigrad behind a thin proxy that adds a small stand-in built from what minigrad has. Each
stand-in is used only while minigrad needs it (a probe checks the real function first), and
`used_shims(lib)` names the ones a run needed, so a report can list them.
"""
from __future__ import annotations

import types

import numpy as np


def _needs(probe):
    """True when calling `probe` (which exercises minigrad's own function) fails."""
    try:
        return not probe()
    except Exception:  # noqa: BLE001 -- any failure means the torch form is not supported
        return True


def _triangle(mg, name):
    def fn(input, diagonal=0):
        """torch.tril / torch.triu: zero the elements above (tril) or below (triu) `diagonal`."""
        return mg.tensor(getattr(np, name)(np.asarray(input.numpy()), diagonal))
    fn.__name__ = name
    zero = (0, 1) if name == "tril" else (1, 0)  # the element of ones(2, 2) that must be 0
    return fn, lambda: hasattr(mg, name) and getattr(mg, name)(mg.ones(2, 2))[zero].item() == 0


def _multinomial(mg):
    def multinomial(input, num_samples, replacement=False, generator=None):
        """torch.multinomial for rows of probabilities (B, C) -> sampled ids (B, num_samples).

        Inverse-CDF sampling with minigrad's seeded generator; with replacement=False and
        num_samples > 1 it falls back to NumPy's choice per row."""
        p = np.asarray(input.detach().numpy(), dtype=np.float64)
        rows = p.reshape(-1, p.shape[-1])
        rng = mg.random.generator()
        if num_samples == 1 or replacement:
            cdf = np.cumsum(rows, axis=1)
            u = rng.random((rows.shape[0], num_samples)) * cdf[:, -1:]
            ids = np.minimum((cdf[:, None, :] <= u[:, :, None]).sum(-1), rows.shape[1] - 1)
        else:
            ids = np.stack([rng.choice(rows.shape[1], num_samples, replace=False, p=r / r.sum())
                            for r in rows])
        return mg.tensor(ids.reshape(p.shape[:-1] + (num_samples,)), dtype=mg.long)
    return multinomial, lambda: hasattr(mg, "multinomial") and \
        mg.multinomial(mg.tensor([[0.0, 1.0]]), 1).shape == (1, 1)


def _randint(mg):
    own = mg.randint

    def randint(*args, size=None, dtype=None, **kw):
        """torch.randint(high, size) / (low, high, size): the size is the last positional."""
        if size is None:
            *bounds, size = args
        else:
            bounds = list(args)
        low, high = (0, bounds[0]) if len(bounds) == 1 else bounds
        out = own(low, high, size=tuple(size))
        return out if dtype is None else out.to(dtype)
    return randint, lambda: tuple(mg.randint(5, (3,)).shape) == (3,)


def _sin_cos(mg, name):
    def fn(input):
        """torch.sin / torch.cos for a constant table (no gradient)."""
        return mg.tensor(getattr(np, name)(np.asarray(input.numpy())))
    fn.__name__ = name
    return fn, lambda: hasattr(mg, name) and abs(getattr(mg, name)(mg.zeros(1))[0].item()
                                                 - getattr(np, name)(0.0)) < 1e-6


# name -> factory(minigrad) returning (stand-in, probe of minigrad's own support)
SHIMS = {
    "bool": lambda mg: (np.bool_, lambda: hasattr(mg, "bool")),
    "tril": lambda mg: _triangle(mg, "tril"),
    "triu": lambda mg: _triangle(mg, "triu"),
    "multinomial": _multinomial,
    "randint": _randint,
    "sin": lambda mg: _sin_cos(mg, "sin"),
    "cos": lambda mg: _sin_cos(mg, "cos"),
}


class _Shimmed(types.ModuleType):
    """minigrad, with the stand-ins it still needs; every other name is minigrad's own."""

    def __init__(self, lib, shims):
        super().__init__(lib.__name__, lib.__doc__)
        self._lib, self._shims, self._used = lib, shims, set()

    def __getattr__(self, name):
        if name in self._shims:
            self._used.add(name)
            return self._shims[name]
        return getattr(self._lib, name)


def library(name):
    """The module `torch`, or `minigrad` (behind stand-ins for the functions it lacks)."""
    if name == "torch":
        import torch
        return torch
    if name != "minigrad":
        raise ValueError(f"library: unknown library {name!r}; choose 'minigrad' or 'torch'")
    import minigrad
    shims = {}
    for key, factory in SHIMS.items():
        fn, probe = factory(minigrad)
        if _needs(probe):
            shims[key] = fn
    return _Shimmed(minigrad, shims)


def used_shims(lib):
    """Names of the stand-ins a run called (empty for torch, or when minigrad had them all)."""
    return sorted(getattr(lib, "_used", ()))
