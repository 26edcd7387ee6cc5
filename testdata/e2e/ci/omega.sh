#!/bin/bash
# A list suite with an item of each way to end that the outcomes tell apart: gated
# off at re-entry (no-run), exit codes 124 and 137 by themselves (failed, not a
# timeout), killed with SIGKILL from outside (cut-off), and with $WITH_HANG one that
# hangs until the hang deadline kills it (timeout).
SUITE=omega
. "$(dirname "$0")/lib.sh"
setup
item o.ok      0.1
item o.gated   0.1 1 gated
item o.self124 0.1 1 fail:124
item o.self137 0.1 1 fail:137
item o.sigkill 0.1 1 sigkill
[ -n "$WITH_HANG" ] && item o.hang 30 1 hang
done_suite
