"""minigrad.onnx.export: every exported file passes onnx's checker and runs in onnxruntime to
minigrad's outputs, also on inputs other than the traced ones (other batch sizes, masks,
padding); an exported Transformer gives PyTorch's outputs; what cannot be exported says which
op, and where."""
import io

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn
from minigrad.autograd.op import Op
from minigrad.models import Seq2SeqTransformer

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
mo = pytest.importorskip("minigrad.onnx")


def exported(model, args, **kw):
    """(onnxruntime session, model proto) of `model` exported on `args`."""
    buf = io.BytesIO()
    mo.export(model, args, buf, **kw)
    proto = onnx.load_from_string(buf.getvalue())
    onnx.checker.check_model(proto, full_check=True)
    return ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"]), proto


def run(session, *arrays):
    feeds = [np.asarray(a.numpy() if isinstance(a, mg.Tensor) else a) for a in arrays]
    return session.run(None, {i.name: a for i, a in zip(session.get_inputs(), feeds)})


def check(got, want, rtol=1e-5, atol=1e-6):
    want = want if isinstance(want, (tuple, list)) else [want]
    assert len(got) == len([w for w in want if w is not None])
    for g, w in zip(got, [w for w in want if w is not None]):
        np.testing.assert_allclose(g, w.numpy(), rtol=rtol, atol=atol)


