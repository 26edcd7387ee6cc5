#!/bin/bash
# Fixture in the shape of TE's ci/core.sh: an opaque suite, one item run whole.
DIR=$(dirname "$0")
. "$DIR/_utils.sh"
fixture_trace whole
echo "core: ulimit -c $(ulimit -c)"
