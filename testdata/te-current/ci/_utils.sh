# Fixture in the shape of TransformerEngine's current ci/_utils.sh (written here, not
# copied): a pytest_run that prints "TE_CI_ITEM <tag> <N>" when its call site declares
# TE_CI_GPUS=N, selects by TEST_FILTER, and, instead of pytest, records what it was
# given in $TE_FIXTURE_TRACE (one tab-separated line per item run) and writes the
# JUnit file <prefix><tag><suffix>.
#
#   TE_CI_GPUS=N pytest_run FILE [SUFFIX]   one work item, tag FILE (dots for /) [.SUFFIX]
#
# Instrumented for the tests: $TE_FIXTURE_ENV (a directory) receives the environment
# each item was started with, before this file adds to it, as <script>.[mgpu.]<tag>.env.
# An item whose tag matches a pattern of $TE_FIXTURE_FAIL or of the file ci/fixture-fail
# fails one test as TE's pytest does (exit 1): its JUnit in pytest's xunit2 family (no
# file attribute), the node id in the .failed sidecar of TE's plugin
# (ci/te_ci_result_sink.py). The item whose tag is $TE_FIXTURE_CRASH dies (SIGSEGV) in
# its second test, leaving the plugin's .partial sidecar and no XML.

if [ -n "$TE_FIXTURE_ENV" ] && [ -z "$TE_CI_LIST_ITEMS$TE_CI_SETUP_ONLY" ]; then
    case "$0" in */run_queue.sh) ;; *.sh)
        mkdir -p "$TE_FIXTURE_ENV"
        env | LC_ALL=C sort >"$TE_FIXTURE_ENV/$(basename "$0").${TEST_MGPU:+mgpu.}${TEST_FILTER:-whole}.env" ;;
    esac
fi

# What TE's _utils.sh gives every script that sources it, and so every item of
# run_queue.sh, which sources it too: its own checkout (TE_PATH) and the settings of
# a CI run.
: "${TE_PATH:=$(realpath "$DIR/..")/}"
export TE_PATH
export CI=1 PYTHONFAULTHANDLER=1 PYTHONSAFEPATH=1
export PYTEST_TIMEOUT="${PYTEST_TIMEOUT:-1800}" PYTEST_TIMEOUT_METHOD="${PYTEST_TIMEOUT_METHOD:-thread}"
export CTEST_TIMEOUT="${CTEST_TIMEOUT:-1800}"

: "${TEST_LEVEL:=99}"
_run_errors=0

fixture_fails() {
    for _p in $TE_FIXTURE_FAIL $(cat "$DIR/fixture-fail" 2>/dev/null); do
        # shellcheck disable=SC2254
        case "$1" in $_p) return 0 ;; esac
    done
    return 1
}

check_test_filter() {
    [ -z "$TEST_FILTER" ] && return 0
    for _tf in $TEST_FILTER; do
        # shellcheck disable=SC2254
        case "$1" in $_tf) return 0 ;; esac
    done
    return 1
}

pytest_tag() {
    _t=${1%.py}
    _t=$(printf '%s' "$_t" | tr / .)
    printf '%s%s' "$_t" "${2:+.$2}"
}

pytest_run() {
    _tag=$(pytest_tag "$1" "$2")
    check_test_filter "$_tag" || return 0
    if [ -n "$TE_CI_LIST_ITEMS" ]; then
        echo "TE_CI_ITEM $_tag${TE_CI_GPUS:+ $TE_CI_GPUS}"
        return 0
    fi
    fixture_trace "$_tag"
    sleep "${TE_FIXTURE_SLEEP:-0.1}"
    _fail=
    fixture_fails "$_tag" && _fail=1
    if [ -z "$JUNITXML_PREFIX$JUNITXML_SUFFIX" ]; then
        if [ -n "$_fail" ]; then
            echo "FAILED test_$_tag: AssertionError: Tensor-likes are not close!"
            _run_errors=$((_run_errors + 1))
        fi
        return 0
    fi
    _xml=$JUNITXML_PREFIX$_tag$JUNITXML_SUFFIX
    mkdir -p "$(dirname "$_xml")"
    _id=tests/pytorch/${1%.py}.py
    _cls=$(printf '%s' "${_id%.py}" | tr / .)
    if [ "$_tag" = "$TE_FIXTURE_CRASH" ]; then
        printf '{"e": "collected", "nodeids": ["%s::test_a", "%s::test_b[1]"]}\n{"e": "start", "nodeid": "%s::test_a"}\n' "$_id" "$_id" "$_id" >"$_xml.partial"
        printf '{"e": "report", "nodeid": "%s::test_a", "when": "call", "outcome": "passed"}\n{"e": "start", "nodeid": "%s::test_b[1]"}\n' "$_id" "$_id" >>"$_xml.partial"
        kill -SEGV $$
    fi
    if [ -n "$_fail" ]; then
        printf '<?xml version="1.0" encoding="utf-8"?>\n<testsuites><testsuite name="pytest" tests="2" failures="1" errors="0" skipped="0" time="0.1"><testcase classname="%s" name="test_a" time="0.05"/><testcase classname="%s" name="test_x[1, 2]" time="0.05"><failure message="AssertionError: Tensor-likes are not close!">    def test_x(a, b):\n&gt;       assert close(a, b)\nE       AssertionError: Tensor-likes are not close!\n\n%s:12: AssertionError</failure></testcase></testsuite></testsuites>\n' \
            "$_cls" "$_cls" "$_id" >"$_xml"
        printf '%s::test_x[1, 2]\n' "$_id" >"$_xml.failed"
        rm -f "$_xml.partial"
        echo "FAILED $_id::test_x[1, 2] - AssertionError: Tensor-likes are not close!"
        _run_errors=$((_run_errors + 1))
        return 0
    fi
    printf '<?xml version="1.0" encoding="utf-8"?>\n<testsuites><testsuite name="pytest" tests="1" failures="0" errors="0" skipped="0" time="0.1"><testcase classname="te.%s" name="test_%s" time="0.1"/></testsuite></testsuites>\n' \
        "$_tag" "$_tag" >"$_xml"
    rm -f "$_xml.partial" # as the plugin does at a clean session end
}

