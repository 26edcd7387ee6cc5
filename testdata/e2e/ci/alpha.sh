#!/bin/bash
# A list suite with every kind of item the scheduler must handle.
SUITE=alpha
. "$(dirname "$0")/lib.sh"
setup
item ok.fast            0.2
item ok.slow            0.9 1 leave-file
item level3.only        0.1 3
if probe missing; then
    item cap.gated      0.1
fi
MY_PREFIX=set-on-the-call-line item env.prefix 0.2 1 needs-prefix
item fails              0.3 1 fail:3
item crash              0.2 1 crash
item '../evil tag/x'    0.2
done_suite
