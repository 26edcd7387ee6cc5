# Fixture harness for the end-to-end tests: the hook contract (docs/hooks.md,
# docs/suites.md) around items that sleep, fail or crash, and a trace of what
# really ran (one TAB-separated line per event in $SGPU_TRACE) that the tests check
# the scheduler against.
#
#   item TAG SECONDS [MIN_LEVEL] [MODE]   MODE: ok (default), fail:N (exits N; its JUnit holds
#                                          a failed case "e2e::TAG"), crash, needs-prefix,
#                                          leave-file, flaky (fails its first run, counted in
#                                          $SGPU_STATE), hang (sleeps SECONDS, ignores TERM),
#                                          gated (listed, but its re-entry runs nothing),
#                                          sigkill (ends cleanly, then its process is killed
#                                          with SIGKILL as if from outside)
#   On the GPU named by $BAD_GPU every item fails at once with a device error (with
#   $BAD_GPU_QUIET, without saying why).
#   ITEM_GPUS=N item …                    lists the item with its own GPU count
#                                          ("TE_CI_ITEM TAG gpus=N"; N may be all)
#   probe FEATURE                         capability probe: "missing" is unsupported
#   $SLOW_SETUP / $SLOW_LIST: seconds the setup / each listing sleeps first (traced as
#   "setup" / "list"), for the tests that cancel during phase 3 / phase 1.
#   $TRACE_LIST: every listing is traced ("list"), with the GPU switches it got.
#   Each trace line ends with TEST_SGPU and TEST_MGPU ("unset" when unset).

: "${TEST_LEVEL:=1}"
_rc=0

trace() {
    [ -n "$SGPU_TRACE" ] || return 0
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$(date +%s%N)" "$SUITE" "$2" \
        "${HIP_VISIBLE_DEVICES-unset}" "${TE_CI_SKIP_SETUP-}" "${TEST_FILTER-}" "${MY_PREFIX-}" "$PWD" \
        "${TEST_SGPU-unset}" "${TEST_MGPU-unset}" >>"$SGPU_TRACE"
}

setup() {
    [ -n "$TE_CI_LIST_ITEMS" ] && return 0
    [ -n "$TE_CI_SKIP_SETUP" ] && return 0
    trace setup ""
    if [ -n "$TE_CI_SETUP_ONLY" ]; then
        [ -n "$SLOW_SETUP" ] && sleep "$SLOW_SETUP"
        [ -n "$FAIL_SETUP" ] && { echo "setup: pip install failed" >&2; exit 5; }
        exit 0
    fi
}

if [ -n "$TE_CI_LIST_ITEMS" ] && [ -n "$SLOW_LIST" ]; then
    trace list ""
    sleep "$SLOW_LIST"
elif [ -n "$TE_CI_LIST_ITEMS" ] && [ -n "$TRACE_LIST" ]; then
    trace list "${TE_CI_SKIP_CHECK_SUPPORTED:+census}"
fi

probe() {
    [ -n "$TE_CI_SKIP_CHECK_SUPPORTED" ] && return 0
    [ "$1" != missing ]
}

item() {
    local tag=$1 secs=$2 min=${3:-1} mode=${4:-ok}
    [ "$TEST_LEVEL" -ge "$min" ] || return 0
    if [ -n "$TEST_FILTER" ]; then
        # shellcheck disable=SC2053
        [[ "$tag" == $TEST_FILTER ]] || return 0
    fi
    if [ -n "$TE_CI_LIST_ITEMS" ]; then
        echo "TE_CI_ITEM $tag${ITEM_GPUS:+ gpus=$ITEM_GPUS}"
        return 0
    fi
    [ "$mode" = gated ] && return 0
    trace start "$tag"
    echo "item $tag on GPU $HIP_VISIBLE_DEVICES"
    if [ -n "$BAD_GPU" ] && [ "$HIP_VISIBLE_DEVICES" = "$BAD_GPU" ]; then
        [ -n "$BAD_GPU_QUIET" ] || echo "RuntimeError: HIP error: hipErrorNoDevice: no ROCm-capable device is detected"
        trace end "$tag"
        exit 1
    fi
    if [ "$mode" = hang ]; then
        trap '' TERM
    fi
    local xml="${JUNITXML_PREFIX}${tag}${JUNITXML_SUFFIX:-.xml}"
    if [ -n "$JUNITXML_PREFIX" ]; then
        mkdir -p "$(dirname "$xml")"
        : >"$xml.partial"
    fi
    sleep "$secs"
    case $mode in
        crash)
            trace end "$tag"
            kill -SEGV $$ ;;
        fail:*)
            _rc=${mode#fail:} ;;
        needs-prefix)
            [ "$MY_PREFIX" = set-on-the-call-line ] || { echo "MY_PREFIX lost on re-entry"; _rc=7; } ;;
        leave-file)
            echo kept >leftover.txt ;;
        flaky)
            # Its state is the test's own (tests run at once): never a shared default.
            local f="${SGPU_STATE:?a flaky item keeps its state in SGPU_STATE: give the test a directory of its own}/flaky.$tag"
            if [ ! -e "$f" ]; then : >"$f"; echo "flaky failure"; _rc=1; fi ;;
    esac
    if [ -n "$JUNITXML_PREFIX" ] && [ "$_rc" != 0 ] && [ "${mode#fail:}" != "$mode" ]; then
        # A failed test case, as pytest writes it: the report shows it by name with its message.
        printf '<testsuite name="%s" tests="1" failures="1" errors="0"><testcase classname="e2e" name="%s" time="%s"><failure message="AssertionError: %s exits %s (in %s)">E   AssertionError</failure></testcase></testsuite>\n' "$SUITE" "$tag" "$secs" "$tag" "$_rc" "$PWD" >"$xml"
        rm -f "$xml.partial"
    elif [ -n "$JUNITXML_PREFIX" ]; then
        printf '<testsuite name="%s" tests="1" failures="0" errors="0"><testcase classname="e2e" name="%s" time="%s"/></testsuite>\n' "$SUITE" "$tag" "$secs" >"$xml"
        rm -f "$xml.partial"
    fi
    trace end "$tag"
    [ "$mode" = sigkill ] && kill -KILL $$
}

done_suite() { exit "$_rc"; }
