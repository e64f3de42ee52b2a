"""`minigrad-translate demo`: the README's main job, end to end on the CPU.

It generates the built-in corpus, trains the default Transformer within a time budget, then
reports test BLEU for greedy decoding and beam search, shows five translations beside their
references, and saves the loss curve and a cross-attention heat map of a reordered sentence.
"""
from __future__ import annotations

import time
from pathlib import Path

from . import corpus as corpus_mod
from .metrics import corpus_bleu, wer
from .plots import plot_cross_attention, plot_loss_curve
from .inference import translate, translate_one
from .train import Trainer


def _reordered_example(pairs):
    """A test sentence whose words change order in translation (a non-monotonic alignment)."""
    for src, _ in pairs:
        try:
            align = [a for a in corpus_mod.alignment(src) if a is not None]
        except ValueError:  # a user's corpus: no alignment known, take any sentence
            return src
        if any(b < a for a, b in zip(align, align[1:])) and 6 <= len(src.split()) <= 10:
            return src
    return pairs[0][0]


def run_demo(config, data, test, out, beam=4, progress=True):
    """Train `config` on `data` (a DataConfig) into `out`, then score it on `test` pairs."""
    t_start = time.perf_counter()
    out = Path(out)
    train, valid = data.load()
    trainer = Trainer(config, train, valid, out, progress=progress, data=data)
    print(f"minigrad translation demo: {len(train):,} training pairs, vocabularies "
          f"{len(trainer.src_tok):,} / {len(trainer.tgt_tok):,}, "
          f"{trainer.model.num_parameters():,} parameters, {config.time_limit / 60:g} min of "
          f"training")
    src, tgt = train[0]
    print(f"example pair:\n  source: {src}\n  target: {tgt}\n")
    trainer.fit()
    model, src_tok, tgt_tok = trainer.model, trainer.src_tok, trainer.tgt_tok
    model.eval()
    st = trainer.state
    print(f"\ntrained {st['step']} steps ({st['epoch']} full epochs) in "
          f"{time.perf_counter() - t_start:.0f} s")

    refs = [t for _, t in test]
    t0 = time.perf_counter()
    greedy = translate(model, src_tok, tgt_tok, [s for s, _ in test], beam=1, max_len=config.max_len)
    t_greedy = time.perf_counter() - t0
    t0 = time.perf_counter()
    beamed = translate(model, src_tok, tgt_tok, [s for s, _ in test], beam=beam,
                       max_len=config.max_len)
    t_beam = time.perf_counter() - t0
    bleu_g, bleu_b = corpus_bleu(greedy, refs), corpus_bleu(beamed, refs)
    print(f"test set ({len(test)} sentences):")
    print(f"  greedy      BLEU {bleu_g:6.2f}   WER {100 * wer(greedy, refs):5.2f}%   ({t_greedy:.1f} s)")
    print(f"  beam {beam:<2}     BLEU {bleu_b:6.2f}   WER {100 * wer(beamed, refs):5.2f}%   ({t_beam:.1f} s)")
    print("\nfive test sentences:")
    for (s, r), h in list(zip(test, greedy))[:5]:
        print(f"  source:      {s}\n  reference:   {r}\n  translation: {h}\n")

    curve = plot_loss_curve(st["history"], st.get("valid", []), out / "loss_curve.png",
                            title="minigrad Transformer on the toy translation task")
    sentence = _reordered_example(test)
    ids, out_ids, attn = translate_one(model, src_tok, tgt_tok, sentence, 1, config.max_len)
    heat = out / "attention.png"
    if attn is not None:
        plot_cross_attention(attn, [src_tok.id_to_token(i) for i in ids],
                             [tgt_tok.id_to_token(i) for i in out_ids], heat, sentence)
    print(f"heat map sentence: {sentence}\n  -> {tgt_tok.decode(out_ids)}")
    print(f"saved {curve}" + (f" and {heat}" if attn is not None else "") + f"; checkpoint in {out}")
    print(f"total time {time.perf_counter() - t_start:.0f} s")
    return {"bleu_greedy": bleu_g, "bleu_beam": bleu_b, "steps": st["step"]}
