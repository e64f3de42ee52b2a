"""The encoder-decoder Transformer (`minigrad.nn` layers, `minigrad.models` model): the lecture's parameter tables, PyTorch
compatibility (state-dict keys, shapes and outputs, both ways), causality and padding leaks,
a float64 gradcheck through the whole model, and the Annotated Transformer's copy task.

The copy-task model is trained once per session by `trained_copy_model()` (memoised) and is
shared with tests/test_decoding.py.
"""
import functools
import time
from dataclasses import dataclass

import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck, no_grad
from minigrad.models import Seq2SeqTransformer, greedy_decode
from minigrad.nn import (Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder,
                         TransformerEncoderLayer)
from minigrad.optim import Adam
from minigrad.optim.lr_scheduler import WarmupScheduler

BASE = dict(d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
            dim_feedforward=2048)
VOCAB = 37_000  # the paper's shared English-German BPE vocabulary


def count(module):
    return sum(p.numpy().size for p in module.parameters())


# --- the lecture's parameter tables ---------------------------------------------------------

@pytest.fixture(scope="module")
def base_encoder_layer():
    mg.manual_seed(0)
    return TransformerEncoderLayer(512, 8, 2048)


@pytest.fixture(scope="module")
def base_decoder_layer():
    mg.manual_seed(0)
    return TransformerDecoderLayer(512, 8, 2048)


@pytest.fixture(scope="module")
def base_transformer():
    mg.manual_seed(0)
    return Transformer()  # the defaults are the base configuration


@pytest.fixture(scope="module")
def base_seq2seq():
    """The paper's base model: one 37,000-token embedding shared by source and target and tied
    to the output projection, no output bias."""
    mg.manual_seed(0)
    return Seq2SeqTransformer(VOCAB, VOCAB, **BASE, share_embeddings=True, tie_output=True,
                              output_bias=False)


@pytest.fixture(scope="module")
def base_seq2seq_with_bias():
    mg.manual_seed(0)
    return Seq2SeqTransformer(VOCAB, VOCAB, **BASE, share_embeddings=True, tie_output=True,
                              output_bias=True)


def lecture_count(layer):
    """The lecture's count: weight matrices and feed-forward biases only, i.e. every named
    parameter except the attention biases (`self_attn.in_proj_bias`, `self_attn.out_proj.bias`,
    ...) and the layer norms (`norm1.weight`, `norm1.bias`, ...)."""
    return sum(p.numpy().size for name, p in layer.named_parameters()
               if not (("attn" in name and "bias" in name) or "norm" in name))


def test_encoder_layer_has_3_152_384_parameters(base_encoder_layer):
    d, f = 512, 2048
    shapes = {n: tuple(p.shape) for n, p in base_encoder_layer.named_parameters()}
    assert shapes == {
        "self_attn.in_proj_weight": (3 * d, d), "self_attn.in_proj_bias": (3 * d,),
        "self_attn.out_proj.weight": (d, d), "self_attn.out_proj.bias": (d,),
        "linear1.weight": (f, d), "linear1.bias": (f,),
        "linear2.weight": (d, f), "linear2.bias": (d,),
        "norm1.weight": (d,), "norm1.bias": (d,), "norm2.weight": (d,), "norm2.bias": (d,)}
    assert count(base_encoder_layer) == base_encoder_layer.num_parameters() == 3_152_384


def test_encoder_layer_without_attention_biases_and_norms_is_the_lectures_3_148_288(
        base_encoder_layer):
    d, f = 512, 2048
    left_out = {n: p.numpy().size for n, p in base_encoder_layer.named_parameters()
                if ("attn" in n and "bias" in n) or "norm" in n}
    assert left_out == {"self_attn.in_proj_bias": 3 * d, "self_attn.out_proj.bias": d,
                        "norm1.weight": d, "norm1.bias": d, "norm2.weight": d, "norm2.bias": d}
    assert sum(left_out.values()) == 4_096
    # W_Q, W_K, W_V, W_O (4 d^2) + the feed-forward network's W1, b1, W2, b2
    assert 4 * d * d + (d * f + f) + (f * d + d) == 3_148_288
    assert lecture_count(base_encoder_layer) == 3_148_288 == 3_152_384 - 4_096


