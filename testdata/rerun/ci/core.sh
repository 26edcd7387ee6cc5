#!/bin/sh
# An opaque suite, as TE's ci/core.sh: one item; fails when $RERUN_CORE_FAIL is set.
# $RERUN_PLANT (with $RERUN_PLANT_TARGET) is a hostile item: it makes that path a
# symlink while the run goes on.
printf 'core\twhole\t%s\n' "${TE_CI_ONLY_TESTS-unset}" >>"$RERUN_TRACE"
if [ -n "$RERUN_PLANT" ]; then
    mkdir -p "$(dirname "$RERUN_PLANT")" && rm -f "$RERUN_PLANT" && ln -s "$RERUN_PLANT_TARGET" "$RERUN_PLANT"
fi
[ -z "$RERUN_CORE_FAIL" ]
