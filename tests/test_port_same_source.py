"""minigrad's promise taken literally: each program of tests/torch_programs/ is written for
PyTorch (seeded once at the top, its data generated, its weights PyTorch's defaults); it runs
as is with PyTorch and with only its import lines rewritten for minigrad, each in its own
process, and the two printed outputs must agree (tests/same_source.py says how).

The programs run in ten groups of about equal time, one process per library and group, so
that PyTorch's import is paid twice per group and the groups share the suite's two
processes. The minigrad process draws PyTorch's dropout masks (same_source.py says why), so
programs that train with dropout compare too."""
import pathlib

import pytest

from same_source import compare_outputs, compare_programs, exact_lines, rewrite_imports, tolerance

PROGRAMS = pathlib.Path(__file__).parent / "torch_programs"
GROUPS = {
    "vision and tabular": ["mlp_classifier", "cnn_batchnorm", "autoencoder_resume",
                           "regression_plateau", "conv_vae", "policy_gradient"],
    "vision, generative and training mechanics": ["v_gan_points", "v_cnn_accumulate", "v_hooks",
                                                  "v_param_groups", "v_dropout_mlp",
                                                  "v_custom_functions", "v_unet_denoise",
                                                  "v_sampling_generative"],
    "sequences and text": ["lstm_padded", "gru_seq2seq", "char_generator", "bigram_makemore",
                           "transformer_classifier", "transformer_lm", "bigru_tagger",
                           "v_tensor_logic", "v_transformer_dropout"],
    "attention, numerics and probability": ["s_numerics_exact", "s_bahdanau_seq2seq",
                                            "s_multihead_einsum", "s_skipgram_negative",
                                            "s_conv_text_bag", "s_crf_mixture", "s_pack_lr_save",
                                            "s_seeded_draws"],
    "around the model: data, checkpoints, switches, logging": [
        "n_checkpoint_resume", "n_data_pipeline", "n_device_switches", "n_tensorboard_schedules"],
    "around the model: export, utilities, probability, helpers": [
        "n_onnx_export", "n_tensor_utilities", "n_variational_regression", "n_training_utilities"],
    "flows, kernels and second order": ["m_realnvp_flow", "m_gp_regression", "m_second_order"],
    "representation, distillation, graphs and vision": [
        "m_contrastive_ntxent", "m_distillation", "m_gcn_sampling", "m_resnet_unpool"],
    "vision transformer, Q-learning, metric learning and boxes": [
        "p_vit_onecycle", "p_dqn_replay", "p_metric_learning", "p_boxes_nms"],
    "torch.func, optimizers, CTC, signals, mixtures and parametrizations": [
        "p_func_ensembles", "p_optimizer_zoo", "p_ctc_bilstm", "p_stft_audio",
        "p_mdn_recommender", "p_style_parametrize"],
}


def test_every_program_is_in_a_group():
    grouped = sorted(name for names in GROUPS.values() for name in names)
    assert grouped == sorted(p.stem for p in PROGRAMS.glob("*.py"))


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_programs_print_the_same_with_minigrad(torch, group):
    sources = [(name, (PROGRAMS / f"{name}.py").read_text()) for name in GROUPS[group]]
    results, expected, got = compare_programs(sources)
    for (name, _), want, have in zip(sources, expected, got):
        print(f"\n--- {name}: PyTorch\n{want['out']}--- {name}: minigrad\n{have['out']}")
    mismatches = {name: problem for name, problem in results.items() if problem is not None}
    assert not mismatches, "\n\n".join(f"{name}: {problem}" for name, problem in mismatches.items())


def test_the_rewrite_changes_import_lines_only():
    source = ("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
              "from torch.utils.data import DataLoader, TensorDataset\n"
              "from torch import nn\nimport torch.optim\n"
              "x = torch.zeros(3)  # import torch in a comment stays\n"
              "    from torch.optim.lr_scheduler import LambdaLR\n")
    assert rewrite_imports(source) == (
        "import minigrad as torch\nimport minigrad.nn as nn\nimport minigrad.nn.functional as F\n"
        "from minigrad.utils.data import DataLoader, TensorDataset\n"
        "from minigrad import nn\nimport minigrad.optim; import minigrad as torch\n"
        "x = torch.zeros(3)  # import torch in a comment stays\n"
        "    from minigrad.optim.lr_scheduler import LambdaLR\n")


@pytest.mark.parametrize("line", ["import torch.fx as fx", "from torch.autograd.graph import Node",
                                  "import torch, numpy"])
def test_an_import_the_table_lacks_is_refused(line):
    with pytest.raises(ValueError, match="line 2"):
        rewrite_imports("x = 1\n" + line + "\n")


def test_the_comparison_finds_each_kind_of_difference():
    want = "step 0 loss 0.693147 ids [3, 1, 2]\nlr 0.1\n"
    assert compare_outputs(want, "step 0 loss 0.693148 ids [3, 1, 2]\nlr 0.1\n", 1e-5, 0) is None
    assert "line 1" in compare_outputs(want, "step 0 loss 0.6933 ids [3, 1, 2]\nlr 0.1\n", 1e-5, 0)
    assert "line 1" in compare_outputs(want, "step 0 loss 0.693147 ids [3, 2, 2]\nlr 0.1\n",
                                       1e-5, 0)
    assert "lines printed" in compare_outputs(want, "step 0 loss 0.693147 ids [3, 1, 2]\n", 1e-5, 0)
    exact = exact_lines("# same-source exact: ^lr\n")
    assert "line 2" in compare_outputs(want, want.replace("0.1", "0.10000001"), 1e-5, 0, exact)
    assert compare_outputs(want, want.replace("0.1\n", "0.10000001\n"), 1e-5, 0) is None
    assert compare_outputs("torch.Size([2, 3]) dtype=torch.int32\n",
                           "minigrad.Size([2, 3]) dtype=minigrad.int32\n", 0, 0) is None
    assert compare_outputs("torch.Size([2, 3])\n", "numpy.Size([2, 3])\n", 0, 0) is not None


def test_every_program_states_its_tolerance():
    for path in PROGRAMS.glob("*.py"):
        rtol, atol = tolerance(path.read_text())
        assert 0 < rtol <= 1e-3 and 0 <= atol <= 1e-5, path.name
