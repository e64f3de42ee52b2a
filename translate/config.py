"""A training run's settings: `TrainConfig`, each value checked against its range.

Every field says what it means and which values make sense (its metadata); the constructor
checks them, so a bad flag, a bad keyword or a crafted checkpoint all fail the same way, with
a ConfigError that names the setting. The command line builds its flags from this table.
A checkpoint stores the config; on resuming only the settings in `RESUMABLE` may change.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field


class ConfigError(ValueError):
    """A setting with a value out of its range (or of the wrong type, or unknown)."""

    def __init__(self, owner: str, name: str, problem: str):
        super().__init__(f"{owner}: {name} {problem}")
        self.owner, self.name, self.problem = owner, name, problem


def setting(default, help, lo=None, hi=None, above=None, below=None, choices=None):
    """A dataclass field with its help text and valid range: lo <= value <= hi,
    above < value < below, value in choices."""
    return field(default=default, metadata=dict(help=help, lo=lo, hi=hi, above=above,
                                                below=below, choices=choices))


def check_settings(obj) -> None:
    """Raise ConfigError for the first field of `obj` whose value is out of its range."""
    owner = type(obj).__name__
    for f in dataclasses.fields(obj):
        value, m = getattr(obj, f.name), f.metadata
        kind = type(f.default)
        if kind is bool:
            ok = isinstance(value, bool)
        elif kind is int:
            ok = isinstance(value, int) and not isinstance(value, bool)
        elif kind is float:
            ok = (isinstance(value, (int, float)) and not isinstance(value, bool)
                  and math.isfinite(value))
        else:
            ok = isinstance(value, kind)
        if not ok:
            what = {int: "an int", float: "a finite float", bool: "True or False"}.get(
                kind, f"a {kind.__name__}")
            raise ConfigError(owner, f.name, f"must be {what}, got {value!r}")
        if m.get("choices") is not None and value not in m["choices"]:
            raise ConfigError(owner, f.name, f"must be one of {', '.join(m['choices'])}, "
                                             f"got {value!r}")
        if m.get("lo") is not None and value < m["lo"]:
            raise ConfigError(owner, f.name, f"must be >= {m['lo']}, got {value!r}")
        if m.get("hi") is not None and value > m["hi"]:
            raise ConfigError(owner, f.name, f"must be <= {m['hi']}, got {value!r}")
        if m.get("above") is not None and not value > m["above"]:
            raise ConfigError(owner, f.name, f"must be > {m['above']}, got {value!r}")
        if m.get("below") is not None and not value < m["below"]:
            raise ConfigError(owner, f.name, f"must be < {m['below']}, got {value!r}")


def settings_from_dict(cls, data, source: str):
    """`cls(**data)` for stored settings, with errors that name `source` instead of TypeErrors."""
    if not isinstance(data, dict):
        raise ConfigError(cls.__name__, "settings", f"in {source} must be a JSON object, got "
                                                    f"{type(data).__name__}")
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(str(k) for k in data if k not in known)
    if unknown:
        raise ConfigError(cls.__name__, ", ".join(unknown), f"in {source}: not a setting of "
                                                            f"this version of minigrad")
    return cls(**data)


@dataclass
class TrainConfig:
    """Every setting of the model and its training; stored in the checkpoint."""
    arch: str = setting("transformer", "architecture",
                        choices=("transformer", "rnn", "rnn-attention"))
    d_model: int = setting(128, "model width", lo=1, hi=4096)
    nhead: int = setting(4, "attention heads", lo=1, hi=256)
    num_encoder_layers: int = setting(2, "encoder layers", lo=1, hi=64)
    num_decoder_layers: int = setting(2, "decoder layers", lo=1, hi=64)
    dim_feedforward: int = setting(512, "feed-forward width", lo=1, hi=65536)
    dropout: float = setting(0.1, "dropout probability", lo=0.0, below=1.0)
    max_len: int = setting(64, "longest sentence in tokens (longer ones are cut)", lo=1, hi=1024)
    tokenizer: str = setting("word", "tokenizer", choices=("word", "bpe"))
    bpe_merges: int = setting(1000, "BPE merges (with --tokenizer bpe)", lo=0, hi=1_000_000)
    min_freq: int = setting(1, "word tokenizer: rarer words become <unk>", lo=1)
    share_vocab: bool = setting(False, "one vocabulary (word or BPE) fitted on source and "
                                       "target text together")
    tie_embeddings: bool = setting(False, "source embedding, target embedding and output "
                                          "projection share one matrix (needs --share-vocab)")
    epochs: int = setting(6, "passes over the training data", lo=1)
    batch_size: int = setting(128, "sentences per batch (and per validation batch)", lo=1,
                              hi=1_000_000)
    max_tokens: int = setting(0, "batches by size instead of sentences: at most N padded target "
                                 "tokens a batch, batch x longest target with <eos> (0: use "
                                 "--batch-size)", lo=0, hi=100_000_000)
    lr_factor: float = setting(1.0, "scale of the warm-up learning-rate schedule", above=0.0)
    warmup: int = setting(300, "warm-up steps of the schedule", lo=1)
    label_smoothing: float = setting(0.1, "label smoothing of the loss", lo=0.0, hi=1.0)
    clip_norm: float = setting(1.0, "clip the gradient norm to this (0: off)", lo=0.0)
    seed: int = setting(0, "seed of initialisation, batching and dropout", lo=0, hi=2**63 - 1)
    checkpoint_every: int = setting(500, "write a checkpoint every N steps (0: at the end only)",
                                    lo=0)
    valid_bleu_sentences: int = setting(200, "validation sentences translated for BLEU each "
                                             "epoch", lo=0)
    time_limit: float = setting(0.0, "stop training after this many seconds (0: no limit)",
                                lo=0.0)
    keep_last: int = setting(0, "keep the weights of the last N checkpoints in checkpoints/ "
                                "(for `minigrad-translate average`; 0: none)", lo=0, hi=1000)

    def __post_init__(self):
        check_settings(self)
        if self.arch == "transformer" and self.d_model % self.nhead:
            raise ConfigError("TrainConfig", "d_model", f"({self.d_model}) must be divisible by "
                                                        f"nhead ({self.nhead})")
        if self.tie_embeddings and not self.share_vocab:
            raise ConfigError("TrainConfig", "tie_embeddings", "needs one vocabulary for both "
                                                               "languages: add --share-vocab")
        if self.tie_embeddings and self.arch != "transformer":
            raise ConfigError("TrainConfig", "tie_embeddings", f"is for the transformer, not "
                                                               f"--arch {self.arch}")

    @classmethod
    def from_dict(cls, data, source="the stored config"):
        return settings_from_dict(cls, data, source)

    def describe(self) -> str:
        """The settings in one line, as a resumed run prints them."""
        limit = f"{self.time_limit:g} s" if self.time_limit else "none"
        return (f"{self.arch} d_model {self.d_model}, {self.nhead} heads, "
                f"{self.num_encoder_layers}+{self.num_decoder_layers} layers, feed-forward "
                f"{self.dim_feedforward}, dropout {self.dropout:g}, max_len {self.max_len}, "
                f"{self.tokenizer} tokenizer{', shared' if self.share_vocab else ''}"
                f"{', tied embeddings' if self.tie_embeddings else ''}; "
                f"{self._batching()}, lr factor "
                f"{self.lr_factor:g}, warmup {self.warmup}, label smoothing "
                f"{self.label_smoothing:g}, clip norm {self.clip_norm:g}, seed {self.seed}; "
                f"epochs {self.epochs}, time limit {limit}, checkpoint every "
                f"{self.checkpoint_every}, keep last {self.keep_last}")

    def _batching(self) -> str:
        return (f"batches of {self.max_tokens:,} target tokens" if self.max_tokens else
                f"batch {self.batch_size}")


# What a resumed run may change: when and how often it stops, saves and reports. Everything
# else decides the numbers, so changing it would not continue the run but start another.
RESUMABLE = ("epochs", "time_limit", "checkpoint_every", "valid_bleu_sentences", "keep_last")