def test_mlp_exports_in_eval_mode_with_a_dynamic_batch():
    mg.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 16), nn.GELU(), nn.Dropout(0.5), nn.Linear(16, 8),
                          nn.Tanh(), nn.Linear(8, 3), nn.Softmax(-1))
    model.train()
    session, proto = exported(model, (mg.randn(5, 4),), input_names=["x"], output_names=["y"],
                              dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    assert model.training  # put back in the mode it was in
    assert [i.name for i in proto.graph.initializer if "." in i.name] == [
        "0.weight", "0.bias", "3.weight", "3.bias", "5.weight", "5.bias"]
    assert proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    model.eval()
    x = mg.randn(9, 4)  # another batch size than the traced one
    check(run(session, x), model(x))


class EmbedNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(11, 8, padding_idx=0)
        self.norm = nn.LayerNorm(8)
        self.out = nn.Linear(8, 5)

    def forward(self, ids):
        h = self.norm(self.embed(ids) * 2.0)
        h = mg.cat([h[:, :1], h[:, 1:].relu()], dim=1).permute(1, 0, 2).transpose(0, 1)
        return self.out(h).softmax(-1), h.reshape(h.shape[0], -1).sum(-1), ids != 0


def test_embedding_layer_norm_and_integer_and_boolean_outputs():
    mg.manual_seed(1)
    model = EmbedNorm().eval()
    session, _ = exported(model, (mg.tensor([[1, 2, 0], [4, 10, 3]]),))
    ids = mg.tensor([[5, 0, 0], [7, 7, 1]])
    got = run(session, ids)
    check(got, model(ids))
    assert got[2].dtype == np.bool_


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.mha = nn.MultiheadAttention(8, 2, dropout=0.2, batch_first=True)

    def forward(self, q, kv, key_padding_mask, attn_mask):
        return self.mha(q, kv, kv, key_padding_mask=key_padding_mask, attn_mask=attn_mask,
                        average_attn_weights=False)


def test_multihead_attention_masks_are_inputs_not_constants():
    mg.manual_seed(2)
    model = Attention().eval()
    q, kv = mg.randn(2, 5, 8), mg.randn(2, 6, 8)
    pad = mg.tensor(np.array([[False] * 6, [False] * 4 + [True] * 2]))
    causal = mg.tensor(np.triu(np.full((5, 6), -np.inf, np.float32), 2))
    session, _ = exported(model, (q, kv, pad, causal))
    check(run(session, q, kv, pad, causal), model(q, kv, pad, causal))
    # other masks than the traced ones, a fully masked query row among them
    pad2 = mg.tensor(np.array([[False] * 5 + [True], [True] * 6]))
    other = mg.tensor(np.random.default_rng(0).normal(size=(5, 6)).astype(np.float32))
    check(run(session, q, kv, pad2, other), model(q, kv, pad2, other))


@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_encoder_layer_with_a_dynamic_batch(norm_first):
    mg.manual_seed(3)
    layer = nn.TransformerEncoderLayer(8, 2, 16, batch_first=True, norm_first=norm_first,
                                       activation="gelu").eval()
    session, _ = exported(layer, (mg.randn(2, 5, 8),), input_names=["src"],
                          dynamic_axes={"src": {0: "batch"}})
    x = mg.randn(3, 5, 8)
    check(run(session, x), layer(x))


def test_seq2seq_transformer_with_other_padding_than_traced():
    mg.manual_seed(4)
    model = Seq2SeqTransformer(13, 11, d_model=16, nhead=4, num_encoder_layers=1,
                               num_decoder_layers=1, dim_feedforward=32, max_len=16).eval()
    src = mg.tensor([[3, 4, 5, 6, 0, 0], [7, 8, 9, 10, 11, 12]])
    tgt = mg.tensor([[1, 5, 6, 0, 0], [1, 2, 3, 4, 5]])
    session, _ = exported(model, (src, tgt), input_names=["src", "tgt_in"],
                          output_names=["logits"], dynamic_axes={"src": [0], "tgt_in": [0]})
    out_dims = session.get_outputs()[0].shape  # named like the input dim of the traced size
    assert out_dims[0] == "src_dynamic_axes_1" and out_dims[1:] == [5, 11]
    src2 = mg.tensor([[3, 0, 0, 0, 0, 0], [7, 8, 9, 0, 0, 0], [4, 4, 4, 4, 4, 4]])
    tgt2 = mg.tensor([[1, 2, 0, 0, 0], [1, 9, 9, 9, 0], [1, 3, 3, 3, 3]])
    check(run(session, src2, tgt2), model(src2, tgt2), atol=1e-5)


def test_gru_unrolled_over_time_and_gru_cell():
    mg.manual_seed(5)
    gru = nn.GRU(4, 6, num_layers=2, bidirectional=True, batch_first=True).eval()
    x, h0 = mg.randn(3, 5, 4), mg.randn(4, 3, 6)
    session, _ = exported(gru, (x, h0))
    x2, h2 = mg.randn(3, 5, 4), mg.randn(4, 3, 6)
    check(run(session, x2, h2), gru(x2, h2))
    cell = nn.GRUCell(4, 6)
    session, _ = exported(cell, (mg.randn(2, 4), mg.randn(2, 6)))
    x, h = mg.randn(2, 4), mg.randn(2, 6)
    check(run(session, x, h), cell(x, h))


@pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors")
def test_exported_transformer_gives_pytorchs_outputs():
    torch = pytest.importorskip("torch")
    mg.manual_seed(6)
    kw = dict(d_model=16, nhead=4, num_encoder_layers=2, num_decoder_layers=1,
              dim_feedforward=32, dropout=0.1, batch_first=True)
    ours = nn.Transformer(**kw).eval()
    for p in ours.parameters():  # nonzero biases and norms, so every parameter matters
        p.numpy()[...] += np.random.default_rng(p.numpy().size).normal(0, 0.1, p.shape)
    theirs = torch.nn.Transformer(**kw).eval()
    theirs.load_state_dict({k: torch.from_numpy(np.array(v.numpy()))
                            for k, v in ours.state_dict().items()})
    rng = np.random.default_rng(0)
    src, tgt = (rng.normal(size=s).astype(np.float32) for s in ((2, 7, 16), (2, 5, 16)))
    tgt_mask = np.triu(np.full((5, 5), -np.inf, np.float32), 1)
    pad = np.zeros((2, 7), bool)
    pad[1, 5:] = True

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.transformer = ours

        def forward(self, src, tgt, tgt_mask, src_key_padding_mask):
            return self.transformer(src, tgt, tgt_mask=tgt_mask,
                                    src_key_padding_mask=src_key_padding_mask,
                                    memory_key_padding_mask=src_key_padding_mask)
    session, _ = exported(Model(), tuple(mg.tensor(a) for a in (src, tgt, tgt_mask, pad)))
    got = run(session, src, tgt, tgt_mask, pad)[0]
    with torch.no_grad():
        t = [torch.from_numpy(a) for a in (src, tgt, tgt_mask, pad)]
        want = theirs(t[0], t[1], tgt_mask=t[2], src_key_padding_mask=t[3],
                      memory_key_padding_mask=t[3]).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=2e-5)


