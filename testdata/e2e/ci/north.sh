#!/bin/bash
# A list suite for the shard tests: items of uneven size; one gated on a capability
# the runners lack (in the census, never queued: a plan made from items.tsv lists
# it); with $NEW_ITEM one more item (new since the plan: it goes by its hash); with
# $NORTH_FAIL set to fail:N, n.flip exits N. A tag with a space and glob characters
# goes through the plan, the listing, the shards' files and the merge.
SUITE=north
. "$(dirname "$0")/lib.sh"
setup
item n.one    0.4
item n.two    0.3
item n.three  0.2
item n.four   0.2
item n.flip   0.1 1 "${NORTH_FAIL:-ok}"
item 'n.odd tag [x]*' 0.1
if probe missing; then
    item n.gated 0.1
fi
[ -n "$NEW_ITEM" ] && item n.new 0.1
done_suite
