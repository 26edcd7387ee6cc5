#!/bin/bash
# One script, two suites (docs/suites.md#multi-gpu-suites), as TE's ci/pytorch.sh is both
# torch and torch-mgpu: its single-GPU items when run with TEST_SGPU (suite dist),
# its multi-GPU ones with TEST_MGPU (suite dist-mgpu, gpus=2 in mgpu.conf; three of
# them give their own count on their listing line).
if [ -n "$TEST_MGPU" ]; then SUITE=dist-mgpu; else SUITE=dist; fi
. "$(dirname "$0")/lib.sh"
setup
if [ -n "$TEST_SGPU" ]; then
    item s.a 0.3
    item s.b 0.2
fi
if [ -n "$TEST_MGPU" ]; then
    ITEM_GPUS=3 item tri 0.8
    item pair.a 0.6
    item pair.b 0.6
    ITEM_GPUS=4 item quad 0.5
    ITEM_GPUS=all item every 0.3
    item pair.flaky 0.2 1 flaky
fi
done_suite
