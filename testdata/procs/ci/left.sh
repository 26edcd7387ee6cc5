#!/bin/sh
# A list suite whose listing, setup and items leave processes behind or hang, for the
# end-to-end tests of docs/bad-day.md. Every process they start runs
# "sleep $MARK", $MARK being a number unique to the test, by which the test finds any
# that survived the run.
#   $ITEMS     the items it lists (see the case below for what each does)
#   $LISTING   leave: the listing leaves a child; hang: it never ends; noisy: it
#              writes $NOISE bytes to stderr
#   $SETUP     leave: the setup leaves a child; hang: it never ends
#   $STARTED   a file the hang item creates once it runs

# up waits until "sleep $MARK" really runs (forked, executed, in its own session when
# setsid started it), so that the process left behind is there when the script exits.
up() { until pgrep -xf "sleep $MARK" >/dev/null; do sleep 0.01; done; }

if [ -n "$TE_CI_LIST_ITEMS" ]; then
    case $LISTING in
        leave) (sleep "$MARK" &); up ;;
        hang) echo "probing fp8 support" >&2; sleep "$MARK" ;;
        noisy) head -c "$NOISE" /dev/zero >&2 ;;
    esac
    for t in $ITEMS; do echo "TE_CI_ITEM $t"; done
    exit 0
fi
if [ -n "$TE_CI_SETUP_ONLY" ]; then
    case $SETUP in
        leave) sleep "$MARK" & up ;;
        hang) echo "pip install: building wheel for transformer_engine"; sleep "$MARK" ;;
    esac
    exit 0
fi
sleep 0.3
case $TEST_FILTER in
    group) sleep "$MARK" & up ;;                                           # in the item's group, holding its output
    setsid) setsid sleep "$MARK" & up ;;                                   # out of the group, holding it
    setsid-quiet) setsid sleep "$MARK" >/dev/null 2>&1 </dev/null & up ;;  # out of the group, output closed
    hang) trap '' TERM; : >"$STARTED"; sleep "$MARK" ;;                    # ignores TERM (and so does its sleep)
    escape) setsid sleep "$MARK" & sleep "$MARK" & up; : >"$STARTED"; wait ;; # a child out of its group, one in it; waits
    fail) exit 3 ;;
esac
# Its JUnit file, as the hook contract asks: it ran.
[ -z "$JUNITXML_PREFIX" ] || echo '<testsuite name="left" tests="0"/>' >"$JUNITXML_PREFIX$TEST_FILTER$JUNITXML_SUFFIX"
echo "item $TEST_FILTER done"
