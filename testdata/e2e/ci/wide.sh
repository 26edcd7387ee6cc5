#!/bin/bash
# Items as wide as the suite's gpus= (e2e/progress_test.go): the 4-GPU items of
# unfit.conf, which no longer fit a 4-GPU pool once a GPU is quarantined, or the
# 2-GPU items of pairretry.conf, one of them flaky with a tag that holds a space and
# a tab (the console must quote it).
SUITE=wide
. "$(dirname "$0")/lib.sh"
setup
if [ -n "$WIDE_PAIRS" ]; then
    item "flaky one	x" 0.3 1 flaky
    item pair.ok 0.3
else
    item w.a 0.3
    item w.b 0.3
fi
done_suite
