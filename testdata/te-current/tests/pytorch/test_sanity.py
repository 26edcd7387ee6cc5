# Fixture: the test file TE_FIXTURE_CRASH's item dies in (its second test).
# A file of the checkout, so that its annotation goes on it.
import pytest


def close(a, b):
    return abs(a - b) < 1e-6


@pytest.mark.parametrize("a, b", [(1, 2)])
def test_x(a, b):
    assert close(a, b)
