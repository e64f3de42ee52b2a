"""`minigrad-translate`: train and use a toy translator from the command line.

    minigrad-translate demo                      train on the built-in corpus, report, plot
    minigrad-translate data --out data/          write the built-in corpus as TSV files
    minigrad-translate train --out runs/t1       train (built-in corpus or --train-file ...)
    minigrad-translate train --out runs/t1 --resume
    minigrad-translate translate "the old farmer sleeps" --checkpoint runs/t1
    minigrad-translate evaluate --checkpoint runs/t1 [--beam 4]
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

from . import corpus as corpus_mod
from .train import TrainConfig

DEFAULTS = dataclasses.asdict(TrainConfig())


class CliError(Exception):
    """A problem with what the user asked for: printed as one line, exit status 2."""


def _add_data_options(p):
    g = p.add_argument_group("data (the built-in corpus unless TSV files are given)")
    g.add_argument("--train-file", help="training pairs, one 'source<TAB>target' per line (UTF-8)")
    g.add_argument("--valid-file", help="validation pairs (TSV)")
    g.add_argument("--test-file", help="test pairs (TSV)")
    g.add_argument("--skip-bad-lines", action="store_true",
                   help="skip malformed TSV lines (counted in the summary) instead of stopping")
    g.add_argument("--n-train", type=int, default=20000, help="built-in corpus: training pairs")
    g.add_argument("--n-valid", type=int, default=1000, help="built-in corpus: validation pairs")
    g.add_argument("--n-test", type=int, default=1000, help="built-in corpus: test pairs")
    g.add_argument("--data-seed", type=int, default=0, help="built-in corpus: generator seed")


def _add_train_options(p):
    g = p.add_argument_group("model and training")
    g.add_argument("--arch", choices=["transformer", "rnn", "rnn-attention"], default=DEFAULTS["arch"],
                   help="architecture (default: %(default)s)")
    for name, kind, text in [
            ("d_model", int, "model width"), ("nhead", int, "attention heads"),
            ("num_encoder_layers", int, "encoder layers"), ("num_decoder_layers", int, "decoder layers"),
            ("dim_feedforward", int, "feed-forward width"), ("dropout", float, "dropout probability"),
            ("max_len", int, "longest sentence in tokens (longer ones are cut)"),
            ("epochs", int, "passes over the training data"), ("batch_size", int, "sentences per batch"),
            ("lr_factor", float, "scale of the warm-up learning-rate schedule"),
            ("warmup", int, "warm-up steps of the schedule"),
            ("label_smoothing", float, "label smoothing of the loss"),
            ("clip_norm", float, "clip the gradient norm to this (0: off)"),
            ("seed", int, "seed of initialisation, batching and dropout"),
            ("checkpoint_every", int, "write a checkpoint every N steps"),
            ("valid_bleu_sentences", int, "validation sentences translated for BLEU each epoch"),
            ("bpe_merges", int, "BPE merges (with --tokenizer bpe)"),
            ("min_freq", int, "word tokenizer: rarer words become <unk>"),
            ("time_limit", float, "stop training after this many seconds (0: no limit)")]:
        g.add_argument("--" + name.replace("_", "-"), dest=name, type=kind, default=DEFAULTS[name],
                       help=f"{text} (default: %(default)s)")
    g.add_argument("--tokenizer", choices=["word", "bpe"], default=DEFAULTS["tokenizer"],
                   help="tokenizer (default: %(default)s)")
    g.add_argument("--no-progress", action="store_true", help="no progress bar")


def _load_data(args):
    """Train/valid/test pairs from TSV files or the built-in generator."""
    if args.train_file:
        def read(path):
            if not path:
                return []
            pairs, skipped = corpus_mod.read_tsv(path, skip_bad_lines=args.skip_bad_lines)
            if skipped:
                print(f"{path}: skipped {skipped} bad line(s)")
            return pairs
        train, valid, test = read(args.train_file), read(args.valid_file), read(args.test_file)
        if not train:
            raise CliError(f"{args.train_file} holds no sentence pairs")
        return train, valid or train[:200], test
    c = corpus_mod.generate_corpus(args.n_train, args.n_valid, args.n_test, seed=args.data_seed)
    return c.train, c.valid, c.test


def _config(args):
    fields = {f.name for f in dataclasses.fields(TrainConfig)}
    return TrainConfig(**{k: v for k, v in vars(args).items() if k in fields})


def cmd_data(args):
    c = corpus_mod.generate_corpus(args.n_train, args.n_valid, args.n_test, seed=args.data_seed)
    paths = corpus_mod.write_corpus(c, args.out)
    for name, path in paths.items():
        print(f"wrote {path}")
    src, tgt = c.train[0]
    print(f"example:\n  {src}\n  {tgt}")


def cmd_train(args):
    from .train import Trainer
    train, valid, _ = _load_data(args)
    if args.resume:
        trainer = Trainer.resume(args.out, train, valid, progress=not args.no_progress)
        print(f"resuming {args.out} at step {trainer.state['step']}")
    else:
        if (Path(args.out) / "checkpoint.npz").exists() and not args.overwrite:
            raise CliError(f"{args.out} already holds a checkpoint; pass --resume to "
                             f"continue it or --overwrite to start again")
        trainer = Trainer(_config(args), train, valid, args.out, progress=not args.no_progress)
    print(f"{len(train):,} training pairs, vocabularies {len(trainer.src_tok):,} / "
          f"{len(trainer.tgt_tok):,}, {trainer.model.num_parameters():,} parameters")
    try:
        trainer.fit(max_steps=args.max_steps)
    except KeyboardInterrupt:
        return 130
    print(f"checkpoint: {args.out}")
    return trainer


def cmd_translate(args):
    from .train import load_trained, translate_ids
    from .batching import make_batch
    model, src_tok, tgt_tok, config = load_trained(args.checkpoint)
    ids = src_tok.encode(args.sentence)
    src = make_batch([(ids, [0])], src_tok.pad_id).src
    tokens, attn = translate_ids(model, src, args.beam, config.max_len, tgt_tok.bos_id, tgt_tok.eos_id)
    out_ids = [int(t) for t in tokens[0] if t != tgt_tok.pad_id]
    print(tgt_tok.decode(out_ids))
    if args.attention:
        if attn is None:
            raise CliError("this architecture has no attention weights to plot")
        _heatmap(attn, src_tok, tgt_tok, ids, out_ids, args.attention, args.sentence)
        print(f"attention heat map: {args.attention}")


def _heatmap(attn, src_tok, tgt_tok, src_ids, out_ids, path, sentence):
    """Average the last decoder layer's heads into one (T, S) map and plot it."""
    from .plots import plot_attention
    weights = attn[-1][0]
    weights = weights.mean(0) if weights.ndim == 3 else weights
    src_words = [src_tok.id_to_token(i) for i in src_ids]
    tgt_words = [tgt_tok.id_to_token(i) for i in out_ids]
    plot_attention(weights, src_words, tgt_words, path,
                   title=f"Cross-attention (last decoder layer, mean of heads)\n{sentence}")


