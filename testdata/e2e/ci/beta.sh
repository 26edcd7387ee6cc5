#!/bin/bash
# A second list suite.
SUITE=beta
. "$(dirname "$0")/lib.sh"
setup
item b.one   0.5
item b.two   0.4
item b.three 0.3
item b.four  0.6
done_suite
