import pytest


def test_deep():
    pass


@pytest.mark.slow
def test_deep_slow():
    pass
