#!/bin/bash
# Fixture in the shape of TE's .github/scripts/run_examples.sh: an opaque suite.
DIR=$(dirname "$0")/../../ci
. "$DIR/_utils.sh"
fixture_trace whole
