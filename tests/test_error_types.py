"""A PyTorch program catches errors by type (`except RuntimeError` around a shape mismatch,
`except IndexError` for an index past the end), so minigrad raises, for each bad input of
tests/error_cases.py, an instance of the built-in type PyTorch raises, and where scripts search
a message for PyTorch's key phrase, minigrad's message holds it too. The few inputs whose types
still differ are listed, with the reason, in tests/compat_notes.py (ERROR_TYPE_DIFFERENCES),
whose check asserts that they do differ, so the list stays true."""
import pytest

import minigrad
from compat_notes import ERROR_TYPE_DIFFERENCES
from error_cases import CASES, builtin_type, run_case
from minigrad import errors

COMPARED = [c for c in CASES if c[0] not in ERROR_TYPE_DIFFERENCES]


def test_the_table_is_large_and_its_ids_unique():
    ids = [c[0] for c in CASES]
    assert len(ids) == len(set(ids)) and len(COMPARED) >= 300
    assert set(ERROR_TYPE_DIFFERENCES) <= set(ids)


@pytest.mark.parametrize("cid, code, phrase", COMPARED, ids=[c[0] for c in COMPARED])
def test_minigrad_raises_pytorchs_type(cid, code, phrase, torch):
    expected = run_case(torch, code)
    assert expected is not None, f"PyTorch accepts {code!r}: the case tests nothing"
    got = run_case(minigrad, code)
    assert got is not None, f"minigrad accepts {code!r}; PyTorch raises {expected!r}"
    kind = builtin_type(expected)
    assert isinstance(got, kind), f"minigrad raises {got!r}; PyTorch raises {expected!r}"
    if phrase is not None:
        assert phrase in str(expected), f"the phrase is not PyTorch's: {expected}"
        assert phrase in str(got), f"minigrad's message lacks {phrase!r}: {got}"


@pytest.mark.parametrize("cls, bases", [
    (errors.ShapeError, (RuntimeError, ValueError)),
    (errors.InvalidValueError, (RuntimeError, ValueError)),
    (errors.IndexRangeError, (RuntimeError, IndexError)),
    (errors.DTypeError, (RuntimeError, TypeError)),
    (errors.DTypeNotImplementedError, (NotImplementedError, TypeError)),
    (errors.MissingDirectoryError, (RuntimeError, FileNotFoundError)),
])
def test_each_error_type_is_caught_by_pytorchs_and_minigrads_former_handler(cls, bases):
    """The callers that caught minigrad's former type (ValueError, IndexError, TypeError)
    still catch it; a PyTorch program's handler catches it too."""
    for base in bases:
        with pytest.raises(base):
            raise cls("op: message")


@pytest.mark.parametrize("a, b, message", [
    ((2, 3), (4, 3), "The size of tensor a (2) must match the size of tensor b (4) at "
                     "non-singleton dimension 0"),
    ((3,), (2, 4), "The size of tensor a (3) must match the size of tensor b (4) at "
                   "non-singleton dimension 1"),
    ((5, 1, 3), (2, 4), "The size of tensor a (3) must match the size of tensor b (4) at "
                        "non-singleton dimension 2"),
    ((2, 3), (1, 3), None),
    ((), (4, 3), None),
])
def test_size_mismatch_names_the_last_dim_at_fault_as_pytorch(a, b, message, torch):
    assert errors.size_mismatch(a, b) == message
    if message is not None:
        with pytest.raises(RuntimeError) as info:
            torch.ones(a) + torch.ones(b)
        assert str(info.value) == message


def test_broadcast_error_names_the_op_and_every_shape():
    e = errors.broadcast_error("where", (2, 3), (2, 3), (4, 3))
    assert isinstance(e, errors.ShapeError)
    assert str(e).startswith("where: shapes (2, 3), (2, 3) and (4, 3) cannot be broadcast "
                             "together. The size of tensor a (2) must match")
