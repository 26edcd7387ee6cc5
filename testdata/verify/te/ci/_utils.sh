# A fixture that behaves as TransformerEngine's ci/_utils.sh does where sgpu-queue
# depends on it: how a call line's tag is made, how TEST_FILTER selects call lines,
# duplicate tags, level and capability gates, list mode. Written for these tests (it
# shares no code with TE); e2e/verify_test.go runs sgpu-queue verify on it.
#
#   pytest_run TAG1 TAG2 LEVEL PATH [pytest args...]   one call line

: "${TEST_LEVEL:=99}"
if [ -z "$TEST_SGPU$TEST_MGPU" ]; then
    TEST_SGPU=1
    TEST_MGPU=1
fi
_seen_tags=""
_errors=0

check_level() {
    [ "$TEST_LEVEL" -ge "$1" ]
}

# Capability probes: the census (list mode with TE_CI_SKIP_CHECK_SUPPORTED) answers
# yes without probing; this pretend host has flash attention and lacks MXFP8.
check_supported() {
    [ -n "$TE_CI_LIST_ITEMS" ] && [ -n "$TE_CI_SKIP_CHECK_SUPPORTED" ] && return 0
    case "$1" in
        flash_attn) return 0 ;;
        mxfp8) echo "MXFP8 is not supported on this device" >&2; return 1 ;;
    esac
    echo "unknown capability $1" >&2
    _errors=$((_errors + 1))
    return 1
}

# The variant (_variant): TAG1/TAG2 when both are set, else whichever is.
set_variant() {
    if [ -n "$1" ] && [ -n "$2" ]; then
        _variant=$1/$2
    else
        _variant=$1$2
    fi
}

# The tag: the test path's directory, its file name up to the first dot, then
# ".<variant>", every / turned into a dot (a directory test of variant ck is
# "<dir>..ck"). Like TE, it goes through an unquoted echo.
name_tag() {
    _base=${1##*/}
    _dir=${1%"$_base"}
    _name=$_dir${_base%%.*}
    [ -n "$2" ] && _name=$_name.$2
    # shellcheck disable=SC2086
    echo $_name | tr / .
}

# TEST_FILTER is split on white space, and each word is a pattern for the tag.
filter_selects() {
    [ -z "$TEST_FILTER" ] && return 0
    for _pattern in $TEST_FILTER; do
        # shellcheck disable=SC2254
        case "$1" in $_pattern) return 0 ;; esac
    done
    return 1
}

# Two call lines with one tag would share a JUnit file and a dispatch: fatal.
tag_unique() {
    case " $_seen_tags " in
        *" $1 "*) echo "duplicate test tag $1" >&2; exit 1 ;;
    esac
    _seen_tags="$_seen_tags $1"
}

pytest_run() {
    check_level "$3" || return 0
    set_variant "$1" "$2"
    shift 3
    _tag=$(name_tag "$1" "$_variant")
    filter_selects "$_tag" || return 0
    tag_unique "$_tag"
    if [ -n "$TE_CI_LIST_ITEMS" ]; then
        echo "TE_CI_ITEM $_tag"
        return 0
    fi
    echo "Run [$_variant] $* (pretend)"
}

finish() {
    [ "$_errors" -eq 0 ]
    exit $?
}
