# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # A1. Inside the kernels (optional)
#
# *This appendix is not part of either lecture and nothing later depends on it: read it if you
# want to know how minigrad's two hot operations are made fast, or skip it.*
#
# The engine tutorials (1 to 5) met every operation as a forward and a backward rule on NumPy
# arrays, and most of them are one line of NumPy. Two are worth opening, because a Transformer
# spends most of its time in them: **matrix products** (every projection, the feed-forward
# network, the attention scores, the output layer) and **softmax** (every attention row and the
# final distribution over the vocabulary). Training also draws a large number of **dropout** masks.
#
# `minigrad.kernels` has two interchangeable implementations of these operations:
#
# - `"numba"` (the default): hand-written kernels compiled by Numba;
# - `"numpy"`: plain NumPy, in `minigrad.kernels.reference`, which also serves as the ground
#   truth in the tests.
#
# This tutorial checks that the two agree, times them, and explains the three ideas that make
# the Numba kernels fast: register tiling, fusion, and a counter-based random generator.
# Timings depend on the machine and on whatever else it is doing, so they are printed but
# never asserted, and each one is the best of several runs: the fastest run is the one that
# was least disturbed by other programs, so it is the fairest figure on a busy machine.

# %%
import importlib
import time

from _common import SMALL, savefig

import matplotlib.pyplot as plt
import numpy as np

import minigrad as mg
from minigrad import kernels
from minigrad.kernels import reference

# The package's `matmul` and `softmax` names are functions; the modules behind them:
mm_module = importlib.import_module("minigrad.kernels.tiled_matmul")
sm_module = importlib.import_module("minigrad.kernels.softmax_kernels")

print("backend:", kernels.get_backend(), " choices:", kernels.BACKENDS)
assert mg.get_backend is kernels.get_backend  # the same switch, also at the top level

# %% [markdown]
# ## Switching backends
#
# `set_backend` (or the environment variable `MINIGRAD_BACKEND`) picks the implementation for
# every tensor operation that follows. The kernels themselves take and return NumPy arrays;
# tensors call them inside their ops.

# %%
rng = np.random.default_rng(0)
scores = mg.tensor(rng.standard_normal((4, 10)).astype(np.float32))
previous = kernels.get_backend()
results = {}
for backend in kernels.BACKENDS:
    mg.set_backend(backend)
    results[backend] = scores.softmax(-1).numpy()
mg.set_backend(previous)
diff = np.abs(results["numba"] - results["numpy"]).max()
print(f"largest difference between the backends: {diff:.1e}")
assert diff < 1e-6


# %% [markdown]
# A small timing helper: run once to warm up (the first Numba call compiles the kernel, or
# loads it from Numba's on-disk cache), then report the *best* of several runs. Other programs
# can only make a run slower, never faster, so the minimum is the estimate least affected by
# them. (A median still reports a slow time when most runs are disturbed, and on a busy
# machine a parallel kernel can be disturbed a hundredfold: its threads wait for each other.)

# %%
def best_seconds(fn, repeats):
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def on_backend(backend, fn, *args):
    """A function that runs kernels.fn(*args) with `backend` selected."""
    def run():
        kernels.set_backend(backend)
        try:
            return fn(*args)
        finally:
            kernels.set_backend(previous)
    return run


repeats = 5 if SMALL else 20

# %% [markdown]
# ## Matrix products
#
# This appendix is about the register-tiled kernel of `minigrad/kernels/tiled_matmul.py`. In
# training, the `"numba"` backend sends products to NumPy's own OpenBLAS instead, called
# one thread per block from inside Numba's thread pool (`minigrad/kernels/blas.py` says why:
# on some processors OpenBLAS's hand-written kernels are faster); a small product is one call
# in the calling thread, where the pool would cost more than it saves. `kernels.policy.USE_BLAS = False`
# makes the tiled kernel do every product, and we set it for this section.

