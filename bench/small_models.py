"""Small models, side by side: a character-level GPT trained and sampled with PyTorch and minigrad.

    python bench/small_models.py [--quick] [--rounds 3] [--json out.json]

The program is the decoder-only GPT as it is usually written by hand in video lectures on the
subject (`char_gpt.build_gpt`, the one definition tests/test_port_gpt.py runs as well), with
AdamW. It is written against PyTorch's API; the minigrad run passes `minigrad` in place of
`torch` (through `lib_shims.library`). Size: n_embd 64, 4 heads, 2 layers, block 32, batch 16,
dropout 0.1, on a generated text (nothing is downloaded).

Two measurements per library, each library in its own process, processes alternated for
`--rounds` rounds:
- training step: get_batch, forward with the loss, zero_grad, backward, AdamW step (median ms);
- sampling: `generate()` of 200 new tokens from one start token, WITHOUT `no_grad` (as such
  loops are usually written) and in eval mode: each token runs the model on the last
  `block_size` tokens, takes the softmax of the last position's logits and draws the next id
  with `torch.multinomial` (median seconds per 200-token loop).
Ratios are minigrad / PyTorch of the medians over all rounds.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from char_gpt import build_gpt  # noqa: E402

GPT_CONFIG = dict(n_embd=64, n_head=4, n_layer=2, block_size=32, batch_size=16, dropout=0.1,
                  lr=1e-3)
QUICK_CONFIG = dict(GPT_CONFIG, n_embd=32, n_layer=1, block_size=16, batch_size=4)


def generated_text(n_chars=100_000, seed=0):
    """A few hundred made-up words in sentences and lines: enough structure for a char model."""
    import numpy as np
    rng = np.random.default_rng(seed)
    onsets = ["b", "c", "d", "f", "g", "h", "l", "m", "n", "p", "r", "s", "t", "v", "w",
              "br", "ch", "st", "th", "sh", "tr", "pl", ""]
    vowels = ["a", "e", "i", "o", "u", "ea", "ou", "ai"]
    codas = ["", "", "n", "r", "s", "t", "ll", "nd", "ng"]
    words = sorted({"".join(rng.choice(onsets) + rng.choice(vowels) + rng.choice(codas)
                            for _ in range(rng.integers(1, 4))) for _ in range(400)})
    # Zipf-like word frequencies, so some words are common and the model has something to learn
    freq = 1.0 / np.arange(1, len(words) + 1)
    freq /= freq.sum()
    parts, size = [], 0
    while size < n_chars:
        sent = " ".join(rng.choice(words, rng.integers(3, 12), p=freq))
        sent = sent[0].upper() + sent[1:] + rng.choice([".", ".", ".", "?", "!", ","])
        sent += "\n" if rng.random() < 0.3 else " "
        parts.append(sent)
        size += len(sent)
    return "".join(parts)[:n_chars]


def make_gpt(torch, text, n_embd=64, n_head=4, n_layer=2, block_size=32, batch_size=16,
             dropout=0.1, lr=1e-3, seed=1337):
    """The character-level GPT, written against PyTorch's API; `torch` may be minigrad.

    Returns (train_step, generate, info): train_step() runs one optimisation step and returns
    the loss; generate(n) samples n new characters after a newline and returns the text."""
    torch.manual_seed(seed)

    chars = sorted(set(text))
    vocab_size = len(chars)
    stoi = {ch: i for i, ch in enumerate(chars)}
    itos = {i: ch for i, ch in enumerate(chars)}
    data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
    train_data = data[:int(0.9 * len(data))]

    def get_batch():
        ix = torch.randint(len(train_data) - block_size, (batch_size,))
        x = torch.stack([train_data[i:i + block_size] for i in ix])
        y = torch.stack([train_data[i + 1:i + block_size + 1] for i in ix])
        return x, y

    model = build_gpt(torch, vocab_size, n_embd, n_head, n_layer, block_size, dropout)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)

    def train_step():
        model.train()
        xb, yb = get_batch()
        logits, loss = model(xb, yb)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        return loss.item()

    def generate(max_new_tokens):
        model.eval()
        context = torch.zeros((1, 1), dtype=torch.long) + stoi["\n"]
        return "".join(itos[i] for i in model.generate(context, max_new_tokens)[0].tolist())

    info = dict(vocab_size=vocab_size, n_params=sum(p.numel() for p in model.parameters()))
    return train_step, generate, info


# ------------------------------------------------------------------ worker --
def worker(args):
    """Time one library in this process; print one JSON line."""
    from lib_shims import library
    torch = library(args.lib)
    if args.lib == "torch":
        torch.set_num_threads(args.threads or 2)
    else:  # the allocator setting a training loop opts into, as bench/step_worker.py
        torch.tune_malloc()
        if args.serial_max_work is not None:   # (an A/B of the product route's limit)
            from minigrad.kernels import policy
            policy.SERIAL_MATMUL_MAX_WORK = args.serial_max_work
    cfg = QUICK_CONFIG if args.quick else GPT_CONFIG
    train_step, generate, info = make_gpt(torch, generated_text(20_000 if args.quick else 100_000),
                                          **cfg)
    for _ in range(args.warmup_steps):
        train_step()
    generate(4)  # first call compiles/warms every path of the sampling loop
    step_ms, losses = [], []
    for _ in range(args.steps):
        t = time.perf_counter()
        losses.append(train_step())
        step_ms.append((time.perf_counter() - t) * 1e3)
    gen_s, sample = [], ""
    for _ in range(args.gen_loops):
        t = time.perf_counter()
        sample = generate(args.new_tokens)
        gen_s.append(time.perf_counter() - t)
    out = dict(lib=args.lib, config=cfg, step_ms=step_ms, median_step_ms=statistics.median(step_ms),
               gen_s=gen_s, median_gen_s=statistics.median(gen_s), new_tokens=args.new_tokens,
               first_loss=losses[0], last_loss=losses[-1], sample=sample[:60],
               loadavg=os.getloadavg()[0], **info)
    if args.lib == "torch":
        out["threads"] = f"torch {torch.get_num_threads()}"
    else:
        import numba
        from minigrad.kernels import policy
        out["threads"] = (f"numba {numba.get_num_threads()}, backend {torch.get_backend()}, "
                          f"serial products < {policy.SERIAL_MATMUL_MAX_WORK}")
    print(json.dumps(out))


# ------------------------------------------------------------- orchestrator --
def _run_worker(lib, quick, extra):
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", "--lib", lib, *extra]
    if quick:
        cmd.append("--quick")
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        raise RuntimeError(f"small_models worker {lib} failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def _torch_available():
    return subprocess.run([sys.executable, "-c", "import torch"], capture_output=True).returncode == 0


def run(quick=False, rounds=None, threads=None, serial_max_work=None):
    """All rounds, both libraries alternated; returns the results and prints the table.
    `serial_max_work`: minigrad's SERIAL_MATMUL_MAX_WORK for this run (default: its own)."""
    # processes of one library differed by up to 1.7x here (PyTorch's step 13-22 ms in four
    # processes a minute apart): the medians need many processes, and several loops in each
    rounds = rounds or (1 if quick else 5)
    threads = threads or (1 if quick else 2)  # quick runs in tests, often on a busy machine
    steps = ["--warmup-steps", 2, "--steps", 5, "--gen-loops", 1, "--new-tokens", 20] if quick else \
        ["--warmup-steps", 5, "--steps", 60, "--gen-loops", 4, "--new-tokens", 200]
    extra = [str(a) for a in steps] + ["--threads", str(threads)]
    if serial_max_work is not None:
        extra += ["--serial-max-work", str(serial_max_work)]
    libs = ["minigrad", "torch"] if _torch_available() else ["minigrad"]
    runs = {lib: [] for lib in libs}
    for _ in range(rounds):
        for lib in libs:
            runs[lib].append(_run_worker(lib, quick, extra))
    res = dict(method=__doc__.split("\n\n", 2)[2].strip(), rounds=rounds, libs={},
               config=runs["minigrad"][0]["config"], new_tokens=runs["minigrad"][0]["new_tokens"])
    for lib in libs:
        step = statistics.median(t for r in runs[lib] for t in r["step_ms"])
        gen = statistics.median(t for r in runs[lib] for t in r["gen_s"])
        r0 = runs[lib][0]
        res["libs"][lib] = dict(median_step_ms=step, median_gen_s=gen,
                                gen_ms_per_token=gen / r0["new_tokens"] * 1e3,
                                round_step_ms=[r["median_step_ms"] for r in runs[lib]],
                                round_gen_s=[r["median_gen_s"] for r in runs[lib]],
                                threads=r0["threads"], n_params=r0["n_params"],
                                last_loss=runs[lib][-1]["last_loss"], sample=r0["sample"])
    if "torch" in res["libs"]:
        m, t = res["libs"]["minigrad"], res["libs"]["torch"]
        res["ratio_step"] = m["median_step_ms"] / t["median_step_ms"]
        res["ratio_gen"] = m["median_gen_s"] / t["median_gen_s"]
        # the two processes of one round ran back to back, under about the same load
        res["round_ratios_step"] = [a / b for a, b in zip(m["round_step_ms"], t["round_step_ms"])]
        res["round_ratios_gen"] = [a / b for a, b in zip(m["round_gen_s"], t["round_gen_s"])]
    res["loadavg"] = os.getloadavg()[0]
    print_table(res)
    return res


