#!/bin/sh
# Tags with white space and glob characters, each beside siblings that the tag taken
# as a pattern (or split on white space) would also select. The filter is matched as
# TransformerEngine's check_test_filter does: split, then case each word.
. "$(dirname "$0")/lib.sh"

selected() {
    for _f in $TEST_FILTER; do
        # shellcheck disable=SC2254
        case "$1" in $_f) return 0 ;; esac
    done
    return 1
}

call 'odd *tag'
call 'odd xtag'
call 'odd'
call 'what?'
call 'whatx'
call '[set]'
call 's'
call 'tab	sep'
call 'back\slash'
call 'backslash'
call 'back\\slash'
call 'star*'
call 'starry'
call '../up and out/x'