def test_decoder_layer_has_4_204_032_parameters(base_decoder_layer):
    d, f = 512, 2048
    attention = 4 * d * d + 4 * d  # in_proj (3d, d) + 3d biases, out_proj (d, d) + d
    assert count(base_decoder_layer.self_attn) == count(base_decoder_layer.multihead_attn) == attention
    assert 2 * attention + (d * f + f) + (f * d + d) + 3 * 2 * d == 4_204_032
    assert count(base_decoder_layer) == 4_204_032
    # the same convention as the lecture's encoder number: 8 d^2 + the feed-forward network
    assert lecture_count(base_decoder_layer) == 8 * d * d + 2 * d * f + f + d == 4_196_864


def test_transformer_has_44_140_544_parameters(base_transformer):
    t = base_transformer
    assert len(t.encoder.layers) == len(t.decoder.layers) == 6
    assert count(t.encoder) == 6 * 3_152_384 + 1_024  # + the final layer norm of the stack
    assert count(t.decoder) == 6 * 4_204_032 + 1_024
    assert count(t) == 44_140_544


def test_seq2seq_base_model_has_63_084_544_parameters(base_seq2seq):
    m = base_seq2seq
    assert m.src_embed is m.tgt_embed and m.generator.weight is m.tgt_embed.weight
    assert m.generator.bias is None
    names = [n for n, _ in m.named_parameters()]
    assert len(names) == len(set(names))
    assert sum(n.endswith("embed.weight") or n.startswith("generator") for n in names) == 1
    assert count(m) == 44_140_544 + VOCAB * 512 == 63_084_544


def test_seq2seq_base_model_with_output_bias_adds_37_000(base_seq2seq_with_bias):
    assert base_seq2seq_with_bias.generator.bias.shape == (VOCAB,)
    assert count(base_seq2seq_with_bias) == 63_084_544 + 37_000


def test_summary_reports_the_totals(base_encoder_layer, base_decoder_layer, base_transformer,
                                    base_seq2seq, base_seq2seq_with_bias):
    printed = []
    text = base_seq2seq.summary(print_fn=printed.append)
    assert printed == [text]
    for total in ("63,084,544", "44,140,544", "3,152,384", "4,204,032", "18,944,000"):
        assert total in text
    assert "3,152,384" in base_encoder_layer.summary(print_fn=None)
    assert "4,204,032" in base_decoder_layer.summary(print_fn=None)
    assert "44,140,544" in base_transformer.summary(print_fn=None)
    assert f"{63_084_544 + 37_000:,}" in base_seq2seq_with_bias.summary(print_fn=None)


# --- PyTorch compatibility ------------------------------------------------------------------

SMALL = dict(d_model=16, nhead=4, num_encoder_layers=2, num_decoder_layers=2,
             dim_feedforward=32, dropout=0.0)


def torch_transformer(torch, dtype, **kw):
    return torch.nn.Transformer(**{**SMALL, **kw}, dtype=dtype).eval()


def inputs(batch_first, dtype, B=3, S=6, T=5, D=16, seed=0):
    """Random src/tgt features, padding masks with some padded positions, a causal tgt mask."""
    rng = np.random.default_rng(seed)
    src = rng.standard_normal((B, S, D)).astype(dtype)
    tgt = rng.standard_normal((B, T, D)).astype(dtype)
    src_pad = np.zeros((B, S), bool)
    src_pad[1, 4:] = True
    src_pad[2, 2:] = True
    tgt_pad = np.zeros((B, T), bool)
    tgt_pad[0, 3:] = True  # position 0 is never padded: no row of the causal mask is empty
    if not batch_first:
        src, tgt = src.transpose(1, 0, 2).copy(), tgt.transpose(1, 0, 2).copy()
    mask = Transformer.generate_square_subsequent_mask(T, dtype=dtype)
    return src, tgt, src_pad, tgt_pad, mask


