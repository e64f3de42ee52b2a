"""What a trained translator is made of: its tokenizers and model, built from the settings of
a run, or read back from a run's checkpoint (the settings checked against the weights first)."""
from __future__ import annotations

import minigrad

from . import checkpoint as ckpt
from .config import TrainConfig
from .tokenizers import BPETokenizer, WordTokenizer

__all__ = ["build_model", "build_tokenizers", "load_trained", "model_from_checkpoint"]


def build_tokenizers(config: TrainConfig, train_pairs):
    """Fit source and target tokenizers on the training text; with `share_vocab`, one
    tokenizer fitted on both sides, returned twice."""
    if config.tokenizer == "word":
        fit = lambda texts: WordTokenizer.fit(texts, min_freq=config.min_freq)  # noqa: E731
    elif config.tokenizer == "bpe":
        fit = lambda texts: BPETokenizer.fit(texts, num_merges=config.bpe_merges)  # noqa: E731
    else:
        raise ValueError(f"train: tokenizer must be 'word' or 'bpe', got {config.tokenizer!r}")
    if config.share_vocab:
        joint = fit([s for s, _ in train_pairs] + [t for _, t in train_pairs])
        return joint, joint
    return fit([s for s, _ in train_pairs]), fit([t for _, t in train_pairs])


def build_model(config: TrainConfig, src_vocab: int, tgt_vocab: int):
    """The architecture named by `config.arch`, initialised from `config.seed`."""
    minigrad.manual_seed(config.seed)
    if config.arch == "transformer":
        from minigrad.models import Seq2SeqTransformer
        return Seq2SeqTransformer(src_vocab, tgt_vocab, d_model=config.d_model,
                                  nhead=config.nhead,
                                  num_encoder_layers=config.num_encoder_layers,
                                  num_decoder_layers=config.num_decoder_layers,
                                  dim_feedforward=config.dim_feedforward,
                                  dropout=config.dropout, max_len=config.max_len + 2,
                                  share_embeddings=config.tie_embeddings,
                                  tie_output=config.tie_embeddings)
    if config.arch in ("rnn", "rnn-attention"):
        from minigrad.models.rnn_seq2seq import build_seq2seq_rnn
        return build_seq2seq_rnn(config.arch, src_vocab, tgt_vocab, dropout=config.dropout)
    raise ValueError(f"train: arch must be 'transformer', 'rnn' or 'rnn-attention', "
                     f"got {config.arch!r}")


def model_from_checkpoint(state, directory):
    """The trained model of a checkpoint read by `checkpoint.load_checkpoint`, in eval mode."""
    ckpt.check_model_size(state, directory)
    model = build_model(state["config"], len(state["src_tok"]), len(state["tgt_tok"]))
    try:
        model.load_state_dict(state["model"])
    except RuntimeError as e:
        raise ckpt.CheckpointError(f"{directory}: the checkpoint's weights do not fit the model "
                                   f"that its settings and tokenizers describe: {e}") from None
    return model.eval()


def load_trained(directory):
    """(model, src_tok, tgt_tok, config) from a checkpoint directory, in eval mode."""
    state = ckpt.load_checkpoint(directory)
    return (model_from_checkpoint(state, directory), state["src_tok"], state["tgt_tok"],
            state["config"])