# %%
use_blas = kernels.policy.USE_BLAS
kernels.policy.USE_BLAS = False

# %% [markdown]
# ### Correctness
#
# The shapes below are those of a small Transformer (batch 64, sentences of 20 tokens,
# $d_{model} = 128$, 4 heads of 32, a feed-forward width of 512 and a vocabulary of 2000);
# the small run shrinks the batch. We compare each product with a float64 computation: the two
# float32 results may differ from each other in the last digits, because they add the same
# numbers in a different order, but both must be close to the exact answer.

# %%
batch = 8 if SMALL else 64
rows = batch * 20
matmul_shapes = {
    "feed-forward  (B*T, 128) @ (128, 512)": ((rows, 128), (128, 512)),
    "output layer  (B*T, 128) @ (128, 2000)": ((rows, 128), (128, 2000)),
    "scores  (B*H, T, 32) @ (B*H, 32, T)": ((batch * 4, 20, 32), (batch * 4, 32, 20)),
    "mix values  (B*H, T, T) @ (B*H, T, 32)": ((batch * 4, 20, 20), (batch * 4, 20, 32)),
}
operands = {}
for name, (sa, sb) in matmul_shapes.items():
    a = rng.standard_normal(sa).astype(np.float32)
    b = rng.standard_normal(sb).astype(np.float32)
    operands[name] = (a, b)
    exact = np.matmul(a.astype(np.float64), b.astype(np.float64))
    c_numba = on_backend("numba", kernels.matmul, a, b)()
    c_numpy = on_backend("numpy", kernels.matmul, a, b)()
    err_numba = np.abs(c_numba - exact).max()
    err_numpy = np.abs(c_numpy - exact).max()
    print(f"{name:42s} max error: numba {err_numba:.1e}, numpy {err_numpy:.1e}")
    assert c_numba.shape == exact.shape and c_numba.dtype == np.float32
    assert err_numba < 1e-4 * np.abs(exact).max()

# %% [markdown]
# The kernel reads its operands through their strides, so transposed views and broadcast batch
# dimensions (the weight gradient of a layer is `x.T @ grad`) need no copies from the caller.

# %%
a, b = operands["feed-forward  (B*T, 128) @ (128, 512)"]
g = rng.standard_normal((rows, 512)).astype(np.float32)
kernels.set_backend("numba")
assert np.allclose(kernels.matmul(a.T, g), a.T.astype(np.float64) @ g, atol=1e-3)
w = rng.standard_normal((32, 7)).astype(np.float32)
x3 = rng.standard_normal((3, 5, 32)).astype(np.float32)
assert np.allclose(kernels.matmul(x3, w), x3 @ w, atol=1e-4)  # (B, T, D) @ (D, N)
kernels.set_backend(previous)

# %% [markdown]
# ### Why a hand-written kernel can keep up with BLAS: register tiling
#
# Computing $C = AB$ naively, one output element at a time, loads two numbers for every
# multiply-add, so the processor spends its time waiting for memory. The kernel in
# `minigrad/kernels/tiled_matmul.py` instead computes a small *tile* of $C$, $MR$ rows by $NR$
# columns, held entirely in vector registers. For each step along the shared dimension $k$ it
# loads one short row of $B$ ($NR$ numbers, as a few SIMD vectors), broadcasts $MR$ numbers of
# $A$, and performs $MR \times NR$ multiply-adds. Each value of $B$ is reused $MR$ times and
# each value of $A$ $NR$ times before it leaves the registers.
#
# The tile size follows from the module's constants (a 64-byte vector holds 16 float32 lanes):

# %%
lanes = mm_module.VBYTES // 4
MR, NR = mm_module.MR, mm_module.NV * lanes
flops_per_load = (MR * NR) / (MR + NR)
print(f"tile: {MR} x {NR} float32, {MR * mm_module.NV} accumulator registers, "
      f"{MR * NR} multiply-adds per {MR + NR} values loaded ({flops_per_load:.1f} per load)")