def run_both(ours, theirs, torch, batch_first, dtype):
    src, tgt, src_pad, tgt_pad, mask = inputs(batch_first, dtype)
    with no_grad():
        out = ours(mg.tensor(src), mg.tensor(tgt), tgt_mask=mask, src_key_padding_mask=src_pad,
                   tgt_key_padding_mask=tgt_pad, memory_key_padding_mask=src_pad).numpy()
    with torch.no_grad():
        ref = theirs(torch.from_numpy(src), torch.from_numpy(tgt),
                     tgt_mask=torch.from_numpy(np.asarray(mask.numpy())),
                     src_key_padding_mask=torch.from_numpy(src_pad),
                     tgt_key_padding_mask=torch.from_numpy(tgt_pad),
                     memory_key_padding_mask=torch.from_numpy(src_pad)).numpy()
    assert out.shape == ref.shape and out.dtype == ref.dtype == dtype
    return out, ref


def test_generate_square_subsequent_mask():
    m = np.asarray(Transformer.generate_square_subsequent_mask(4).numpy())
    assert m.shape == (4, 4) and m.dtype == np.float32
    assert np.array_equal(np.isneginf(m), np.triu(np.ones((4, 4), bool), k=1))
    assert (m[np.tril(np.ones((4, 4), bool))] == 0).all()
    m64 = Transformer.generate_square_subsequent_mask(3, dtype=np.float64).numpy()
    assert m64.dtype == np.float64


def test_generate_square_subsequent_mask_equals_torch():
    torch = pytest.importorskip("torch")
    for n in (1, 2, 7):
        ours = np.asarray(Transformer.generate_square_subsequent_mask(n).numpy())
        ref = torch.nn.Transformer.generate_square_subsequent_mask(n).numpy()
        assert ours.dtype == ref.dtype
        assert np.array_equal(ours, ref)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_state_dict_keys_and_shapes_equal_torch(norm_first, batch_first):
    torch = pytest.importorskip("torch")
    mg.manual_seed(0)
    ours = Transformer(**SMALL, norm_first=norm_first, batch_first=batch_first)
    theirs = torch_transformer(torch, torch.float32, norm_first=norm_first,
                               batch_first=batch_first)
    ref = {k: tuple(v.shape) for k, v in theirs.state_dict().items()}
    got = {k: tuple(v.shape) for k, v in ours.state_dict().items()}
    assert list(got) == list(ref)  # same keys, same order
    assert got == ref


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-10), (np.float32, 2e-5)])
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("batch_first", [False, True])
def test_our_weights_in_torch_give_the_same_outputs(norm_first, batch_first, dtype, tol):
    torch = pytest.importorskip("torch")
    mg.manual_seed(1)
    ours = Transformer(**SMALL, norm_first=norm_first, batch_first=batch_first).to(dtype).eval()
    for p in ours.parameters():  # nonzero biases and norms, so every parameter matters
        p.numpy()[...] += np.random.default_rng(p.numpy().size).normal(0, 0.1, p.shape).astype(dtype)
    tdtype = torch.float64 if dtype == np.float64 else torch.float32
    theirs = torch_transformer(torch, tdtype, norm_first=norm_first, batch_first=batch_first)
    result = theirs.load_state_dict({k: torch.from_numpy(np.array(v.numpy()))
                                     for k, v in ours.state_dict().items()}, strict=True)
    assert not result.missing_keys and not result.unexpected_keys
    out, ref = run_both(ours, theirs, torch, batch_first, dtype)
    np.testing.assert_allclose(out, ref, rtol=tol, atol=tol)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-10), (np.float32, 2e-5)])
