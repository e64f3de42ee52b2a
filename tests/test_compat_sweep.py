"""Every elementwise, reduction, shape and in-place op on every dtype, on 0-d, empty and
non-contiguous inputs, against PyTorch (tests/compat_sweep.py): each disagreement is one that
compat_notes.py lists (a deliberate difference or a known gap), and each listed one still
happens. The slow variant adds layouts (3-d permuted, one element, wide strided)."""
import warnings

import pytest

import minigrad
from compat_notes import SWEEP_DIFFERENCES, SWEEP_GAPS
from compat_sweep import DTYPES, LAYOUTS, OPS, SLOW_LAYOUTS, sweep

RULES = SWEEP_DIFFERENCES + SWEEP_GAPS


def _matches(rule, key, why):
    ops, dtypes, layouts, outcome, _ = rule
    op, dtype, layout = key
    return (op in ops and outcome == why and (dtypes == "*" or dtype in dtypes)
            and (layouts == "*" or layout in layouts))


def _unexplained(found):
    return sorted(f"{op} on {dtype} ({layout}): {why}" for (op, dtype, layout), why in
                  found.items() if not any(_matches(r, (op, dtype, layout), why) for r in RULES))


@pytest.fixture(scope="module")
def found():
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result, count = sweep(torch, minigrad, OPS, DTYPES, LAYOUTS)
    assert count == len(OPS) * len(DTYPES) * len(LAYOUTS)
    return result


def test_every_disagreement_with_pytorch_is_a_listed_one(found):
    assert _unexplained(found) == []


def test_every_listed_disagreement_still_happens(found):
    fast = [rule for rule in RULES if rule[2] == "*" or set(rule[2]) & set(LAYOUTS)]
    stale = [rule[-1] for rule in fast
             if not any(_matches(rule, key, why) for key, why in found.items())]
    assert stale == []


@pytest.mark.slow
def test_more_layouts_find_nothing_unlisted(torch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result, _ = sweep(torch, minigrad, OPS, DTYPES, SLOW_LAYOUTS)
    assert _unexplained(result) == []
