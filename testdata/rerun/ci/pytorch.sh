#!/bin/sh
# A list suite in the shape of TE's ci/pytorch.sh: three test files, one item each.
. "$(dirname "$0")/_utils.sh"
pytest_run tests/test_a.py
pytest_run tests/test_b.py
pytest_run tests/test_c.py
return_run_results
