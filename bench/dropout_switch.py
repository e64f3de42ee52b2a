"""The cost of PyTorch's dropout masks (minigrad.random.use_pytorch_dropout(), the default) on
the toy Transformer's training step (bench/step_worker.py's, minigrad only), against the
hash's (the opt-out): one process, one thread, CPU time, rounds of steps alternating the
switch off and on; prints each setting's median step with its spread and the ratio. The
fused dropout ops run either way: with the switch on, each PyTorch mask drawn in the fused
op's pass that applies it (ReLU + dropout, attention, the residual connections, the
embeddings' input); off, the hash's masks.

    NUMBA_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice -n 19 python bench/dropout_switch.py [rounds]
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main(rounds=6, steps=4):
    import minigrad
    from minigrad import random as mrandom
    from step_worker import minigrad_stepper
    args = argparse.Namespace(vocab=2000, d_model=128, nhead=4, layers=2, ffn=512, dropout=0.1,
                              batch=64, len=20, cpu_time=True)
    minigrad.tune_malloc()
    step, _ = minigrad_stepper(args)
    times = {False: [], True: []}
    for setting in (False, True):  # warm up (and compile) both paths
        mrandom.use_pytorch_dropout(setting)
        step()
        step()
    for r in range(rounds):
        for setting in ((False, True) if r % 2 == 0 else (True, False)):
            mrandom.use_pytorch_dropout(setting)
            for _ in range(steps):
                t0 = time.process_time()
                step()
                times[setting].append((time.process_time() - t0) * 1e3)
    mrandom.use_pytorch_dropout(True)
    med = {k: statistics.median(v) for k, v in times.items()}
    for k, name in ((False, "hash (opt-out)"), (True, "PyTorch's (default)")):
        v = sorted(times[k])
        print(f"{name:19s} median {med[k]:7.2f} ms CPU  [min {v[0]:.2f}, max {v[-1]:.2f}; "
              f"{len(v)} steps]")
    print(f"ratio on/off {med[True] / med[False]:.3f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 6)
