#!/bin/sh
# Filter logic that breaks the round trip in every way verify names.
#
# Substring match: numerics selects numerics.amax too.
selected() {
    # shellcheck disable=SC2254
    case "$1" in *$TEST_FILTER*) return 0 ;; esac
    return 1
}

call() {
    if [ -n "$TEST_FILTER" ]; then
        selected "$1" || return 0
    fi
    [ -n "$TE_CI_LIST_ITEMS" ] && printf 'TE_CI_ITEM %s\n' "$1"
}

call numerics
call numerics.amax
call numerics.amax.triton
call solo
# Two call lines with one tag: its dispatch runs both.
call dup
call dup
# Listed only when no filter is set: its own dispatch runs nothing.
[ -z "$TEST_FILTER" ] && call gated
# TE lists with echo, which in dash turns the \t of this tag into a tab: the tag that
# comes back is not the one the script matches its filter against.
if [ -z "$TEST_FILTER" ] || selected 'tab\tlisted'; then
    [ -n "$TE_CI_LIST_ITEMS" ] && echo 'TE_CI_ITEM tab\tlisted'
fi
# A tag whose re-entry fails.
case "$TEST_FILTER" in broken) echo "ImportError: filter broke the script" >&2; exit 3 ;; esac
call broken
# White-space twins: the one case the escaping cannot tell apart.
call 'twin a'
call 'twin	a'
exit 0
