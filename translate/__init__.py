"""`minigrad.translate`: the toy translation application built on `minigrad.models`.

Read it in the order of one run of `minigrad-translate train`:
    corpus.py, tsv.py   the generated parallel corpus, or the user's TSV files
    tokenizers.py       word and BPE tokenizers
    batching.py         sentences -> padded id batches
    train.py            the training loop, validation and resuming
    checkpoint.py       writing and reading a run's files
    metrics.py          BLEU and WER
    plots.py            loss curve and attention heat map
    cli.py, demo.py     the `minigrad-translate` command and its demo
    graph_demo.py       `minigrad-viz`: the computation graph of the toy Transformer's loss
Nothing below this package imports it.
"""
