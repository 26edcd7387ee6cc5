# Fixture in the shape of TransformerEngine's current ci/_utils.sh with its pytest
# result sink (ci/te_ci_result_sink.py), written here, not copied: pytest_run is one
# work item of four tests (t1..t4). Instead of pytest it "runs" them: a test fails
# when "<tag>::<test>" is a word of $RERUN_FAIL. It writes what TE's plugin writes
# beside the JUnit file <prefix><tag><suffix>: the .failed list of failing node ids
# (kept after a clean end), and, when $TE_CI_ONLY_TESTS names a file of node ids, runs
# only those and touches .narrowed. Each test that runs is a line of $RERUN_TRACE:
# "<tag>\t<test>\t<TE_CI_ONLY_TESTS>".

: "${TEST_LEVEL:=99}"
_run_errors=0

# The one-time setup pass (TE_CI_SETUP_ONLY): nothing to set up here.
[ -n "$TE_CI_SETUP_ONLY" ] && exit 0

check_test_filter() {
    [ -z "$TEST_FILTER" ] && return 0
    for _tf in $TEST_FILTER; do
        # shellcheck disable=SC2254
        case "$1" in $_tf) return 0 ;; esac
    done
    return 1
}

pytest_run() {
    _tag=$(printf '%s' "${1%.py}" | tr / .)
    if [ -n "$TE_CI_LIST_ITEMS" ]; then
        echo "TE_CI_ITEM $_tag"
        return 0
    fi
    check_test_filter "$_tag" || return 0
    _xml="$JUNITXML_PREFIX$_tag$JUNITXML_SUFFIX"
    : >"$_xml.failed"
    rm -f "$_xml.narrowed"
    _tests="t1 t2 t3 t4"
    if [ -n "$TE_CI_ONLY_TESTS" ] && [ -s "$TE_CI_ONLY_TESTS" ]; then
        _tests=$(sed -n "s|^$1::||p" "$TE_CI_ONLY_TESTS" | tr '\n' ' ')
        : >"$_xml.narrowed"
    fi
    _cases="" _n=0 _f=0
    for _t in $_tests; do
        _n=$((_n + 1))
        printf '%s\t%s\t%s\n' "$_tag" "$_t" "${TE_CI_ONLY_TESTS-unset}" >>"$RERUN_TRACE"
        case " $RERUN_FAIL " in
        *" $_tag::$_t "*)
            _f=$((_f + 1))
            echo "$1::$_t" >>"$_xml.failed"
            _cases="$_cases<testcase classname=\"${_tag}\" name=\"$_t\" time=\"0.01\"><failure message=\"assert 1 == 2\">assert 1 == 2</failure></testcase>"
            ;;
        *) _cases="$_cases<testcase classname=\"${_tag}\" name=\"$_t\" time=\"0.01\"/>" ;;
        esac
    done
    printf '<?xml version="1.0" encoding="utf-8"?>\n<testsuites><testsuite name="pytest" tests="%d" failures="%d" errors="0" skipped="0" time="0.1">%s</testsuite></testsuites>\n' \
        "$_n" "$_f" "$_cases" >"$_xml"
    [ "$_f" -eq 0 ] || _run_errors=$((_run_errors + 1))
}

return_run_results() { [ "$_run_errors" -eq 0 ]; }