def cmd_evaluate(args):
    from .metrics import wer
    from .train import evaluate_bleu, load_trained
    model, src_tok, tgt_tok, config = load_trained(args.checkpoint)
    if args.test_file:
        pairs, skipped = corpus_mod.read_tsv(args.test_file, skip_bad_lines=args.skip_bad_lines)
    else:
        pairs = corpus_mod.generate_corpus(args.n_train, args.n_valid, args.n_test, seed=args.data_seed).test
    pairs = pairs[:args.limit] if args.limit else pairs
    t0 = time.perf_counter()
    bleu, hyps = evaluate_bleu(model, src_tok, tgt_tok, pairs, beam=args.beam, max_len=config.max_len)
    took = time.perf_counter() - t0
    print(f"{len(pairs)} sentences, {'beam ' + str(args.beam) if args.beam > 1 else 'greedy'}: "
          f"BLEU {bleu:.2f}  WER {100 * wer(hyps, [t for _, t in pairs]):.2f}%  ({took:.1f} s)")
    return bleu


def cmd_demo(args):
    from .demo import run_demo
    return run_demo(args)


def build_parser():
    p = argparse.ArgumentParser(prog="minigrad-translate", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)

    d = sub.add_parser("data", help="write the built-in corpus as TSV files")
    d.add_argument("--out", default="data", help="output directory (default: %(default)s)")
    for name, default in (("n-train", 20000), ("n-valid", 1000), ("n-test", 1000), ("data-seed", 0)):
        d.add_argument("--" + name, type=int, default=default, help=f"(default: {default})")
    d.set_defaults(func=cmd_data)

    t = sub.add_parser("train", help="train a model and write checkpoints")
    t.add_argument("--out", default="runs/translator", help="checkpoint directory (default: %(default)s)")
    t.add_argument("--resume", action="store_true", help="continue the run saved in --out")
    t.add_argument("--overwrite", action="store_true", help="start again even if --out has a checkpoint")
    t.add_argument("--max-steps", type=int, default=None, help="stop after this many steps in all")
    _add_data_options(t)
    _add_train_options(t)
    t.set_defaults(func=cmd_train)

    tr = sub.add_parser("translate", help="translate one sentence with a trained model")
    tr.add_argument("sentence", help="the source sentence (words separated by spaces)")
    tr.add_argument("--checkpoint", default="runs/translator", help="checkpoint directory (default: %(default)s)")
    tr.add_argument("--beam", type=int, default=1, help="beam size; 1 = greedy (default: %(default)s)")
    tr.add_argument("--attention", metavar="PNG", help="save the cross-attention heat map here")
    tr.set_defaults(func=cmd_translate)

    e = sub.add_parser("evaluate", help="BLEU and WER of a trained model on the test set")
    e.add_argument("--checkpoint", default="runs/translator", help="checkpoint directory (default: %(default)s)")
    e.add_argument("--beam", type=int, default=1, help="beam size; 1 = greedy (default: %(default)s)")
    e.add_argument("--limit", type=int, default=0, help="only the first N test pairs (0: all)")
    _add_data_options(e)
    e.set_defaults(func=cmd_evaluate)

    m = sub.add_parser("demo", help="train the default model on the built-in corpus, then "
                                    "report BLEU, examples and plots")
    m.add_argument("--out", default="runs/demo", help="output directory (default: %(default)s)")
    m.add_argument("--minutes", type=float, default=3.5,
                   help="training time budget in minutes (default: %(default)s)")
    m.add_argument("--beam", type=int, default=4, help="beam size compared with greedy (default: %(default)s)")
    _add_data_options(m)
    _add_train_options(m)
    m.set_defaults(func=cmd_demo)
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        result = args.func(args)
    except (CliError, corpus_mod.TsvError, FileNotFoundError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return result if isinstance(result, int) else 0


if __name__ == "__main__":
    sys.exit(main())
