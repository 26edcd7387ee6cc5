#!/bin/bash
# Eight short single-GPU items (e2e/progress_test.go): with $BAD_GPU set, those that
# land there fail at once with a device error, which quarantines that GPU.
SUITE=sigma
. "$(dirname "$0")/lib.sh"
setup
for i in 1 2 3 4 5 6 7 8; do
    item "s.$i" 0.3
done
done_suite