@pytest.mark.parametrize("norm_first", [False, True])
def test_torch_weights_in_ours_give_the_same_outputs(norm_first, dtype, tol):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    tdtype = torch.float64 if dtype == np.float64 else torch.float32
    theirs = torch_transformer(torch, tdtype, norm_first=norm_first, batch_first=True)
    with torch.no_grad():
        for p in theirs.parameters():
            p.add_(0.1 * torch.randn_like(p))
    ours = Transformer(**SMALL, norm_first=norm_first, batch_first=True).to(dtype).eval()
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    for k, v in theirs.state_dict().items():
        assert np.array_equal(dict(ours.named_parameters())[k].numpy(), v.numpy())
    out, ref = run_both(ours, theirs, torch, True, dtype)
    np.testing.assert_allclose(out, ref, rtol=tol, atol=tol)


# --- leaks: the future and the padding must not matter --------------------------------------

def small_seq2seq(seed=0, norm_first=False, **kw):
    mg.manual_seed(seed)
    cfg = dict(d_model=16, nhead=4, num_encoder_layers=2, num_decoder_layers=2,
               dim_feedforward=32, dropout=0.1, max_len=32, norm_first=norm_first)
    return Seq2SeqTransformer(13, 13, **{**cfg, **kw}).eval()


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_output_at_t_ignores_later_target_tokens(norm_first):
    model = small_seq2seq(norm_first=norm_first)
    rng = np.random.default_rng(0)
    src = rng.integers(3, 13, (3, 7))
    src[1, 5:] = 0
    tgt = rng.integers(3, 13, (3, 9))
    with no_grad():
        base = model(src, tgt).numpy()
        assert base.shape == (3, 9, 13)
        for t in range(9):
            changed = tgt.copy()
            changed[:, t + 1:] = rng.integers(3, 13, changed[:, t + 1:].shape)
            if t + 1 < 9:
                assert (changed != tgt).any()
            out = model(src, changed).numpy()
            np.testing.assert_allclose(out[:, :t + 1], base[:, :t + 1], rtol=1e-5, atol=1e-5)
            if t + 2 < 9:  # the change is visible later on: the check above is not vacuous
                assert np.abs(out[:, t + 1:] - base[:, t + 1:]).max() > 1e-4
        # padding the future instead of changing it does not matter either
        padded = tgt.copy()
        padded[:, 4:] = 0
        np.testing.assert_allclose(model(src, padded).numpy()[:, :4], base[:, :4], rtol=1e-5,
                                   atol=1e-5)


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_output_at_real_positions_ignores_padding(norm_first):
    model = small_seq2seq(seed=1, norm_first=norm_first)
    rng = np.random.default_rng(1)
    src = rng.integers(3, 13, (2, 6))
    src[1, 4:] = 0
    with no_grad():
        memory, pad = model.encode(src)
        assert memory.shape == (2, 6, 16)
        assert np.array_equal(pad, src == 0)
        # more padding on the right: real positions are unchanged
        longer = np.concatenate([src, np.zeros((2, 5), src.dtype)], axis=1)
        memory2, _ = model.encode(longer)
        np.testing.assert_allclose(memory2.numpy()[0, :6], memory.numpy()[0], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(memory2.numpy()[1, :4], memory.numpy()[1, :4], rtol=1e-5, atol=1e-5)
        # and the decoder's logits do not change either
        tgt = rng.integers(3, 13, (2, 5))
        np.testing.assert_allclose(model(longer, tgt).numpy(), model(src, tgt).numpy(), rtol=1e-5,
                                   atol=1e-5)


@pytest.mark.parametrize("norm_first", [False, True])
def test_values_at_padded_source_positions_do_not_leak(norm_first):
    """Whatever sits at a padded position (in the encoder input or the memory) is ignored."""
    mg.manual_seed(2)
    model = Transformer(**SMALL, batch_first=True, norm_first=norm_first).double().eval()
    src, tgt, src_pad, _, mask = inputs(True, np.float64)
    garbage = src.copy()
    garbage[src_pad] = np.random.default_rng(5).normal(0, 10, garbage[src_pad].shape)
    with no_grad():
        mem = model.encoder(mg.tensor(src), src_key_padding_mask=src_pad).numpy()
        mem2 = model.encoder(mg.tensor(garbage), src_key_padding_mask=src_pad).numpy()
        np.testing.assert_allclose(mem2[~src_pad], mem[~src_pad], rtol=1e-10, atol=1e-10)
        if norm_first:  # PyTorch's nested-tensor path is off for pre-norm layers
            assert np.abs(mem2[src_pad] - mem[src_pad]).max() > 1e-3  # they did change there
        else:  # as that path: padded positions are zeros before the final norm
            np.testing.assert_array_equal(mem2[src_pad], mem[src_pad])
            assert np.allclose(mem[src_pad], model.encoder.norm.bias.numpy())
        out = model(mg.tensor(src), mg.tensor(tgt), tgt_mask=mask, src_key_padding_mask=src_pad,
                    memory_key_padding_mask=src_pad).numpy()
        out2 = model(mg.tensor(garbage), mg.tensor(tgt), tgt_mask=mask,
                     src_key_padding_mask=src_pad, memory_key_padding_mask=src_pad).numpy()
        np.testing.assert_allclose(out2, out, rtol=1e-10, atol=1e-10)


def test_causal_mask_bool_float_and_is_causal_agree():
    mg.manual_seed(3)
    model = Transformer(**SMALL, batch_first=True).double().eval()
    src, tgt, _, _, mask = inputs(True, np.float64)
    T = tgt.shape[1]
    with no_grad():
        a = model(mg.tensor(src), mg.tensor(tgt), tgt_mask=mask).numpy()
        b = model(mg.tensor(src), mg.tensor(tgt),
                  tgt_mask=np.triu(np.ones((T, T), bool), k=1)).numpy()
        c = model(mg.tensor(src), mg.tensor(tgt), tgt_is_causal=True).numpy()
        d = model(mg.tensor(src), mg.tensor(tgt)).numpy()  # no mask: attends to the future
    np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(c, a, rtol=1e-12, atol=1e-12)
    assert np.abs(d - a).max() > 1e-3


# --- gradcheck ------------------------------------------------------------------------------

@pytest.mark.parametrize("norm_first", [False, True])
def test_gradcheck_through_a_tiny_transformer(norm_first):
    mg.manual_seed(4)
    model = Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2,
                        dim_feedforward=16, dropout=0.0, batch_first=True,
                        norm_first=norm_first).double()
    params = dict(model.named_parameters())
    rng = np.random.default_rng(4)
    for p in params.values():  # move biases and norms away from 0 and 1
        p.numpy()[...] += rng.normal(0, 0.1, p.shape)
    B, S, T = 2, 4, 3
    src = mg.tensor(rng.standard_normal((B, S, 8)), dtype=mg.float64, requires_grad=True)
    tgt = mg.tensor(rng.standard_normal((B, T, 8)), dtype=mg.float64, requires_grad=True)
    src_pad = np.zeros((B, S), bool)
    src_pad[1, 3:] = True
    mask = Transformer.generate_square_subsequent_mask(T, dtype=np.float64)
    # one parameter of each kind (small ones where there is a choice); pre-norm reuses the
    # same code paths, so it checks a shorter list to keep the runtime down
    checked = ["encoder.layers.0.self_attn.in_proj_weight",
               "encoder.layers.1.self_attn.out_proj.bias",
               "encoder.layers.0.linear1.bias",
               "encoder.layers.1.norm2.weight",
               "encoder.norm.bias",
               "decoder.layers.0.multihead_attn.in_proj_bias",
               "decoder.layers.1.self_attn.in_proj_bias",
               "decoder.layers.0.linear2.bias",
               "decoder.layers.1.norm3.bias",
               "decoder.norm.weight"]
    if norm_first:
        checked = ["encoder.layers.0.norm1.weight", "decoder.layers.1.norm2.bias",
                   "decoder.layers.1.multihead_attn.out_proj.bias", "decoder.norm.weight"]
    def fn(src, tgt, *_):
        out = model(src, tgt, tgt_mask=mask, src_key_padding_mask=src_pad,
                    memory_key_padding_mask=src_pad)
        assert out.numpy().dtype == np.float64
        return out

    assert gradcheck(fn, [src, tgt] + [params[n] for n in checked], eps=1e-6, atol=1e-6,
                     rtol=1e-4)
    # the padded source position gets no gradient at all
    out = fn(src, tgt)
    out.backward(mg.tensor(np.random.default_rng(0).standard_normal(out.shape)))
    assert np.abs(src.grad.numpy()[1, 3:]).max() == 0