assert lanes == 16 and MR * NR / (MR + NR) > 1  # a naive loop does 1 per 2 loads

# %% [markdown]
# Two more tricks complete it: *packing* copies $B$ into column panels so that the tile reads
# memory sequentially whatever the original layout, and *blocking* along $k$ keeps the piece of
# $B$ being reused small enough to stay in the fastest cache. These are the ideas behind every
# fast BLAS library; the docstring of `tiled_matmul.py` walks through them.
#
# ### Timings
#
# Read these numbers with care. Both backends use all the cores, and a multi-threaded call
# is only as fast as its slowest thread. If another program keeps one core busy (a test suite,
# a browser), the threads of a parallel kernel wait for each other and a call can become many
# times slower, so compare the backends on an otherwise idle machine.

# %%
timings = {}
for name, (a, b) in operands.items():
    t_nb = best_seconds(on_backend("numba", kernels.matmul, a, b), repeats)
    t_np = best_seconds(on_backend("numpy", kernels.matmul, a, b), repeats)
    flops = 2 * a.shape[0] * a.shape[1] * b.shape[-1] if a.ndim == 2 else \
        2 * a.shape[0] * a.shape[1] * a.shape[2] * b.shape[2]
    timings[name] = (t_nb, t_np)
    print(f"{name:42s} numba {t_nb * 1e3:7.3f} ms ({flops / t_nb / 1e9:5.1f} GFLOP/s)   "
          f"numpy {t_np * 1e3:7.3f} ms ({flops / t_np / 1e9:5.1f} GFLOP/s)")

# %%
kernels.policy.USE_BLAS = use_blas  # back to the default

# %% [markdown]
# ## Softmax
#
# ### Correctness
#
# Attention rows are short (one weight per key, here 24) and there are many of them; output
# rows are long (one per vocabulary word, here 2000). Both shapes are checked, forward and
# backward, against the NumPy reference.

# %%
softmax_shapes = {"attention rows": (768 if SMALL else 3072, 24),
                  "vocabulary rows": (192 if SMALL else 768, 2000)}
sm_inputs = {}
for name, shape in softmax_shapes.items():
    x = (3 * rng.standard_normal(shape)).astype(np.float32)
    gy = rng.standard_normal(shape).astype(np.float32)
    sm_inputs[name] = (x, gy)
    kernels.set_backend("numba")
    y = kernels.softmax(x)
    dx = kernels.softmax_backward(y, gy)
    ly = kernels.log_softmax(x)
    kernels.set_backend(previous)
    errs = [np.abs(y - reference.softmax(x)).max(),
            np.abs(dx - reference.softmax_backward(y, gy)).max(),
            np.abs(ly - reference.log_softmax(x)).max()]
    print(f"{name:16s} softmax {errs[0]:.1e}  backward {errs[1]:.1e}  log_softmax {errs[2]:.1e}")
    assert max(errs) < 1e-5
    assert np.allclose(y.sum(axis=1), 1.0, atol=1e-5)

# %% [markdown]
# ### Why fusing helps: counting trips through memory
#
# The NumPy reference is short and clear:
#
# ```python
# m = x.max(-1, keepdims=True)        # read x
# e = np.exp(x - m)                   # read x, write a temporary; read it, write e
# s = e.sum(-1, keepdims=True)        # read e
# y = e / s                           # read e, write y
# ```
#
# Each line is a separate pass over the whole array, and every temporary is written out and
# read back. When the array is bigger than the cache, each pass is a trip to main memory, and
# for an operation this simple the trips *are* the cost: the arithmetic is nearly free. The
# fused kernel works row by row instead. It reads a row once into the fastest cache, finds the
# maximum, exponentiates and sums while the row is there, scales it, and writes it once.

