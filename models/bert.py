"""BERT: a Transformer encoder pre-trained on unlabelled text, then fine-tuned (Devlin et al., 2019).

Input. A pair of sentences S, S' becomes one sequence of T tokens
    [CLS] s_1 ... s_n [SEP] s'_1 ... s'_m [SEP] [PAD] ... [PAD]
and position t gets the sum of three learned embeddings, then a layer norm:
    x_t = LayerNorm(E_tok[w_t] + E_seg[segment_t] + E_pos[t])     (segment 0 for S, 1 for S')
A Transformer encoder (bidirectional self-attention; [PAD] keys masked out) turns x (B, T, D)
into contextual vectors z (B, T, D). Only the encoder: nothing is generated left to right.

Pre-training uses two criteria on the same z, summed.
  Masked LM: 15 % of the ordinary tokens are selected; 80 % of those become [MASK], 10 % a random
  word and 10 % stay (so a visible word may still be one to predict, and the model must keep
  a good vector at every position). At each selected t the model predicts the original word
      p(w | z_t) = softmax(E_tok g(z_t) + b)_w,    g(z) = LayerNorm(GELU(W z + c))
  whose output matrix is the input embedding E_tok itself ("tied"). Loss: -log p(w_t | z_t)
  averaged over the selected positions only.
  Next-sentence prediction: half the pairs are consecutive sentences of a document, half take
  S' from another document. The pooled vector p = tanh(W_p z_[CLS] + b_p) feeds a 2-way linear
  classifier (IsNext = 1, NotNext = 0) trained with cross-entropy.
Fine-tuning puts a fresh linear classifier on p and trains everything on a small labelled set.

The demo's text (`minigrad.demos.bert.make_bert_corpus`) comes from a tiny grammar: every
document has a topic, and each sentence's subject is the previous sentence's object, so both a masked word and "does S'
follow S" can be inferred from context, which is all that pre-training exploits.
"""
from __future__ import annotations


import numpy as np

from minigrad.nn import (Dropout, Embedding, LayerNorm, Linear, Module, Parameter,
                         TransformerEncoder, TransformerEncoderLayer, init)
from minigrad.nn import functional as F
from minigrad.tensor import array_of


class BertVocab:
    """Words <-> ids with the special tokens first: [PAD]=0, [CLS]=1, [SEP]=2, [MASK]=3, [UNK]=4."""

    SPECIALS = ("[PAD]", "[CLS]", "[SEP]", "[MASK]", "[UNK]")
    pad_id, cls_id, sep_id, mask_id, unk_id = range(5)

    def __init__(self, words):
        self.itos = list(self.SPECIALS) + [w for w in dict.fromkeys(words) if w not in self.SPECIALS]
        self.stoi = {w: i for i, w in enumerate(self.itos)}

    def __len__(self):
        return len(self.itos)

    def encode(self, words):
        return [self.stoi.get(w, self.unk_id) for w in words]

    def decode(self, ids):
        return " ".join(self.itos[int(i)] for i in ids)

    def is_special(self, ids):
        """Bool array: True at [PAD], [CLS], [SEP], [MASK], [UNK]."""
        return np.asarray(ids) < len(self.SPECIALS)


# --- the model ----------------------------------------------------------------------------------

