"""The cost of PyTorch's dropout masks (minigrad.random.use_pytorch_dropout(), the default) on
the toy Transformer's training step (bench/step_worker.py's, minigrad only), against the
hash's (the opt-out): one process, one thread, CPU time, rounds of steps alternating the
switch off and on; prints each setting's median step with its spread and the ratio. The
fused dropout ops run either way: with the switch on, each PyTorch mask drawn in the fused
op's pass that applies it (ReLU + dropout, attention, the residual connections, the
embeddings' input); off, the hash's masks.

A third arm, "separate", runs PyTorch's masks with the residual connections' ops and the
embeddings' input unfused (what the fused ops' draws save).

--gpt times the small GPT's step of bench/small_models.py instead (plain nn.Dropout modules).

    NUMBA_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice -n 19 python bench/dropout_switch.py
        [rounds] [--steps 4] [--gpt]
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


class _Unfused:
    """The third arm, "separate": PyTorch's masks with the residual connections' ops and the
    embeddings' input run as their separate ops (as before they drew PyTorch's masks
    themselves); ReLU + dropout and attention stay fused. Entered, fast_path takes neither."""

    def __enter__(self):
        from minigrad.nn import fast_path
        self.saved = fast_path._drawing, fast_path.PositionalEncoding
        # no fused residual op takes the input; no module is the PositionalEncoding it fuses
        fast_path._drawing = lambda input, residual: False
        fast_path.PositionalEncoding = type("NotFused", (), {})
        return self

    def __exit__(self, *exc):
        from minigrad.nn import fast_path
        fast_path._drawing, fast_path.PositionalEncoding = self.saved


ARMS = {"hash": (False, False), "drawn": (True, False), "separate": (True, True)}
NAMES = {"hash": "hash (opt-out)", "drawn": "PyTorch's (default)",
         "separate": "PyTorch's, residual ops separate"}


def _toy_step():
    from step_worker import minigrad_stepper
    args = argparse.Namespace(vocab=2000, d_model=128, nhead=4, layers=2, ffn=512, dropout=0.1,
                              batch=64, len=20, cpu_time=True)
    return minigrad_stepper(args)[0]


def _gpt_step():
    import minigrad
    from small_models import GPT_CONFIG, generated_text, make_gpt
    return make_gpt(minigrad, generated_text(100_000), **GPT_CONFIG)[0]


def main(rounds=6, steps=4, gpt=False):
    import contextlib
    import minigrad
    from minigrad import random as mrandom
    minigrad.tune_malloc()
    step = _gpt_step() if gpt else _toy_step()
    # (the GPT's dropouts are plain nn.Dropout modules: no fused op to unfuse)
    arms = [k for k in ARMS if not (gpt and k == "separate")]
    times = {k: [] for k in arms}

    def run(arm, n, record):
        drawn, separate = ARMS[arm]
        with mrandom.use_pytorch_dropout(drawn), (_Unfused() if separate
                                                 else contextlib.nullcontext()):
            for _ in range(n):
                t0 = time.process_time()
                step()
                if record:
                    times[arm].append((time.process_time() - t0) * 1e3)
    for arm in arms:  # warm up (and compile) every path
        run(arm, 3, False)
    for r in range(rounds):   # each round in another order: no arm always first
        k = r % len(arms)
        for arm in arms[k:] + arms[:k]:
            run(arm, steps, True)
    med = {k: statistics.median(v) for k, v in times.items()}
    print("the small GPT's step (bench/small_models.py)" if gpt else "the toy Transformer's step")
    for k in arms:
        v = sorted(times[k])
        q1, q3 = v[len(v) // 4], v[3 * len(v) // 4]
        print(f"{NAMES[k]:33s} median {med[k]:7.2f} ms CPU  [quartiles {q1:.2f}-{q3:.2f}, "
              f"min {v[0]:.2f}, max {v[-1]:.2f}; {len(v)} steps]")
    print(f"ratio PyTorch's / hash {med['drawn'] / med['hash']:.3f}" + (
        "" if gpt else f"; separate / hash {med['separate'] / med['hash']:.3f}"))


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rounds", type=int, nargs="?", default=6)
    ap.add_argument("--steps", type=int, default=4, help="steps per arm and round")
    ap.add_argument("--gpt", action="store_true",
                    help="the small GPT's step (bench/small_models.py) instead of the toy's")
    a = ap.parse_args()
    main(a.rounds, a.steps, a.gpt)