# %%
trips_numpy = {"reads": 5, "writes": 3}  # max, subtract, exp, sum, divide (see above)
trips_fused = {"reads": 1, "writes": 1}
n_vocab = 768 * 2000
mb = lambda trips: sum(trips.values()) * n_vocab * 4 / 1e6  # float32 bytes moved, in MB
print(f"(768, 2000) float32 softmax: NumPy moves about {mb(trips_numpy):.0f} MB, "
      f"the fused kernel about {mb(trips_fused):.0f} MB")
assert sum(trips_numpy.values()) == 8 and sum(trips_fused.values()) == 2
assert round(mb(trips_numpy)) == 49 and round(mb(trips_fused)) == 12
assert mb(trips_numpy) / mb(trips_fused) == 4

# %% [markdown]
# So for a $(768, 2000)$ float32 array the reference moves about 49 MB through memory, four
# times the 12 MB of the fused kernel. The backward pass, $dx = y \odot (g - \sum_j g_j y_j)$,
# has the same structure and gains in the same way.

# %% [markdown]
# ### A vectorised `exp`
#
# Fusing only pays off if the loop over a row runs on SIMD vectors, and a call to the C
# library's `exp` inside the loop prevents that. So the kernel computes $e^x$ itself, with
# nothing but arithmetic that vectorises:
#
# $$e^x = 2^n \cdot e^r, \qquad n = \operatorname{round}(x / \ln 2), \quad r = x - n \ln 2,
#   \quad |r| \le \tfrac{\ln 2}{2},$$
#
# with $e^r$ from a degree-7 polynomial, and $2^n$ built directly from the bits of a float32:
# its exponent field holds $n + 127$ in bits 23 to 30. In NumPy:

# %%
n = np.arange(-10, 11, dtype=np.int32)
two_to_n = ((n + 127) << 23).astype(np.int32).view(np.float32)
print(dict(zip(n[8:13].tolist(), two_to_n[8:13].tolist())))
assert np.array_equal(two_to_n, np.float32(2.0) ** n.astype(np.float32))

# %% [markdown]
# How accurate is the polynomial? The kernel's `fast_exp` can be called from any Numba
# function; here it is compared with float64 `np.exp` across the whole float32 range where
# $e^x$ is a normal number.

# %%
from numba import njit

fast_exp = sm_module.fast_exp


@njit
def exp_with_kernel(x, out):
    for i in range(x.size):
        out[i] = fast_exp(x[i])


xs = np.linspace(-87.0, 88.0, 20_001 if SMALL else 200_001).astype(np.float32)
ys = np.empty_like(xs)
exp_with_kernel(xs, ys)
rel_err = np.abs(ys.astype(np.float64) / np.exp(xs.astype(np.float64)) - 1)
print(f"largest relative error of the kernel's exp: {rel_err.max():.1e}")
assert rel_err.max() < 1e-6  # float32 itself has a relative precision of about 6e-8

fig, ax = plt.subplots(figsize=(7, 3.5))
ax.semilogy(xs[::10], np.maximum(rel_err[::10], 1e-10), ",", alpha=0.6)
ax.axhline(np.finfo(np.float32).eps / 2, color="k", ls="--", label="float32 rounding (2^-24)")
ax.set_title("Relative error of the softmax kernel's float32 exp")
ax.set_xlabel("x")
ax.set_ylabel("|exp_kernel(x) / exp(x) - 1|")
ax.legend()
savefig(fig, "A1_exp_error")

# %% [markdown]
# ### Timings

# %%
for name, (x, gy) in sm_inputs.items():
    y = reference.softmax(x)
    t_f = [best_seconds(on_backend(b, kernels.softmax, x), repeats) for b in ("numba", "numpy")]
    t_b = [best_seconds(on_backend(b, kernels.softmax_backward, y, gy), repeats)
           for b in ("numba", "numpy")]
    timings[f"softmax, {name} {x.shape}"] = tuple(t_f)
    timings[f"softmax backward, {name}"] = tuple(t_b)
    print(f"{name:16s} forward: numba {t_f[0] * 1e6:8.1f} us, numpy {t_f[1] * 1e6:8.1f} us   "
          f"backward: numba {t_b[0] * 1e6:8.1f} us, numpy {t_b[1] * 1e6:8.1f} us")

