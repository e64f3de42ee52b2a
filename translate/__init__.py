"""`minigrad.translate`: the toy translation application built on `minigrad.models`.

Read it in the order of one run of `minigrad-translate train`:
    corpus.py, tsv.py   the generated parallel corpus, or the user's TSV files
    lexicon.py          the corpus's words: English lemmas, target stems and suffixes
    grammar.py          its sentences rendered in both languages, and parsed back from English
    captions.py         a larger generated corpus of Multi30k's shape (data --preset)
    data.py             which of the two a run reads (stored with the run)
    tokenizers.py       word and BPE tokenizers
    batching.py         sentences -> padded id batches (by sentences or by tokens)
    config.py           a run's settings, each checked against its range
    model.py            the tokenizers and model a run's settings describe, or its checkpoint holds
    train.py            the training loop, validation and resuming
    inference.py        decoding sentences with a trained model, and BLEU
    memory.py           what a training step needs, checked before it runs
    interrupts.py       Ctrl-C between steps, never inside one
    checkpoint.py       a run's directory: the checkpoint file, metrics, weight snapshots
    averaging.py        the weights of the last N checkpoints, averaged
    files.py            atomic writes, one writer per directory, no leftovers
    metrics.py          BLEU and WER
    plots.py            loss curve and attention heat map
    cli.py, demo.py     the `minigrad-translate` command and its demo
    cmdline.py          what the commands share: one-line errors, bounded flags
    graph_demo.py       `minigrad-viz`: the computation graph of the toy Transformer's loss
Nothing below this package imports it.
"""
