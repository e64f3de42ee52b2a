"""`minigrad-translate`: train and use a toy translator from the command line.

    minigrad-translate demo                      train on the built-in corpus, report, plot
    minigrad-translate data --out data/          write the built-in corpus as TSV files
    minigrad-translate train --out runs/t1       train (built-in corpus or --train-file ...)
    minigrad-translate train --out runs/t1 --resume
    minigrad-translate translate "the old farmer sleeps" --checkpoint runs/t1
    minigrad-translate evaluate --checkpoint runs/t1 [--beam 4] [--output hyp.txt]
    minigrad-translate average --checkpoint runs/t1 --last 5 --out runs/t1-avg

A real-corpus recipe (see the README): data --preset multi30k-shape, then train with
--max-tokens, --share-vocab --tie-embeddings and --keep-last, average, evaluate --beam 4.

Errors are one line on stderr (exit status 2). Ctrl-C while training stops at the end of the
current step and writes a checkpoint (exit status 130; 143 for SIGTERM); --resume continues
exactly where it stopped. A second Ctrl-C stops at once, keeping the previous checkpoint.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time

from .cmdline import CliError, Parser, bounded
from .config import RESUMABLE, ConfigError, TrainConfig
from .data import DataConfig
from .files import DirectoryBusy
from .interrupts import Interrupted, signals_raise


def _add_settings(group, cls, skip=()):
    """One flag per field of the dataclass `cls`; a flag not given stays None, so that
    --resume can tell the settings given from the defaults."""
    for f in dataclasses.fields(cls):
        if f.name in skip:
            continue
        flag, kind, meta = "--" + f.name.replace("_", "-"), type(f.default), f.metadata
        text = meta["help"] + (f" (default: {f.default})" if f.default != "" else "")
        if kind is bool:
            group.add_argument(flag, dest=f.name, action="store_true", default=None, help=text)
        elif meta.get("choices"):
            group.add_argument(flag, dest=f.name, choices=meta["choices"], default=None,
                               help=text)
        else:
            group.add_argument(flag, dest=f.name, type=kind, default=None, help=text)


def _given(args, cls) -> dict:
    """The settings of `cls` given on the command line; file names made absolute."""
    names = {f.name for f in dataclasses.fields(cls)}
    given = {k: v for k, v in vars(args).items() if k in names and v is not None}
    for k in ("train_file", "valid_file"):
        if given.get(k):
            given[k] = os.path.abspath(given[k])
    return given


def _flag(name):
    return "--" + name.replace("_", "-")


def cmd_data(args):
    from .tsv import write_corpus
    if args.preset:
        from .captions import PRESETS, corpus_stats, generate_captions
        c = generate_captions(**PRESETS[args.preset], seed=args.data_seed)
    else:
        from .corpus import generate_corpus
        c = generate_corpus(args.n_train, args.n_valid, args.n_test, seed=args.data_seed)
    for path in write_corpus(c, args.out).values():
        print(f"wrote {path}")
    if args.preset:
        st = corpus_stats(c.train)
        print(f"{len(c.train):,} / {len(c.valid):,} / {len(c.test):,} pairs; training text: "
              f"{st['src_types']:,} source and {st['tgt_types']:,} target word types, "
              f"{st['src_mean_len']:.1f} / {st['tgt_mean_len']:.1f} tokens a sentence")
    src, tgt = c.train[0]
    print(f"example:\n  {src}\n  {tgt}")


def cmd_train(args):
    from . import checkpoint as ckpt
    from .train import Trainer
    if args.resume and args.overwrite:
        raise CliError("train: --resume continues the run in --out and --overwrite replaces it; "
                       "choose one")
    settings, sources = _given(args, TrainConfig), _given(args, DataConfig)
    if settings.get("max_tokens") and "batch_size" in settings:
        raise CliError("train: --max-tokens and --batch-size both size the batches; give one "
                       "(--batch-size then only sizes validation batches)")
    progress = not args.no_progress
    if args.resume:
        state = ckpt.load_checkpoint(args.out)
        data = _resumed_data(state["data"], sources, args.out)
        train, valid = data.load()
        trainer = Trainer.from_checkpoint(state, args.out, train, valid, progress=progress,
                                          data=data, **settings)
        print(f"resuming {args.out} at step {trainer.state['step']}\n"
              f"  settings: {trainer.config.describe()}\n  data: {data.describe()}")
    else:
        data, config = DataConfig(**sources), TrainConfig(**settings)
        train, valid = data.load()
        trainer = Trainer(config, train, valid, args.out, progress=progress,
                          overwrite=args.overwrite, data=data)
    print(f"{len(train):,} training pairs, vocabularies {len(trainer.src_tok):,} / "
          f"{len(trainer.tgt_tok):,}, {trainer.model.num_parameters():,} parameters")
    trainer.fit(max_steps=args.max_steps)
    print(f"checkpoint: {args.out}")


def _resumed_data(stored, given, out):
    """The run's own data settings, with the data flags given; the trainer then checks that
    they name the same pairs (a moved file may be named anew, other data is refused)."""
    if stored is None:  # a run started from Python, which names no data source
        if not given:
            raise CliError(f"the run in {out} does not record where its data came from; name "
                           f"it with --train-file (and --valid-file) or the corpus flags")
        return DataConfig(**given)
    return dataclasses.replace(stored, **given)


def cmd_translate(args):
    from . import checkpoint as ckpt
    from .inference import translate_one
    from .model import model_from_checkpoint
    if not args.sentence.split():
        raise CliError("translate: the sentence is empty; there is nothing to translate")
    state = ckpt.load_checkpoint(args.checkpoint)
    model = model_from_checkpoint(state, args.checkpoint)
    src_tok, tgt_tok = _tokenizers(state)
    max_len = state["config"].max_len
    n = len(src_tok.encode(args.sentence))
    if n > max_len:
        print(f"note: the sentence has {n} tokens; this model reads the first {max_len}",
              file=sys.stderr)
    ids, out_ids, attn = translate_one(model, src_tok, tgt_tok, args.sentence, args.beam, max_len)
    print(tgt_tok.decode(out_ids))
    if args.attention:
        from .plots import plot_cross_attention
        if attn is None:
            raise CliError("this architecture has no attention weights to plot")
        plot_cross_attention(attn, [src_tok.id_to_token(i) for i in ids],
                             [tgt_tok.id_to_token(i) for i in out_ids], args.attention,
                             args.sentence)
        print(f"attention heat map: {args.attention}")


def _tokenizers(state):
    return state["src_tok"], state["tgt_tok"]


def cmd_evaluate(args):
    from . import checkpoint as ckpt
    from .metrics import wer
    from .inference import evaluate_bleu
    from .model import model_from_checkpoint
    state = ckpt.load_checkpoint(args.checkpoint)
    model = model_from_checkpoint(state, args.checkpoint)
    data = state["data"]
    if data is None and not args.test_file:
        raise CliError(f"the run in {args.checkpoint} does not record its data; name test "
                       f"pairs with --test-file")
    data = data or DataConfig()
    data = dataclasses.replace(data, skip_bad_lines=bool(args.skip_bad_lines))
    pairs = data.test_pairs(args.test_file, args.n_test)
    pairs = pairs[:args.limit] if args.limit else pairs
    if not pairs:
        raise CliError("evaluate: there are no test pairs")
    t0 = time.perf_counter()
    bleu, hyps = evaluate_bleu(model, *_tokenizers(state), pairs, beam=args.beam,
                               max_len=state["config"].max_len)
    took = time.perf_counter() - t0
    if args.output:
        from .files import atomic_write_text
        atomic_write_text(args.output, "".join(h + "\n" for h in hyps))
    print(f"{len(pairs)} sentences, {'beam ' + str(args.beam) if args.beam > 1 else 'greedy'}: "
          f"BLEU {bleu:.2f}  WER {100 * wer(hyps, [t for _, t in pairs]):.2f}%  ({took:.1f} s)")
    if args.output:
        print(f"hypotheses: {args.output}")
    return 0


def cmd_average(args):
    from .averaging import average_run
    steps = average_run(args.checkpoint, args.last, args.out, overwrite=args.overwrite)
    print(f"averaged the weights of steps {', '.join(map(str, steps))} of {args.checkpoint}: "
          f"{args.out}")


def cmd_demo(args):
    from .demo import run_demo
    settings = {**_given(args, TrainConfig), "time_limit": args.minutes * 60}
    settings["epochs"] = max(settings.get("epochs", 0), 100)  # the time budget decides
    data = DataConfig(**_given(args, DataConfig))
    test = data.test_pairs(args.test_file, args.n_test)
    run_demo(TrainConfig(**settings), data, test, args.out, beam=args.beam,
             progress=not args.no_progress)
    return 0


def _beam_flag(p):
    p.add_argument("--beam", type=bounded(int, 1, 64), default=1,
                   help="beam size; 1 = greedy (default: %(default)s)")


def _test_flags(p):
    p.add_argument("--test-file", help="test pairs (TSV); default: built-in sentences that the "
                                       "run never trained on")
    p.add_argument("--n-test", type=bounded(int, 1, 1_000_000), default=1000,
                   help="built-in corpus: test pairs (default: %(default)s)")


def build_parser():
    p = Parser(prog="minigrad-translate", description=__doc__,
                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)

    d = sub.add_parser("data", help="write the built-in corpus (or a preset) as TSV files")
    d.add_argument("--out", default="data", help="output directory (default: %(default)s)")
    d.add_argument("--preset", choices=("multi30k-shape",), default=None,
                   help="multi30k-shape: 29,000 / 1,014 / 1,000 image captions, English -> a "
                        "German-like language, ~6k / ~8k word types (the --n-* flags do not "
                        "apply)")
    for name, default, lo in (("n-train", 20000, 1), ("n-valid", 1000, 0), ("n-test", 1000, 0),
                              ("data-seed", 0, 0)):
        d.add_argument("--" + name, type=bounded(int, lo, 10_000_000 if lo else None),
                       default=default, help=f"(default: {default})")
    d.set_defaults(func=cmd_data)

    t = sub.add_parser("train", help="train a model and write checkpoints")
    t.add_argument("--out", default="runs/translator", help="checkpoint directory (default: %(default)s)")
    t.add_argument("--resume", action="store_true",
                   help=f"continue the run saved in --out (only {', '.join(map(_flag, RESUMABLE))} "
                        f"may change)")
    t.add_argument("--overwrite", action="store_true", help="start again even if --out has a checkpoint")
    t.add_argument("--max-steps", type=bounded(int, 1), default=None,
                   help="stop after this many steps in all")
    _add_settings(t.add_argument_group("data (the built-in corpus unless TSV files are given)"),
                  DataConfig)
    _add_settings(t.add_argument_group("model and training"), TrainConfig)
    t.add_argument("--no-progress", action="store_true", help="no progress bar")
    t.set_defaults(func=cmd_train)

    tr = sub.add_parser("translate", help="translate one sentence with a trained model")
    tr.add_argument("sentence", help="the source sentence (words separated by spaces)")
    tr.add_argument("--checkpoint", default="runs/translator", help="checkpoint directory (default: %(default)s)")
    _beam_flag(tr)
    tr.add_argument("--attention", metavar="PNG", help="save the cross-attention heat map here")
    tr.set_defaults(func=cmd_translate)

    e = sub.add_parser("evaluate", help="BLEU and WER of a trained model on test pairs")
    e.add_argument("--checkpoint", default="runs/translator", help="checkpoint directory (default: %(default)s)")
    _beam_flag(e)
    e.add_argument("--limit", type=bounded(int, 0), default=0, help="only the first N test pairs (0: all)")
    _test_flags(e)
    e.add_argument("--skip-bad-lines", action="store_true", help="skip malformed TSV lines")
    e.add_argument("--output", metavar="FILE", help="write the hypotheses here, one a line, "
                   "detokenised as `translate` prints them (the BLEU printed is sacreBLEU's "
                   "corpus_bleu of this file against the references, tokenize='none')")
    e.set_defaults(func=cmd_evaluate)

    a = sub.add_parser("average", help="average the weights of a run's last N checkpoints")
    a.add_argument("--checkpoint", default="runs/translator",
                   help="the run directory, trained with --keep-last N (default: %(default)s)")
    a.add_argument("--last", type=bounded(int, 1, 1000), default=5,
                   help="how many of the newest checkpoints (default: %(default)s)")
    a.add_argument("--out", required=True, help="directory for the averaged model, read by "
                                                "translate and evaluate --checkpoint")
    a.add_argument("--overwrite", action="store_true",
                   help="replace what --out holds (a training run there can then not be resumed)")
    a.set_defaults(func=cmd_average)

    m = sub.add_parser("demo", help="train the default model on the built-in corpus, then "
                                    "report BLEU, examples and plots")
    m.add_argument("--out", default="runs/demo", help="output directory (default: %(default)s)")
    m.add_argument("--minutes", type=bounded(float, 0.01, 10_000), default=3.5,
                   help="training time budget in minutes (default: %(default)s)")
    m.add_argument("--beam", type=bounded(int, 1, 64), default=4,
                   help="beam size compared with greedy (default: %(default)s)")
    _add_settings(m.add_argument_group("data (the built-in corpus unless TSV files are given)"),
                  DataConfig)
    _test_flags(m)
    _add_settings(m.add_argument_group("model and training"), TrainConfig, skip=("time_limit",))
    m.add_argument("--no-progress", action="store_true", help="no progress bar")
    m.set_defaults(func=cmd_demo)
    return p


def main(argv=None):
    try:
        with signals_raise():  # Ctrl-C answered the same whatever the process inherited
            args = build_parser().parse_args(argv)
            result = args.func(args)
    except Interrupted as e:
        if not e.reported:  # not inside training (which says where it stopped); every file
            print(f"interrupted by {e}", file=sys.stderr)  # is written whole or not at all
        return 128 + e.signum
    except KeyboardInterrupt:  # raised by code that was not told which signal it was
        return 130
    except ConfigError as e:
        print(f"error: {_flag(e.name)} {e.problem}", file=sys.stderr)
        return 2
    except (CliError, ValueError, OSError, DirectoryBusy, FloatingPointError, MemoryError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return result if isinstance(result, int) else 0


if __name__ == "__main__":
    sys.exit(main())