# %%
labels = list(timings)
t_numba = np.array([timings[k][0] for k in labels]) * 1e3
t_numpy = np.array([timings[k][1] for k in labels]) * 1e3
pos = np.arange(len(labels))
fig, ax = plt.subplots(figsize=(8, 0.5 * len(labels) + 1.5))
ax.barh(pos - 0.2, t_numba, height=0.4, label="numba")
ax.barh(pos + 0.2, t_numpy, height=0.4, label="numpy")
ax.set_yticks(pos, labels, fontsize=8)
ax.invert_yaxis()
ax.set_xscale("log")
ax.set_title(f"Best time per call ({'small' if SMALL else 'full'} sizes; this machine, this run)")
ax.set_xlabel("milliseconds (log scale)")
ax.set_ylabel("operation")
ax.legend()
savefig(fig, "A1_kernel_timings")

# %% [markdown]
# ## Dropout with a counter-based generator
#
# Dropout needs one random number per element, millions per training step. An ordinary
# generator is a *sequence*: number $i$ is computed from number $i-1$, so threads have to share
# it, and the mask depends on how the work was split between them. The kernel uses a
# *counter-based* generator instead: the random bits of element $i$ are a hash (splitmix64) of
# the seed and $i$. Every element can be computed independently, in any order, by any thread,
# and the mask is the same whatever the number of threads. The NumPy reference computes the
# same hash, so both backends give the same mask, bit for bit.
#
# It is not PyTorch's mask, though, so by default minigrad's dropouts draw PyTorch's instead:
# `bernoulli_(1 - p)` from the mt19937 generator, one element after the other, in a compiled
# pass that draws each chunk of words and applies it at once
# (`minigrad/kernels/stream_dropout.py`), so a model drops the very elements PyTorch drops.
# The hash is the opt-out, `minigrad.random.use_pytorch_dropout(False)`: faster, and on every
# thread.

# %%
shape, p, seed = (256, 1000), 0.1, 1234
masks = {}
for backend in kernels.BACKENDS:
    kernels.set_backend(backend)
    masks[backend] = kernels.dropout_mask(shape, p, seed)
kernels.set_backend(previous)
m = masks["numba"]
kept = (m > 0).mean()
print(f"fraction kept: {kept:.4f} (expected {1 - p}), kept values: {np.unique(m)}")
assert np.array_equal(masks["numba"], masks["numpy"])
assert abs(kept - (1 - p)) < 0.005
assert np.allclose(np.unique(m), [0.0, 1 / (1 - p)])  # survivors are scaled by 1 / (1 - p)
assert not np.array_equal(m, kernels.dropout_mask(shape, p, seed + 1))

# %% [markdown]
# ## The two-thread-pool hazard
#
# Both NumPy (through OpenBLAS) and Numba (through its `parallel=True` loops) run work on a
# pool of threads, and they are *different* pools. After finishing an operation, each pool
# keeps its threads spinning for a while, ready for the next job. On a machine with only a
# couple of cores, an OpenBLAS matmul followed by a Numba softmax means two sets of busy
# threads fighting over the same cores, and every switch from one library to the other costs
# far more than either operation. A training step switches hundreds of times if matmuls go to
# NumPy and softmax to Numba.
#
# That is why the `"numba"` backend never lets OpenBLAS start a pool of its own. Its products do
# go to OpenBLAS, but to the single-threaded routine, one block of the product per call, from
# inside Numba's threads, with OpenBLAS's thread count set to 1 while they run
# (`minigrad/kernels/blas.py`): one pool does all the work, so there is nothing to fight over.
# The same reasoning explains a practical rule for benchmarks: compare minigrad and PyTorch in
# separate processes, never in one.

