# Four tests; test_b[x y] fails while $RERUN_FAIL_B is set. Each test that runs
# appends its node id to $RERUN_TRACE, so the test sees what a narrowed re-run ran.
import os

import pytest


def _ran(request):
    with open(os.environ["RERUN_TRACE"], "a", encoding="utf-8") as f:
        f.write(request.node.nodeid + "\n")


def test_a(request):
    _ran(request)


@pytest.mark.parametrize("p", ["x y", "z"])
def test_b(request, p):
    _ran(request)
    assert not (p == "x y" and os.environ.get("RERUN_FAIL_B"))


def test_c(request):
    _ran(request)
