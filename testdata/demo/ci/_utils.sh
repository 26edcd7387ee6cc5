# A miniature of TransformerEngine's ci/_utils.sh: the hook contract of sgpu-queue
# (docs/hooks.md) around items that sleep instead of testing. Source it from a suite script.
#
#   run_item TAG SECONDS [MIN_LEVEL] [EXIT_CODE]   one work item
#   check_supported FEATURE                        a capability probe (fails here for "fp4")

: "${TEST_LEVEL:=1}"
# Which items: TEST_SGPU the single-GPU ones, TEST_MGPU the multi-GPU ones (the
# distributed tests, which use every GPU they are given). Run by hand, with neither
# set, the script runs both, as TE's does; sgpu-queue always sets one of them.
if [ -z "$TEST_SGPU$TEST_MGPU" ]; then
    TEST_SGPU=1
    TEST_MGPU=1
fi
_te_setup_done=""

# Setup hoisting: with TE_CI_SETUP_ONLY=1 only the setup runs; with TE_CI_SKIP_SETUP=1
# it is skipped because the scheduler already ran it once.
setup_once() {
    [ -n "$TE_CI_LIST_ITEMS" ] && return 0
    [ -n "$TE_CI_SKIP_SETUP" ] && return 0
    [ -n "$_te_setup_done" ] && return 0
    echo "setup: installing the suite's prerequisites (pretend)"
    sleep 0.2
    _te_setup_done=1
    if [ -n "$TE_CI_SETUP_ONLY" ]; then
        echo "setup only: done"
        exit 0
    fi
}

check_supported() {
    [ -n "$TE_CI_SKIP_CHECK_SUPPORTED" ] && return 0
    case "$1" in
        fp4) return 1 ;;   # this pretend GPU lacks it
        *) return 0 ;;
    esac
}

# run_item TAG SECONDS [MIN_LEVEL] [EXIT_CODE]
run_item() {
    _tag=$1 _secs=$2 _min_level=${3:-1} _rc=${4:-0}
    [ "$TEST_LEVEL" -ge "$_min_level" ] || return 0
    if [ -n "$TEST_FILTER" ]; then
        # shellcheck disable=SC2254
        case "$_tag" in $TEST_FILTER) ;; *) return 0 ;; esac
    fi
    if [ -n "$TE_CI_LIST_ITEMS" ]; then
        echo "TE_CI_ITEM $_tag"
        return 0
    fi
    echo "running $_tag on ${HIP_VISIBLE_DEVICES:-all GPUs} for ${_secs}s${TEST_MGPU:+ (multi-GPU)}"
    sleep "$_secs"
    # As TE's get_pytest_junitxml: the file is <prefix><tag><suffix>, the suffix
    # variable and nothing else (no default extension), and only when either is set.
    if [ -n "$JUNITXML_PREFIX$JUNITXML_SUFFIX" ]; then
        mkdir -p "$(dirname "$JUNITXML_PREFIX$_tag")"
        _f="$JUNITXML_PREFIX$_tag$JUNITXML_SUFFIX"
        if [ "$_rc" -eq 0 ]; then _body=""; _fail=0; else _body="<failure message=\"exit $_rc\">demo failure</failure>"; _fail=1; fi
        # pytest's xunit1 family: file and line on the test case, and its properties.
        printf '<?xml version="1.0" encoding="utf-8"?>\n<testsuites><testsuite name="pytest" tests="1" failures="%s" errors="0" skipped="0" time="%s"><testcase classname="demo.%s" name="test_%s" file="tests/demo/test_%s.py" line="42" time="%s"><properties><property name="item" value="%s"/></properties>%s</testcase></testsuite></testsuites>\n' \
            "$_fail" "$_secs" "$_tag" "$_tag" "$_tag" "$_secs" "$_tag" "$_body" >"$_f"
    fi
    [ "$_rc" -eq 0 ] || { echo "$_tag failed"; _suite_rc=$_rc; }
    return 0
}

_suite_rc=0
finish() { exit "$_suite_rc"; }
