#!/bin/sh
# A list suite that runs inside the fixture container.
. "$(dirname "$0")/lib.sh"
item ok.one 0.3
item ok.two 0.2
item env 0.1 env
item crash 0.1 crash
item slow 0.6
[ -n "$WITH_SLEEPER" ] && item sleeper 120
exit $_rc
