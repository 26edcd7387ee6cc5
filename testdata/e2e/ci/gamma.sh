#!/bin/bash
# An opaque suite: one item, with its own setup inline.
SUITE=gamma
. "$(dirname "$0")/lib.sh"
[ -n "$TE_CI_SKIP_SETUP$TEST_FILTER" ] && { echo "opaque suite got list-item variables"; exit 9; }
trace start ""
sleep 0.7
trace end ""
