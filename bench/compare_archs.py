"""Three architectures side by side: RNN seq2seq, RNN with attention and the Transformer on the
built-in corpus.

    python bench/compare_archs.py [--quick] [--pairs 5000] [--time-limit 60] [--json PATH]

Each architecture trains through `minigrad.translate.train.Trainer` (the translator's own loop:
Adam + warm-up, label smoothing 0.1, clipping 1.0, default model sizes of `build_model`) on the
same generated training pairs for the same wall-clock budget (`TrainConfig.time_limit`; the
budget includes the per-epoch validation the Trainer runs), then is scored by greedy decoding
on the same test pairs with corpus BLEU. Same seed, same data, one process, run one after the
other; the machine's load average is printed because a busy machine gives fewer steps.
"""
import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import minigrad  # noqa: E402
from minigrad.translate.corpus import generate_corpus  # noqa: E402
from minigrad.translate.config import TrainConfig  # noqa: E402
from minigrad.translate.inference import evaluate_bleu  # noqa: E402
from minigrad.translate.train import Trainer  # noqa: E402

ARCHS = ["rnn", "rnn-attention", "transformer"]


def run(quick=False, pairs=5000, time_limit=60.0, test_pairs=500, archs=ARCHS):
    if quick:
        pairs, time_limit, test_pairs = 200, 3.0, 20
    corpus = generate_corpus(n_train=pairs, n_valid=max(20, test_pairs // 5), n_test=test_pairs,
                             seed=0, max_len=12 if quick else 16)
    rows = []
    for arch in archs:
        cfg = TrainConfig(arch=arch, time_limit=time_limit, epochs=1000, checkpoint_every=0,
                          valid_bleu_sentences=0 if quick else 50, batch_size=32 if quick else 128,
                          warmup=20 if quick else 300, seed=0,
                          **(dict(d_model=32, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                                  dim_feedforward=64) if quick else {}))
        with tempfile.TemporaryDirectory() as out:
            t0 = time.perf_counter()
            tr = Trainer(cfg, corpus.train, corpus.valid, out, log=lambda *a, **k: None,
                         progress=False)
            state = tr.fit()
            train_s = time.perf_counter() - t0
            t1 = time.perf_counter()
            bleu = evaluate_bleu(tr.model, tr.src_tok, tr.tgt_tok, corpus.test, beam=1,
                                 max_len=cfg.max_len)[0]
            eval_s = time.perf_counter() - t1
        n_params = sum(int(p.numpy().size) for p in tr.model.parameters())
        rows.append(dict(arch=arch, test_bleu_greedy=float(bleu), train_s=train_s,
                         steps=state["step"], epochs_done=state["epoch"], params=n_params,
                         final_loss=state["history"][-1][1] if state["history"] else None,
                         eval_s=eval_s))
    return dict(pairs=pairs, test_pairs=test_pairs, time_limit_s=time_limit, rows=rows,
                loadavg=os.getloadavg()[0])


def _print(res):
    print(f"architectures on the generated corpus: {res['pairs']} training pairs, "
          f"{res['time_limit_s']:.0f} s budget each, test BLEU (greedy) on {res['test_pairs']} "
          f"pairs; load avg {res['loadavg']:.2f}")
    print(f"{'arch':<15}{'test BLEU':>10}{'train s':>9}{'steps':>7}{'epochs':>8}{'params':>10}"
          f"{'last loss':>11}")
    for r in res["rows"]:
        print(f"{r['arch']:<15}{r['test_bleu_greedy']:>10.1f}{r['train_s']:>9.1f}{r['steps']:>7}"
              f"{r['epochs_done']:>8}{r['params']:>10,}{(r['final_loss'] or float('nan')):>11.3f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="tiny corpus, 3 s per architecture")
    ap.add_argument("--pairs", type=int, default=5000)
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--test-pairs", type=int, default=500)
    ap.add_argument("--json", metavar="PATH")
    args = ap.parse_args()
    minigrad.tune_malloc()  # the allocator setting a training loop opts into (docs/performance.md)
    res = run(args.quick, args.pairs, args.time_limit, args.test_pairs)
    _print(res)
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
