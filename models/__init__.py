"""`minigrad.models`: the Transformer and the lectures' other architectures, and the toy
translation task built on them (corpus, tokenizers, training, decoding, BLEU)."""
from .decoding import Decoded, beam_search, greedy_decode
from .seq2seq import Seq2SeqTransformer
from .transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer,
                          TransformerEncoder, TransformerEncoderLayer)
