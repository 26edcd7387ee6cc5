def test_fine():
    pass


def test_broken_math():
    assert 2 + 2 == 5, "a real failure"
