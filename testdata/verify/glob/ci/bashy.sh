#!/bin/bash
# The same hostile tags matched the bash way, [[ $tag == $TEST_FILTER ]], where bash's
# extended patterns (+( @( !( ...) are always on.
. "$(dirname "$0")/lib.sh"

selected() {
    # shellcheck disable=SC2053
    [[ $1 == $TEST_FILTER ]]
}

call 'a+(b)'
call 'ab'
call 'abb'
call 'x@(y|z)'
call 'xy'
call '!(neg)'
call 'pos'
call 'odd *tag'
call 'odd xtag'
call 'br[ac]ket'
call 'brakket'
