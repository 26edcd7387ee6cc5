def test_needs_broken_fixture(broken):
    pass


def test_fine_too():
    pass
