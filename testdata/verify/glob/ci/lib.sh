# Fixture harness for sgpu-queue verify and the exact-filter run (e2e/verify_test.go):
# call lines with hostile tags. The script that sources it defines selected TAG, its
# way of matching the tag against TEST_FILTER.
#
#   call TAG   one call line: listed (TE_CI_LIST_ITEMS), or run: "call TAG" on stdout
#              and "<suite> <gpu> TAG" appended to $SGPU_TRACE

# No setup to do (TE_CI_SETUP_ONLY).
[ -z "$TE_CI_SETUP_ONLY" ] || exit 0
_suite=$(basename "$0" .sh)

call() {
    if [ -n "$TEST_FILTER" ]; then
        selected "$1" || return 0
    fi
    if [ -n "$TE_CI_LIST_ITEMS" ]; then
        # printf, not echo: dash's echo would turn a backslash in the tag into
        # something else.
        printf 'TE_CI_ITEM %s\n' "$1"
        return 0
    fi
    printf 'call %s\n' "$1"
    # Its JUnit file, as the hook contract asks (a tag that would leave the suite's
    # folder writes none: sgpu-queue does not look for it).
    case $1 in
        *..*) ;;
        *) if [ -n "$JUNITXML_PREFIX" ]; then
               _f="$JUNITXML_PREFIX$1${JUNITXML_SUFFIX:-.xml}"
               mkdir -p "$(dirname "$_f")"
               printf '<testsuite name="%s" tests="0"/>\n' "$_suite" >"$_f"
           fi ;;
    esac
    [ -z "$SGPU_TRACE" ] || printf '%s %s %s\n' "$_suite" "${HIP_VISIBLE_DEVICES-unset}" "$1" >>"$SGPU_TRACE"
    sleep 0.05
}