def print_table(res):
    c = res["config"]
    print(f"\n== small models: character-level GPT (n_embd {c['n_embd']}, {c['n_head']} heads, "
          f"{c['n_layer']} layers, block {c['block_size']}, batch {c['batch_size']}, dropout "
          f"{c['dropout']}, AdamW) ==")
    print(f"each library in its own process, alternated, {res['rounds']} round(s); medians over "
          f"all rounds; sampling = generate() of {res['new_tokens']} tokens without no_grad, eval mode")
    print(f"{'library':<10}{'step ms':>10}{'sample s':>10}{'ms/token':>10}  threads")
    for lib, d in res["libs"].items():
        print(f"{lib:<10}{d['median_step_ms']:>10.2f}{d['median_gen_s']:>10.3f}"
              f"{d['gen_ms_per_token']:>10.2f}  {d['threads']}")
    if "ratio_step" in res:
        print(f"ratio minigrad/PyTorch: training step {res['ratio_step']:.2f} (goal <= 0.6), "
              f"sampling loop {res['ratio_gen']:.2f} (goal <= 0.7)   load avg {res['loadavg']:.2f}")
        fmt = lambda xs: ", ".join(f"{x:.2f}" for x in xs)  # noqa: E731
        print(f"per round (back-to-back pairs): step {fmt(res['round_ratios_step'])}; "
              f"sampling {fmt(res['round_ratios_gen'])}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a smaller model and a few steps")
    ap.add_argument("--rounds", type=int, help="alternated rounds (default 5; quick 1)")
    ap.add_argument("--threads", type=int, help="torch.set_num_threads (default 2; quick 1)")
    ap.add_argument("--json", metavar="PATH", help="write the results as JSON")
    ap.add_argument("--serial-max-work", type=int, metavar="N",
                    help="minigrad's products below N multiply-adds stay out of Numba's pool "
                         "(kernels.policy.SERIAL_MATMUL_MAX_WORK; to compare limits)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--lib", choices=["minigrad", "torch"], help=argparse.SUPPRESS)
    ap.add_argument("--warmup-steps", type=int, default=5, help=argparse.SUPPRESS)
    ap.add_argument("--steps", type=int, default=60, help=argparse.SUPPRESS)
    ap.add_argument("--gen-loops", type=int, default=4, help=argparse.SUPPRESS)
    ap.add_argument("--new-tokens", type=int, default=200, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return worker(args)
    res = run(args.quick, args.rounds, args.threads, args.serial_max_work)
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=2))
    return res


if __name__ == "__main__":
    main()
