#!/bin/sh
# A second list suite, as TE's ci/jax.sh.
. "$(dirname "$0")/_utils.sh"
pytest_run tests/jax/test_x.py
pytest_run tests/jax/test_y.py
return_run_results
