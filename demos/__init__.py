"""`minigrad.demos`: generated data sets, training loops and demos of the lectures' other models.

    python -m minigrad.demos.bert    pre-train BERT on a topical corpus, then fine-tune it
    python -m minigrad.demos.gat     a graph attention network against an MLP on a generated graph
    python -m minigrad.demos.han     a hierarchical attention network finds the key sentence
The models themselves live in `minigrad.models`; nothing below this package imports it.
"""