# --- the copy task --------------------------------------------------------------------------

PAD, BOS, EOS = 0, 1, 2
COPY_VOCAB, COPY_LEN = 11, 10  # symbols are 3..10; 0, 1, 2 are <pad>, <bos>, <eos>


@dataclass
class CopyTask:
    model: Seq2SeqTransformer
    losses: list
    train_seconds: float
    test_src: np.ndarray  # (50, 10) sequences never seen in training
    early_state: dict  # the weights after 120 of the 400 steps


def copy_batch(rng, n):
    return rng.integers(3, COPY_VOCAB, size=(n, COPY_LEN))


@functools.lru_cache(maxsize=None)
def trained_copy_model():
    """Train a small Transformer on the Annotated Transformer's copy task (once per session):
    src = 10 random symbols, target = <bos> symbols -> symbols <eos>."""
    mg.manual_seed(0)
    d_model, batch, steps = 32, 64, 400
    model = Seq2SeqTransformer(COPY_VOCAB, COPY_VOCAB, d_model=d_model, nhead=4,
                               num_encoder_layers=2, num_decoder_layers=2,
                               dim_feedforward=64, dropout=0.0, max_len=16, pad_id=PAD)
    opt = Adam(model.parameters(), lr=0.0, betas=(0.9, 0.98), eps=1e-9)
    sched = WarmupScheduler(opt, d_model, warmup_steps=200, factor=0.5)  # peak lr 6.25e-3
    rng = np.random.default_rng(1)
    seen, losses = set(), []
    model.train()
    start = time.perf_counter()
    for _ in range(steps):
        src = copy_batch(rng, batch)
        seen.update(map(bytes, src.astype(np.int8)))
        tgt_in = np.concatenate([np.full((batch, 1), BOS), src], axis=1)
        tgt_out = np.concatenate([src, np.full((batch, 1), EOS)], axis=1)
        opt.zero_grad()
        loss = model.loss(src, tgt_in, tgt_out)
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
        if len(losses) == 120:  # half-trained: unsure of itself, for the beam-search tests
            # state_dict() shares memory with the model, as PyTorch's: clone to keep it
            snapshot = {k: v.clone() for k, v in model.state_dict().items()}
    seconds = time.perf_counter() - start
    model.eval()
    test_rng = np.random.default_rng(12345)
    test = [s for s in copy_batch(test_rng, 60) if bytes(s.astype(np.int8)) not in seen][:50]
    return CopyTask(model, losses, seconds, np.stack(test), snapshot)


