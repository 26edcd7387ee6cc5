#!/bin/bash
# A stream of single-GPU items behind the multi-GPU ones (e2e/mgpu_test.go): a long
# one, a middling one no hold may backfill, and twenty short ones.
SUITE=solo
. "$(dirname "$0")/lib.sh"
setup
item long 1.2
item mid 0.9
for i in 00 01 02 03 04 05 06 07 08 09 10 11 12 13 14 15 16 17 18 19; do
    item "s.$i" 0.15
done
done_suite
