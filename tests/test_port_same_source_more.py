"""More PyTorch programs run from the same source text with PyTorch and with minigrad
(tests/same_source.py says how), in domains the programs of tests/test_port_same_source.py do
not cover: contrastive learning, normalizing flows, second-order gradients (a physics-informed
net and MAML), Gaussian processes, distillation, a grouped/dilated ResNet with max-unpooling,
and message passing with sampling utilities. The programs are those of
tests/torch_programs_more/ (a directory of their own, so that each test file's check that every
program is in one of its groups reads one directory); each group runs in one process per
library."""
import pathlib

import pytest

from same_source import compare_programs, tolerance

PROGRAMS = pathlib.Path(__file__).parent / "torch_programs_more"
GROUPS = {
    "flows, kernels and second order": ["realnvp_flow", "gp_regression", "second_order"],
    "representation, distillation, graphs and vision": ["contrastive_ntxent", "distillation",
                                                         "gcn_sampling", "resnet_unpool"],
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


def test_every_program_states_its_tolerance():
    for path in PROGRAMS.glob("*.py"):
        rtol, atol = tolerance(path.read_text())
        assert 0 < rtol <= 1e-3 and 0 <= atol <= 1e-5, path.name