def test_copy_task_loss_falls():
    # 400 steps; about 11 s on an idle 2-core machine. Timings belong in bench/, so the time
    # is reported, never asserted.
    task = trained_copy_model()
    first, last = np.mean(task.losses[:10]), np.mean(task.losses[-20:])
    assert np.isfinite(task.losses).all()
    assert first > 1.5  # about log(8) at the start
    assert last < 0.05 and last < first / 30
    print(f"copy task trained in {task.train_seconds:.1f} s")


def test_copy_task_greedy_decoding_reproduces_unseen_sequences():
    task = trained_copy_model()
    src = task.test_src
    assert src.shape == (50, COPY_LEN)
    out = greedy_decode(task.model, src, max_len=COPY_LEN + 1, bos_id=BOS, eos_id=EOS)
    expected = np.concatenate([src, np.full((50, 1), EOS)], axis=1)
    assert out.tokens.shape == expected.shape
    exact = (out.tokens == expected).all(axis=1).mean()
    assert exact >= 0.95, f"only {exact:.0%} of unseen sequences copied exactly"


# --- errors ---------------------------------------------------------------------------------

@pytest.mark.parametrize("batch_first", [False, True])
def test_forward_rejects_mismatched_batch_sizes(batch_first):
    model = Transformer(**SMALL, batch_first=batch_first)
    src = np.zeros((2, 5, 16) if batch_first else (5, 2, 16), np.float32)
    tgt = np.zeros((3, 4, 16) if batch_first else (4, 3, 16), np.float32)
    with pytest.raises(ValueError, match="batch size"):
        model(mg.tensor(src), mg.tensor(tgt))


