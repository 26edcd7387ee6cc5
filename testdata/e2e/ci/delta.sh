#!/bin/bash
# A list suite for the bad-day tests: many short items, a flaky one, a hanging one.
SUITE=delta
. "$(dirname "$0")/lib.sh"
setup
for i in 01 02 03 04 05 06 07 08 09 10 11 12; do
    item "d.$i" 0.3
done
item d.flaky 0.2 1 flaky
[ -n "$WITH_HANG" ] && item d.hang 30 1 hang
done_suite