# %% [markdown]
# ## Exercise: a softmax that does not overflow
#
# Write `softmax(x)` over the last axis of a NumPy array that stays finite for scores like
# 1000 (where `np.exp` overflows). Hint: $\operatorname{softmax}(x) = \operatorname{softmax}(x - c)$
# for any constant $c$ per row.
#
# Replace the `raise NotImplementedError` and run the cell: the checker tries your function and
# says what is wrong, if anything. A worked solution is in the next cell, hidden in Jupyter
# (click the bar to show it); the tutorial uses it, so the rest runs either way.

# %%
from _exercises import check, check_stable_softmax


def softmax(x):
    """Softmax over the last axis, safe for large scores."""
    raise NotImplementedError


check(check_stable_softmax, softmax);

# %% tags=["solution"] jupyter={"source_hidden": true}
# Solution
def softmax(x):
    """Softmax over the last axis, safe for large scores."""
    e = np.exp(x - x.max(axis=-1, keepdims=True))   # the largest exponent is now 0
    return e / e.sum(axis=-1, keepdims=True)


assert check(check_stable_softmax, softmax)

# %% [markdown]
# ## Test yourself
#
# **1.** How many floating-point operations (counting a multiply and an add as two) does the
# feed-forward product $(1280, 128) @ (128, 512)$ of the full-size example take?
#
# <details><summary>Answer</summary>
#
# Each of the $1280 \times 512$ outputs needs 128 multiply-adds:
# $2 \times 1280 \times 128 \times 512 = 167{,}772{,}160$, about 0.17 GFLOP.
#
# </details>

# %%
assert 2 * 1280 * 128 * 512 == 167_772_160
(a_ff, b_ff) = operands["feed-forward  (B*T, 128) @ (128, 512)"]
print(f"in this run: {2 * a_ff.shape[0] * 128 * 512:,} FLOP for batch {batch}")

# %% [markdown]
# **2.** Count the trips through memory of the reference softmax *backward*,
# `y * (g - (g * y).sum(-1, keepdims=True))`, and of a fused kernel.
#
# <details><summary>Answer</summary>
#
# `g * y` reads two arrays and writes one; the sum reads it; `g - s` reads one and
# writes one; `y * (...)` reads two and writes one: 6 reads and 3 writes, 9 trips. A fused
# kernel reads $y$ and $g$ once and writes $dx$ once: 3 trips.
#
# </details>

# %%
reads = 2 + 1 + 1 + 2
writes = 1 + 0 + 1 + 1
assert (reads, writes, reads + writes) == (6, 3, 9)
assert 2 + 1 == 3

# %% [markdown]
# **3.** Why does the backward pass of dropout not need to store the mask?
#
# <details><summary>Answer</summary>
#
# The mask is a pure function of the seed and the element index, so calling
# `dropout(grad, p, seed)` with the forward pass's seed regenerates exactly the same mask and
# multiplies the gradient by it.
#
# </details>

# %%
x = rng.standard_normal(shape).astype(np.float32)
grad = rng.standard_normal(shape).astype(np.float32)
kernels.set_backend("numba")
assert np.array_equal(kernels.dropout(x, p, seed), x * kernels.dropout_mask(shape, p, seed))
assert np.array_equal(kernels.dropout(grad, p, seed), grad * kernels.dropout_mask(shape, p, seed))
kernels.set_backend(previous)

# %% [markdown]
# **4.** Which float32 has the bit pattern `(n + 127) << 23` for $n = -3$?
#
# <details><summary>Answer</summary>
#
# The exponent field holds $124 = -3 + 127$ and the mantissa is zero, so the number is
# $2^{-3} = 0.125$.
#
# </details>

# %%
assert np.array([(-3 + 127) << 23], dtype=np.int32).view(np.float32)[0] == 0.125
print("all exercises check out")
