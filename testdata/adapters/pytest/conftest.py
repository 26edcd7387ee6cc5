import os

import pytest


def pytest_addoption(parser):
    # An option no table of pytest options knows, taking a value: the adapter must
    # learn from pytest itself that "3" in "--fixture-level 3" is not a path.
    parser.addoption("--fixture-level", action="store", default="0")


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: a long test, deselected with -m 'not slow'")


@pytest.fixture
def broken():
    raise RuntimeError("fixture setup fails: the test is an error, not a failure")


@pytest.fixture
def gpus(record_property):
    seen = os.environ.get("HIP_VISIBLE_DEVICES", "")
    record_property("gpus", seen)
    return seen