class Cumulative(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = nn.Linear(3, 3)

    def forward(self, x):
        return self.inner(x).logcumsumexp(0)


class Loss(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(3, 4)

    def forward(self, x, y):
        return nn.functional.cross_entropy(self.head(x), y)


def test_an_op_that_cannot_be_expressed_is_named_with_its_module():
    with pytest.raises(mo.errors.UnsupportedOperatorError,
                       match=r"LogCumSumExp \(in module 'Cumulative'\).*numpy\.logaddexp"):
        mo.export(Cumulative(), (mg.randn(2, 3),))
    with pytest.raises(mo.errors.UnsupportedOperatorError,
                       match=r"CrossEntropy \(in module 'Loss'\).*compiled code"):
        mo.export(Loss(), (mg.randn(2, 3), mg.tensor([1, 2])))


def test_dropout_in_training_mode_is_refused():
    model = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5))
    with pytest.raises(mo.errors.UnsupportedOperatorError, match="Dropout.*eval mode"):
        mo.export(model, (mg.randn(2, 3),), training=mo.TrainingMode.TRAINING)


def test_pytorchs_arguments_return_values_and_opsets():
    mg.manual_seed(7)
    model = nn.Linear(3, 2)
    x = mg.randn(4, 3)
    program = mo.export(model, (x,), None, opset_version=17, verbose=False,
                        do_constant_folding=True)
    assert isinstance(program, mo.ONNXProgram) and program.model_proto.opset_import[0].version == 17
    check(program(x), model(x))  # calling the program runs it in onnxruntime
    assert mo.export(model, x, io.BytesIO(), dynamo=False) is None
    session, proto = exported(model, (x,), export_params=False)
    assert not proto.graph.initializer
    assert [i.name for i in session.get_inputs()] == ["input", "weight", "bias"]  # forward(input)
    got = run(session, x, model.weight, model.bias)
    check(got, model(x))
    session, proto = exported(model, (x,), verify=True, keep_initializers_as_inputs=True,
                              dynamic_shapes={"input": {0: "rows"}})
    assert [i.name for i in proto.graph.input] == ["input", "weight", "bias"]
    assert proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "rows"
    with pytest.warns(UserWarning, match="cannot be converted to opset 14.*written in opset 18"):
        program = mo.export(nn.LayerNorm(3), (x,), opset_version=14)
    assert program.model_proto.opset_import[0].version == 18
    assert not mo.is_in_onnx_export()
    with pytest.raises(NotImplementedError, match="export_modules_as_functions"):
        mo.export(model, (x,), export_modules_as_functions=True)


class ManyOps(nn.Module):
    """One model through most of the op table, on floats, integer ids and a bool mask."""

    def __init__(self):
        super().__init__()
        self.norm = nn.BatchNorm1d(4)

    def forward(self, x, ids, mask):
        a = (x * 2 - 1) / (x.abs() + 1) ** 2
        b = mg.where(mask, a.abs().exp().log().sqrt().clamp(min=0.1, max=3.0), -a.sigmoid())
        c = nn.functional.leaky_relu(b, 0.2) + b.gelu("tanh") + b.maximum(a).minimum(x.tanh())
        red = (c.sum(-1), c.mean(0, keepdim=True), c.amax(1), c.amin(-1), c.var(1),
               c.std(0, unbiased=False), c.logsumexp(-1), c.log_softmax(0))
        picked = c.gather(1, ids) + c.index_select(0, mg.tensor([2, 0])).sum()
        rows = mg.stack([c[0], c[-1]], dim=1).unsqueeze(0).expand(3, 4, 2).flatten(1)
        return red + (picked, rows, self.norm(c), c[:, mask], (ids * 2 - 3) // 2, (ids - 2) % 3,
                      x.float() > 0.5, x.argmax(-1), x.argmin(0, keepdim=True), c.norm(dim=-1),
                      c.norm(p=1, dim=0, keepdim=True))