@pytest.mark.parametrize("which", ["src", "tgt"])
def test_forward_rejects_wrong_d_model(which):
    model = Transformer(**SMALL, batch_first=True)
    src = np.zeros((2, 5, 12 if which == "src" else 16), np.float32)
    tgt = np.zeros((2, 4, 12 if which == "tgt" else 16), np.float32)
    with pytest.raises(ValueError, match=r"d_model=16.*\[2, 5, (12|16)\].*\[2, 4, (12|16)\]"):
        model(mg.tensor(src), mg.tensor(tgt))


def test_seq2seq_constructor_errors():
    with pytest.raises(ValueError, match="share_embeddings"):
        Seq2SeqTransformer(10, 12, d_model=8, nhead=2, share_embeddings=True)
    with pytest.raises(ValueError, match="activation"):
        TransformerEncoderLayer(8, 2, 16, activation="swish")
    with pytest.raises(ValueError, match="divisible"):
        TransformerDecoderLayer(10, 3, 16)


def test_stacks_are_independent_copies():
    layer = TransformerEncoderLayer(8, 2, 16)
    enc = TransformerEncoder(layer, 3)
    dec = TransformerDecoder(TransformerDecoderLayer(8, 2, 16), 2)
    assert enc.layers[0] is not layer and enc.layers[0].linear1.weight is not enc.layers[1].linear1.weight
    assert count(enc) == 3 * count(layer) and enc.norm is None
    assert len(dec.layers) == 2


def test_seq2seq_without_padding_skips_the_masks_with_the_same_numbers():
    """A batch with no padding token gives attention no key padding mask (its passes are
    skipped): the loss and every gradient have the bits of the same step with the all-False
    masks given explicitly."""
    from minigrad.nn import functional as F
    r = np.random.default_rng(0)
    src, tin, tout = (r.integers(3, 20, (3, n)) for n in (6, 5, 5))

    def run(explicit):
        mg.manual_seed(7)
        model = Seq2SeqTransformer(20, 20, d_model=16, nhead=4, num_encoder_layers=1,
                                   num_decoder_layers=1, dim_feedforward=32, dropout=0.1)
        model.train()
        masks = []
        enc_forward = model.transformer.encoder.forward

        def recording(x, **kw):
            masks.append(kw.get("src_key_padding_mask"))
            return enc_forward(x, **kw)
        model.transformer.encoder.forward = recording
        if explicit:
            none = np.zeros(src.shape, bool)
            memory = model.transformer.encoder(model._embed(model.src_embed, src),
                                               src_key_padding_mask=none)
            h = model.transformer.decoder(model._embed(model.tgt_embed, tin), memory,
                                          memory_key_padding_mask=none, tgt_is_causal=True)
            loss = F.cross_entropy(model.generator(h).reshape(-1, 20), tout.reshape(-1),
                                   ignore_index=0, label_smoothing=0.1)
        else:
            loss = model.loss(src, tin, tout, 0.1)
        loss.backward()
        return masks, [loss.item()] + [p.grad.numpy().copy() for p in model.parameters()]
    (skipped,), got = run(False)
    assert skipped is None
    (given,), want = run(True)
    assert given is not None and not given.any()
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
