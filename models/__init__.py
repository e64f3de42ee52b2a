"""`minigrad.models`: whole architectures built from `minigrad.nn`.

The seq2seq Transformer of "Attention Is All You Need" and its decoding (greedy, beam search,
key/value cache), and the lectures' other models: an RNN encoder-decoder with or without
attention, BERT, a graph attention network and a hierarchical attention network. Data sets,
training loops and demos live above this layer (`minigrad.translate`, `minigrad.demos`).
"""
from .bert import (BertEncoder, BertForPreTraining, BertForSequenceClassification, BertVocab,
                   mask_tokens, pretraining_loss)
from .decoding import Decoded, beam_search, greedy_decode
from .gat import GAT, MLP, GATLayer
from .han import AttentionPooling, HierarchicalAttentionNetwork
from .rnn_seq2seq import Seq2SeqRNN, build_seq2seq_rnn
from .seq2seq import Seq2SeqTransformer

__all__ = ["Seq2SeqTransformer", "Decoded", "greedy_decode", "beam_search", "Seq2SeqRNN",
           "build_seq2seq_rnn", "BertVocab", "BertEncoder", "BertForPreTraining",
           "BertForSequenceClassification", "mask_tokens", "pretraining_loss", "GAT", "GATLayer",
           "MLP", "AttentionPooling", "HierarchicalAttentionNetwork"]
