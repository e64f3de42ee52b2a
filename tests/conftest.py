"""Fixtures shared by the test files."""
import pytest


@pytest.fixture
def torch():
    """PyTorch, for parity checks; the test is skipped where it is not installed."""
    return pytest.importorskip("torch")
