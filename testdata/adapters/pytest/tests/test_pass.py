import pytest


def test_one():
    assert 1 + 1 == 2


def test_two(gpus):
    assert gpus is not None


@pytest.mark.parametrize("word", ["a b", "x/1", "ü", "[br]"])
def test_param(word):
    assert word
