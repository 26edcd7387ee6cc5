#!/bin/bash
# A second list suite for the shard tests. With $SOUTH_LIST_FAIL its listing fails
# (a host without its module).
SUITE=south
. "$(dirname "$0")/lib.sh"
if [ -n "$TE_CI_LIST_ITEMS" ] && [ -n "$SOUTH_LIST_FAIL" ]; then
    echo "ImportError: no module named south" >&2
    exit 4
fi
setup
item s.one   0.3
item s.two   0.2
item s.three 0.1
item s.four  0.1
done_suite
