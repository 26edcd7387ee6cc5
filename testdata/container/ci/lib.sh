# POSIX-sh fixture harness for the container tests (the busybox fixture image has no
# bash): the hook contract around items that sleep, crash or check their environment.
#   item TAG SECONDS [MODE]    MODE: ok (default), crash, env
: "${TEST_LEVEL:=1}"
_rc=0

if [ -n "$TE_CI_SETUP_ONLY" ]; then
    echo "setup in $(hostname)"
    exit 0
fi

item() {
    tag=$1 secs=$2 mode=${3:-ok}
    if [ -n "$TEST_FILTER" ]; then
        case "$tag" in $TEST_FILTER) ;; *) return 0 ;; esac
    fi
    if [ -n "$TE_CI_LIST_ITEMS" ]; then
        echo "TE_CI_ITEM $tag"
        return 0
    fi
    echo "item $tag on GPU $HIP_VISIBLE_DEVICES in $(pwd)"
    xml="$JUNITXML_PREFIX$tag.xml"
    mkdir -p "$JUNITXML_PREFIX"
    : >"$xml.partial"
    sleep "$secs"
    case $mode in
        crash) kill -SEGV $$ ;;
        env)
            env | sort
            if [ "$MY_PASSED" != yes ] || [ -n "$HOST_ONLY" ] || [ "$IN_IMAGE" != yes ]; then
                echo "wrong environment"; _rc=7
            fi ;;
    esac
    printf '<testsuite name="box" tests="1"><testcase classname="box" name="%s"/></testsuite>\n' "$tag" >"$xml"
    rm -f "$xml.partial"
}