# fixture_trace TAG: script, tag, GPUs, port, filter, JUnit prefix, TEST_SGPU,
# TEST_MGPU, ulimit -c, skip-setup, working directory.
fixture_trace() {
    [ -n "$TE_FIXTURE_TRACE" ] || return 0
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(basename "$0")" "$1" \
        "${HIP_VISIBLE_DEVICES-unset}" "${PET_MASTER_PORT-unset}" "${TEST_FILTER-unset}" \
        "${JUNITXML_PREFIX-unset}" "${TEST_SGPU-unset}" "${TEST_MGPU-unset}" "$(ulimit -c)" \
        "${TE_CI_SKIP_SETUP-unset}" "$PWD" >>"$TE_FIXTURE_TRACE"
}

# ck_jit_prebuild build|list, in the shape of TE's: "build" fills the CK JIT cache
# (here: records that it ran, where and on which GPUs, in $TE_FIXTURE_CK_TRACE) and
# leaves a snapshot in $TE_CI_CK_JIT_SNAPSHOT for the drift check; "list" prints what
# the cache holds that the snapshot did not. TE_FIXTURE_CK_FAIL makes a step fail.
ck_jit_prebuild() {
    [ -n "$TE_FIXTURE_CK_TRACE" ] && printf '%s\t%s\t%s\t%s\n' "$1" "${HIP_VISIBLE_DEVICES-unset}" \
        "$(ulimit -c)" "$PWD" >>"$TE_FIXTURE_CK_TRACE"
    case "$TE_FIXTURE_CK_FAIL" in "$1"*)
        echo "ck_jit_prebuild $1: hipcc: fixture failure" >&2
        return 1 ;;
    esac
    if [ "$1" = build ]; then
        echo "Building CK JIT cache for arch=gfx942..."
        printf 'blob_fmha_fwd\nblob_fmha_bwd\n' >"${TE_CI_CK_JIT_SNAPSHOT:-/dev/null}"
        echo "Cache: 2 blobs"
    elif [ -s "${TE_CI_CK_JIT_SNAPSHOT:-}" ]; then
        echo "Cache diff (build -> now):"
        echo "+blob_gemm_fp8"
    else
        echo "Cache: no snapshot"
    fi
}

# The one-time setup, hoisted as TE's: TE_CI_SETUP_ONLY runs it alone,
# TE_CI_SKIP_SETUP skips it in the items; it builds the CK JIT cache itself unless
# TE_CI_SKIP_CK_JIT says the run did once.
setup_once() {
    [ -n "$TE_CI_LIST_ITEMS" ] && return 0
    [ -n "$TE_CI_SKIP_SETUP" ] && return 0
    [ -n "$TE_CI_SKIP_CK_JIT" ] || ck_jit_prebuild build || exit 1
    [ -n "$TE_FIXTURE_CK_TRACE" ] && printf 'setup\t%s\t%s\t%s\n' "$(basename "$0")" \
        "${HIP_VISIBLE_DEVICES-unset}" "${TE_CI_SKIP_CK_JIT-unset}" >>"$TE_FIXTURE_CK_TRACE"
    echo "setup: pip prerequisites (pretend)"
    [ -n "$TE_CI_SETUP_ONLY" ] && exit 0
    return 0
}

return_run_results() { [ "$_run_errors" -eq 0 ]; }
