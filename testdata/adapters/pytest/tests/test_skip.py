import sys

import pytest


@pytest.mark.skip(reason="not on this runner")
def test_skipped():
    pass


@pytest.mark.skipif(sys.version_info > (1,), reason="always skipped")
def test_skipif():
    pass


@pytest.mark.xfail(reason="known bug")
def test_known_bug():
    assert False
