# Fixture: the test file TE_FIXTURE_FAIL's failed test lives in, so that its
# annotation has a file of the checkout to go on (line 12, as its traceback says).
import pytest


def close(a, b):
    return abs(a - b) < 1e-6


@pytest.mark.parametrize("a, b", [(1, 2)])
def test_x(a, b):
    assert close(a, b)