class BertEncoder(Module):
    """Embeddings (token + segment + position), LayerNorm, dropout, Transformer encoder, pooler."""

    def __init__(self, vocab_size, d_model=64, nhead=4, num_layers=2, dim_feedforward=256,
                 max_len=64, type_vocab_size=2, dropout=0.1, pad_id=0):
        super().__init__()
        self.config = dict(vocab_size=vocab_size, d_model=d_model, nhead=nhead,
                           num_layers=num_layers, dim_feedforward=dim_feedforward,
                           max_len=max_len, type_vocab_size=type_vocab_size, dropout=dropout,
                           pad_id=pad_id)
        self.pad_id, self.max_len, self.d_model = pad_id, max_len, d_model
        self.tok_embed = Embedding(vocab_size, d_model, padding_idx=pad_id)
        self.seg_embed = Embedding(type_vocab_size, d_model)
        self.pos_embed = Embedding(max_len, d_model)
        for emb in (self.tok_embed, self.seg_embed, self.pos_embed):
            # BERT's N(0, 0.02): the tied MLM output starts with small logits, not N(0, 1)'s huge ones
            init.normal_(emb.weight, std=0.02)
        self.tok_embed.weight._array[pad_id] = 0
        self.norm = LayerNorm(d_model)
        self.dropout = Dropout(dropout)
        layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout,
                                        activation="gelu", batch_first=True)
        # padded positions keep their values in eval mode too (no nested-tensor zeroing)
        self.encoder = TransformerEncoder(layer, num_layers, enable_nested_tensor=False)
        self.pooler = Linear(d_model, d_model)

    def forward(self, input_ids, token_type_ids=None, attention_mask=None):
        """input_ids, token_type_ids (B, T) ints -> hidden (B, T, D).

        attention_mask (B, T): 1 at real tokens, 0 at padding; by default `input_ids != pad_id`.
        """
        ids = np.asanyarray(array_of(input_ids))  # any array: ONNX export's traced ids stay traced
        B, T = ids.shape
        if T > self.max_len:
            raise ValueError(f"BertEncoder: sequences of {T} tokens exceed max_len={self.max_len}")
        types = np.zeros_like(ids) if token_type_ids is None else np.asanyarray(array_of(token_type_ids))
        real = (ids != self.pad_id if attention_mask is None
                else np.asanyarray(array_of(attention_mask)).astype(bool))
        x = self.tok_embed(ids) + self.seg_embed(types) + self.pos_embed(np.arange(T))
        x = self.dropout(self.norm(x))
        return self.encoder(x, src_key_padding_mask=~real)  # True = padding: no one attends to it

    def pool(self, hidden):
        """hidden (B, T, D) -> tanh(W z_[CLS] + b) (B, D): the sequence's summary vector."""
        return self.pooler(hidden[:, 0]).tanh()


class BertForPreTraining(Module):
    """A BertEncoder with the masked-LM head (output tied to the token embedding) and the NSP head."""

    def __init__(self, vocab_size, **encoder_kwargs):
        super().__init__()
        self.bert = BertEncoder(vocab_size, **encoder_kwargs)
        D = self.bert.d_model
        self.mlm_dense = Linear(D, D)
        self.mlm_norm = LayerNorm(D)
        self.mlm_bias = Parameter(np.zeros(vocab_size, np.float32))
        self.nsp = Linear(D, 2)

    def forward(self, input_ids, token_type_ids=None, attention_mask=None):
        """(B, T) ids -> (mlm_logits (B, T, V), nsp_logits (B, 2))."""
        z = self.bert(input_ids, token_type_ids, attention_mask)
        h = self.mlm_norm(self.mlm_dense(z).gelu())
        mlm_logits = F.linear(h, self.bert.tok_embed.weight, self.mlm_bias)
        return mlm_logits, self.nsp(self.bert.pool(z))


def pretraining_loss(mlm_logits, nsp_logits, mlm_labels, is_next):
    """Masked-LM cross-entropy over selected positions (labels != -100) + NSP cross-entropy."""
    V = mlm_logits.shape[-1]
    mlm = F.cross_entropy(mlm_logits.reshape(-1, V), np.asarray(mlm_labels).reshape(-1),
                          ignore_index=-100)
    return mlm + F.cross_entropy(nsp_logits, np.asarray(is_next))


class BertForSequenceClassification(Module):
    """A (pre-trained) BertEncoder with dropout and a linear classifier on the pooled [CLS] vector."""

    def __init__(self, bert, num_labels, dropout=0.1):
        super().__init__()
        self.bert = bert
        self.dropout = Dropout(dropout)
        self.classifier = Linear(bert.d_model, num_labels)

    def forward(self, input_ids, token_type_ids=None, attention_mask=None):
        """(B, T) ids -> logits (B, num_labels)."""
        z = self.bert(input_ids, token_type_ids, attention_mask)
        return self.classifier(self.dropout(self.bert.pool(z)))


def mask_tokens(ids, vocab, rng=None, prob=0.15):
    """BERT's masking of ids (B, T): returns (masked_ids, labels), labels = -100 where not selected.

    Each ordinary (non-special) token is selected with probability `prob`; a selected token
    becomes [MASK] with probability 0.8, a uniformly random ordinary word with 0.1, itself with 0.1.
    `rng` is a numpy Generator or a seed.
    """
    rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    ids = np.asarray(ids)
    selected = (rng.random(ids.shape) < prob) & ~vocab.is_special(ids)
    labels = np.where(selected, ids, -100)
    action = rng.random(ids.shape)  # < 0.8: [MASK]; 0.8-0.9: random word; >= 0.9: unchanged
    random_words = rng.integers(len(vocab.SPECIALS), len(vocab), ids.shape)
    masked = np.where(selected & (action < 0.8), vocab.mask_id, ids)
    masked = np.where(selected & (action >= 0.8) & (action < 0.9), random_words, masked)
    return masked, labels
