#!/bin/bash
# A second list suite for the shard tests.
SUITE=south
. "$(dirname "$0")/lib.sh"
setup
item s.one   0.3
item s.two   0.2
item s.three 0.1
item s.four  0.1
done_suite