def test_the_op_table_on_other_inputs_than_traced():
    mg.manual_seed(8)
    model = ManyOps().eval()
    model.norm.running_mean.numpy()[...] = [0.1, -0.2, 0.3, 0.0]
    x, ids = mg.rand(3, 4), mg.tensor([[0, 3], [1, 1], [2, 0]])
    mask = mg.tensor(np.array([True, False, True, False]))
    session, _ = exported(model, (x, ids, mask))
    x2, ids2 = mg.rand(3, 4), mg.tensor([[3, 3], [0, 2], [1, 1]])
    mask2 = mg.tensor(np.array([False, True, True, True]))
    check(run(session, x2, ids2, mask2), model(x2, ids2, mask2), rtol=1e-5, atol=1e-6)


class Gates(Op):
    """An LSTM step's gates written in NumPy, without an ONNX mapping: (gates (B, 4H), c (B, H))
    -> [h', c'] (B, 2H). Exported as the NumPy operations of its forward."""

    @staticmethod
    def forward(ctx, gates, c):
        from minigrad.kernels.reference import sigmoid
        i, f, g, o = np.split(gates, 4, axis=-1)
        c_new = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
        return np.concatenate([sigmoid(o) * np.tanh(c_new), c_new], axis=-1)

    @staticmethod
    def backward(ctx, grad):
        raise NotImplementedError("a forward-only test op")


class TinyLSTM(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.ih, self.hh, self.h = nn.Linear(d, 4 * h), nn.Linear(h, 4 * h, bias=False), h

    def forward(self, x):
        h = c = mg.zeros(x.shape[1], self.h)
        outs = []
        for t in range(x.shape[0]):
            hc = Gates.apply(self.ih(x[t]) + self.hh(h), c)
            h, c = hc[:, :self.h], hc[:, self.h:]
            outs.append(h)
        return mg.stack(outs), c


def test_an_op_written_in_numpy_exports_unrolled_without_a_mapping():
    mg.manual_seed(9)
    model = TinyLSTM(3, 5)
    session, _ = exported(model, (mg.randn(4, 2, 3),))
    x = mg.randn(4, 2, 3)
    check(run(session, x), model(x))


class Baked(nn.Module):
    def forward(self, x, ids):
        keep = np.asarray(ids.numpy(), dtype=np.float32) > 2  # a copy NumPy does not dispatch
        return x.masked_fill(mg.tensor(keep), 0.0)


def test_a_value_computed_from_the_inputs_out_of_sight_is_an_error_not_a_constant():
    with pytest.raises(mo.errors.UnsupportedOperatorError,
                       match=r"MaskedFill \(in module 'Baked'\) uses a value that the model "
                             r"computed from its inputs outside the traced operations"):
        mo.export(Baked(), (mg.randn(2, 3), mg.tensor([[1, 2, 3], [4, 5, 6]])))
    # a NumPy function the tracer cannot follow (it sorts a copy in place)
    with pytest.raises(mo.errors.UnsupportedOperatorError,
                       match=r"used by Add was computed from the inputs by numpy\.sort"):
        mo.export(lambda x: x + np.sort(x.numpy(), axis=-1), (mg.randn(2, 3),))
    # an output that is such a value: the argmax of the whole tensor, a NumPy scalar
    with pytest.raises(mo.errors.UnsupportedOperatorError, match="output 'output_0' is a value"):
        mo.export(lambda x: x.argmax(), (mg.randn(2, 3),))


def test_values_fixed_by_position_and_by_value_are_both_found():
    # noise cannot move this argmax: moving the elements along the array does
    peak = mg.tensor([[0.0, 0.0, 100.0], [0.0, 0.0, 0.0]])
    with pytest.raises(mo.errors.UnsupportedOperatorError, match="output 'output_0' is a value"):
        mo.export(lambda x: x.argmax(), (peak,))
    # moving the elements keeps this sum: noise changes it
    with pytest.raises(mo.errors.UnsupportedOperatorError, match="Mul uses a value"):
        mo.export(lambda x: x * x.sum().item(), (mg.randn(2, 3),))


def test_bert_classifier_with_its_padding_mask():
    from minigrad.models.bert import BertEncoder, BertForSequenceClassification
    mg.manual_seed(10)
    model = BertForSequenceClassification(
        BertEncoder(30, d_model=16, nhead=2, num_layers=1, dim_feedforward=32), 3).eval()
    session, _ = exported(model, (mg.tensor([[2, 5, 6, 0], [3, 4, 7, 8]]),))
    ids = mg.tensor([[9, 0, 0, 0], [3, 4, 7, 0]])
    check(run(session, ids), model(ids))
