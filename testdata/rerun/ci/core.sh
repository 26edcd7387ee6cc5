#!/bin/sh
# An opaque suite, as TE's ci/core.sh: one item; fails when $RERUN_CORE_FAIL is set.
printf 'core\twhole\t%s\n' "${TE_CI_ONLY_TESTS-unset}" >>"$RERUN_TRACE"
[ -z "$RERUN_CORE_FAIL" ]
