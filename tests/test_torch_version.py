"""`minigrad.__version__` against PyTorch's: a `TorchVersion`, the str that compares as a
PEP 440 version with strings, tuples and Versions (and as a plain string when the other side
is not a version), so that scripts' feature gates (`torch.__version__ >= "1.10"`,
`Version(torch.__version__)`) take the branch for the API minigrad follows."""
import operator
import pathlib
import re

import pytest

import minigrad
from minigrad.torch_version import TorchVersion

VERSIONS = ["1.10", "1.10.0a", "1.10.0a1", "1.10.0b2", "1.10.0rc1", "1.10.0", "1.10.0.post1",
            "1.10.0.dev3", "1.10.0a1.dev1", "1.10.0+cpu", "1.10.0+cu118", "1.10.0+1",
            "1.10.0+abc.2", "1.10.0+abc.b", "1.9.9", "2.0", "2.13.0+minigrad.0.1.0", "2.13",
            "2.13.0+cpu", "1!0.1", "parrot", "1.10.post", "2.0.0-1", "1.10.0rc1.post2.dev3",
            "v2.1", "2.0a0+git1234", "1.10.0.post1.dev2", "1.10.0-dev", "1.0.0RC1", "1.0.0_a_1"]
OTHERS = VERSIONS + [(1, 10), (2, 0, 1), (2, 13), [1, 2, 1], 3, None]
OPS = [operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne]


def _outcome(compare):
    try:
        return compare()
    except Exception as e:  # noqa: BLE001 (the type is compared)
        return type(e).__name__


@pytest.mark.parametrize("text", VERSIONS)
def test_comparisons_match_pytorchs_torch_version(text, torch):
    from torch._vendor.packaging.version import Version
    from torch.torch_version import TorchVersion as TorchsVersion
    for other in OTHERS:
        for op in OPS:
            want = _outcome(lambda: op(TorchsVersion(text), other))
            assert _outcome(lambda: op(TorchVersion(text), other)) == want, (text, other, op)
            if isinstance(other, str) and other != "parrot":
                want = _outcome(lambda: op(TorchsVersion(text), Version(other)))
                assert _outcome(lambda: op(TorchVersion(text), Version(other))) == want


def test_it_is_a_str_with_a_strs_hash_and_methods(torch):
    v = minigrad.__version__
    assert isinstance(v, str) and type(v).__name__ == type(torch.__version__).__name__
    assert hash(v) == hash(str(v)) and {v: 1}[str(v)] == 1
    assert v.split("+")[0] == torch.__version__.split("+")[0]
    assert v != v.split("+")[0]  # != is str's, as in PyTorch: the label differs


def test_feature_gates_take_the_modern_branch():
    from packaging.version import Version
    v = minigrad.__version__
    assert v >= "1.10" and v >= "2.0" and v > (1, 13) and v >= [2, 0]
    assert Version(v) >= Version("2.0") and Version(v).local == "minigrad.0.1.0"
    assert not v >= "3.0"


def test_the_version_module_and_the_package_agree():
    from minigrad import __version__
    assert __version__ is minigrad.__version__
    assert minigrad.version.__version__ == __version__ and type(minigrad.version.__version__) is str
    pyproject = (pathlib.Path(__file__).parents[1] / "pyproject.toml").read_text()
    assert re.search(r'^version = "(.*)"$', pyproject, re.M)[1] == minigrad.version.release
    assert __version__ == f"{minigrad.version.pytorch}+minigrad.{minigrad.version.release}"
