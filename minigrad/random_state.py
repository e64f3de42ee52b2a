"""A generator's state as bytes in PyTorch's layout (at::CPUGeneratorImplState), so that
`torch.set_rng_state(minigrad.get_rng_state())` and the reverse continue the same stream.

The layout, 5056 bytes: the seed (int64), mt19937's `left` and `seeded` (int32 each), `next`
(uint64), the 624 state words (uint64 each), three unused doubles of an old normal sampler
with the cached normal value between them (`normal_y`) and its flag (int32, then 4 bytes of
padding), then the float normal cache (float32) and its flag (1 byte, 3 of padding).

PyTorch's engine counts down `left` and reads `state[next]`; NumPy's MT19937 reads `key[pos]`
and regenerates the block when pos reaches 624. In use left + next = 625, so pos = next; a
freshly seeded engine has left = 1, next = 0 (regenerate first), which is NumPy's pos = 624.
"""
from __future__ import annotations

import numpy as np

N = 624
LAYOUT = np.dtype([("seed", "<u8"), ("left", "<i4"), ("seeded", "<i4"), ("next", "<u8"),
                   ("state", "<u8", (N,)), ("normal_x", "<f8"), ("normal_y", "<f8"),
                   ("normal_rho", "<f8"), ("normal_is_valid", "<i4"), ("pad", "<i4"),
                   ("float_normal", "<f4"), ("float_valid", "u1"), ("pad2", "u1", (3,))])
SIZE = LAYOUT.itemsize  # 5056, torch.get_rng_state().numel()


def _fresh_key(seed):
    bits = np.random.MT19937()
    bits._legacy_seeding(seed & 0xFFFFFFFF)
    return bits.state["state"]["key"]


def pack_state(gen) -> np.ndarray:
    """gen's state as SIZE uint8."""
    mt = gen._bits.state["state"]
    key, pos = np.asarray(mt["key"], dtype=np.uint32), int(mt["pos"])
    rec = np.zeros((), LAYOUT)
    rec["seed"], rec["seeded"], rec["state"] = gen._seed, 1, key
    if pos >= N:  # the next word regenerates the block; PyTorch says next = 0 right after seeding
        fresh = np.array_equal(key, _fresh_key(gen._seed))
        rec["left"], rec["next"] = 1, 0 if fresh else N
    else:
        rec["left"], rec["next"] = N + 1 - pos, pos
    if gen.normal_cache is not None:
        rec["normal_is_valid"], rec["normal_y"] = 1, gen.normal_cache
    if gen._float_normal is not None:
        rec["float_valid"], rec["float_normal"] = 1, gen._float_normal
    return np.frombuffer(rec.tobytes(), dtype=np.uint8).copy()


def _as_bytes(state):
    """A state given as a minigrad or PyTorch tensor, or an array, as SIZE uint8."""
    if hasattr(state, "numpy") and hasattr(state, "detach"):  # a minigrad or torch Tensor
        arr = state.detach().cpu().numpy()
    else:
        arr = np.asarray(state)
    if arr.dtype != np.uint8:
        if arr.dtype.kind in "iu" and arr.size and (arr.min() < 0 or arr.max() > 255):
            raise RuntimeError(f"set_rng_state: a state is bytes (uint8), got values out of "
                               f"[0, 255] in dtype {arr.dtype}")
        if arr.dtype.kind not in "iu":
            raise TypeError(f"set_rng_state: expected a ByteTensor (uint8) state, got dtype "
                            f"{arr.dtype}")
        arr = arr.astype(np.uint8)
    if arr.size != SIZE:
        raise RuntimeError(f"set_rng_state: expected a state of {SIZE} bytes (the layout of "
                           f"get_rng_state), got {arr.size} (shape {arr.shape})")
    return np.ascontiguousarray(arr).reshape(-1)


def _legacy(gen, state):
    """A state saved before the engine was PyTorch's (a NumPy bit generator's dict): an MT19937
    one loads as it is; another (PCG64) reseeds deterministically from its numbers, so an old
    checkpoint still resumes repeatably, though not with the stream it was saved in."""
    if not isinstance(state.get("bit_generator"), str) or not isinstance(state.get("state"), dict):
        raise ValueError(f"set_rng_state: a dict state is an older minigrad's, with "
                         f"'bit_generator' and 'state'; got keys {sorted(map(str, state))}")
    gen.manual_seed(gen._seed)
    if state.get("bit_generator") == "MT19937":
        gen._bits.state = state
        return
    words = np.random.default_rng(np.random.SeedSequence(
        [int(v) % 2 ** 32 for v in _ints(state)])).integers(0, 2 ** 32, N, dtype=np.uint64)
    gen._bits.state = {"bit_generator": "MT19937",
                       "state": {"key": words.astype(np.uint32), "pos": N}}


def _ints(obj):
    if isinstance(obj, dict):
        for k in sorted(obj):
            yield from _ints(obj[k])
    elif isinstance(obj, (int, np.integer)) and not isinstance(obj, bool):
        yield int(obj)
        yield int(obj) >> 32
        yield int(obj) >> 64
        yield int(obj) >> 96


def unpack_state(gen, state) -> None:
    """Load `state` (SIZE bytes in LAYOUT, or a legacy dict) into gen."""
    if isinstance(state, dict):
        _legacy(gen, state)
        return
    rec = np.frombuffer(_as_bytes(state).tobytes(), dtype=LAYOUT)[0]
    left, nxt = int(rec["left"]), int(rec["next"])
    if not 1 <= left <= N + 1 or not 0 <= nxt <= N:
        raise RuntimeError(f"set_rng_state: not a generator state (left={left}, next={nxt})")
    gen.manual_seed(int(rec["seed"]))
    pos = N if left <= 1 else nxt
    gen._bits.state = {"bit_generator": "MT19937",
                       "state": {"key": (rec["state"] & 0xFFFFFFFF).astype(np.uint32),
                                 "pos": pos}}
    gen.normal_cache = float(rec["normal_y"]) if rec["normal_is_valid"] else None
    gen._float_normal = float(rec["float_normal"]) if rec["float_valid"] else None
