#!/bin/sh
# A suite that round-trips, beside the broken one.
for t in one two; do
    if [ -z "$TEST_FILTER" ] || [ "$t" = "$TEST_FILTER" ]; then
        [ -n "$TE_CI_LIST_ITEMS" ] && echo "TE_CI_ITEM $t"
    fi
done
exit 0
