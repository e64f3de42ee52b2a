"""The cost of PyTorch's dropout masks (minigrad.random.use_pytorch_dropout(), the default) on
the toy Transformer's training step (bench/step_worker.py's, minigrad only), against the
hash's (the opt-out): one process, one thread, CPU time, rounds of steps alternating the
switch off and on; prints each setting's median step with its spread and the ratio. The
fused dropout ops run either way: with the switch on, each PyTorch mask drawn in the fused
op's pass that applies it (ReLU + dropout, attention, the residual connections, the
embeddings' input); off, the hash's masks.

A third arm, "separate", runs PyTorch's masks with the residual connections' ops and the
embeddings' input unfused (what the fused ops' draws save).

    NUMBA_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice -n 19 python bench/dropout_switch.py [rounds]
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


def main(rounds=6, steps=4):
    import contextlib
    import minigrad
    from minigrad import random as mrandom
    from step_worker import minigrad_stepper
    args = argparse.Namespace(vocab=2000, d_model=128, nhead=4, layers=2, ffn=512, dropout=0.1,
                              batch=64, len=20, cpu_time=True)
    minigrad.tune_malloc()
    step, _ = minigrad_stepper(args)
    times = {k: [] for k in ARMS}

    def run(arm, n, record):
        drawn, separate = ARMS[arm]
        with mrandom.use_pytorch_dropout(drawn), (_Unfused() if separate
                                                 else contextlib.nullcontext()):
            for _ in range(n):
                t0 = time.process_time()
                step()
                if record:
                    times[arm].append((time.process_time() - t0) * 1e3)
    for arm in ARMS:  # warm up (and compile) every path
        run(arm, 2, False)
    order = list(ARMS)
    for r in range(rounds):   # each round in another order: no arm always first
        for arm in order[r % 3:] + order[:r % 3]:
            run(arm, steps, True)
    med = {k: statistics.median(v) for k, v in times.items()}
    for k in ARMS:
        v = sorted(times[k])
        q1, q3 = v[len(v) // 4], v[3 * len(v) // 4]
        print(f"{NAMES[k]:33s} median {med[k]:7.2f} ms CPU  [quartiles {q1:.2f}-{q3:.2f}, "
              f"min {v[0]:.2f}, max {v[-1]:.2f}; {len(v)} steps]")
    print(f"ratio PyTorch's / hash {med['drawn'] / med['hash']:.3f}; separate / hash "
          f"{med['separate'] / med['hash']:.3f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 6)
