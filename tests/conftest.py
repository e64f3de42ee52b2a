"""Fixtures shared by the test files."""
import pytest


@pytest.fixture
def torch():
    """PyTorch, for parity checks; the test is skipped where it is not installed."""
    return pytest.importorskip("torch")


# The files whose tests take longest go first, so that neither of the suite's two processes is
# left with a long test at the end while the other has finished (pytest-xdist hands out tests
# in the order collected).
LONG_FILES = ("test_tutorial_notebooks.py", "test_decoding.py", "test_bert.py",
              "test_decoding_beam.py", "test_robustness.py", "test_gat.py")


def pytest_collection_modifyitems(config, items):
    def rank(item):
        name = item.path.name
        return LONG_FILES.index(name) if name in LONG_FILES else len(LONG_FILES)
    items.sort(key=rank)   # stable: each file's tests keep their order
