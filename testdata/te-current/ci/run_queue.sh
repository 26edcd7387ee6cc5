#!/bin/bash
# Fixture in the shape of TransformerEngine's ci/run_queue.sh (written here, not copied):
# the environment TE's queue gives each item, item by item, for e2e's comparison with
# sgpu-queue's (TestTEItemEnvironment). It does what TE's does to an item's environment
# and nothing of its scheduling: the items run one after another, each on the first GPUs
# of the pool.
#
#   ci/run_queue.sh [--queue sgpu|mgpu] [--log-dir DIR] [CONFIG...]
#
# As TE's: TEST_SGPU/TEST_MGPU by queue; a relative JUNITXML_PREFIX anchored at the repo
# root; ci/_utils.sh sourced into this shell (DIR=<repo>/ci) with TE_CI_CK_JIT_SNAPSHOT
# exported, the CK JIT prebuild once on the first GPU, each list suite's setup with
# TE_CI_SETUP_ONLY=1 TE_CI_SKIP_CK_JIT=1; then per item, from <log>/cwd/<label>.<tag>:
# HIP_VISIBLE_DEVICES, PET_MASTER_PORT, JUNITXML_PREFIX=<prefix><label>/, and for a list
# item TE_CI_SKIP_SETUP=1, TEST_FILTER=<tag>, TE_CI_ONLY_TESTS (empty: no re-run here).
# POSIX sh inside (busybox runs it where bash is a wrapper of sh).
SCRIPT_DIR=$(cd "$(dirname "$0")" && pwd)
REPO_ROOT=$(cd "$SCRIPT_DIR/.." && pwd)
: "${LOG_DIR:=${REPO_ROOT}/test-results/logs}"
QUEUE=sgpu
while [ $# -gt 0 ]; do
    case "$1" in
        -q|--queue) QUEUE=$2; shift 2 ;;
        -l|--log-dir) LOG_DIR=$2; shift 2 ;;
        *) break ;;
    esac
done
case "$QUEUE" in
    sgpu) export TEST_SGPU=1 TEST_MGPU="" ;;
    mgpu) export TEST_SGPU="" TEST_MGPU=1 ;;
    *) echo "Unknown queue: $QUEUE" >&2; exit 1 ;;
esac
[ $# -gt 0 ] || set -- "$SCRIPT_DIR/ci_${QUEUE}_queue.conf"

if [ -n "${HIP_VISIBLE_DEVICES:-}" ]; then
    GPU_IDS=$(echo "$HIP_VISIBLE_DEVICES" | tr , ' ')
else
    n=$(rocminfo 2>/dev/null | grep -c 'Device Type:.*GPU')
    GPU_IDS=$(seq 0 $((n - 1)) | tr '\n' ' ')
fi
set -f
# shellcheck disable=SC2086
set -- "$@" -- $GPU_IDS
set +f
CONFIGS=""
while [ "$1" != -- ]; do CONFIGS="$CONFIGS $(realpath "$1")"; shift; done
shift
NUM_GPUS=$#
FIRST_GPU=$1
GPU_LIST="$*"

case "${JUNITXML_PREFIX:-}" in
    "" | /*) ;;
    *) JUNITXML_PREFIX="$REPO_ROOT/$JUNITXML_PREFIX"; export JUNITXML_PREFIX ;;
esac

SETUP_DIR="$LOG_DIR/prerequisite_ck_jit_status"
rm -rf "$SETUP_DIR" "$LOG_DIR/items" "$LOG_DIR/cwd" "$LOG_DIR/suites"
mkdir -p "$SETUP_DIR" "$LOG_DIR/items" "$LOG_DIR/cwd" "$LOG_DIR/suites"
cd "$REPO_ROOT" || exit 1

# Phase 1: list (queue: label cmd tag gpus mode, one line each).
QUEUE_FILE="$LOG_DIR/queue.txt"
: >"$QUEUE_FILE"
for config in $CONFIGS; do
    while read -r label logfile mode cmd rest; do
        case "$label" in "" | \#*) continue ;; esac
        cmd=$(realpath "$REPO_ROOT/$cmd")
        if [ "$mode" = list ]; then
            TE_CI_LIST_ITEMS=1 "$cmd" </dev/null | sed -n 's/^TE_CI_ITEM //p' | while read -r tag width; do
                [ "$QUEUE" = mgpu ] && def=$NUM_GPUS || def=1
                w=${width:-$def}
                [ "$w" -gt "$NUM_GPUS" ] && w=$NUM_GPUS
                printf '%s %s %s %s %s %s\n' "$label" "$cmd" "$tag" "$w" list "$logfile" >>"$QUEUE_FILE"
            done
        else
            [ "$QUEUE" = mgpu ] && w=$NUM_GPUS || w=1
            printf '%s %s %s %s %s %s\n' "$label" "$cmd" - "$w" opaque "$logfile" >>"$QUEUE_FILE"
        fi
    done <"$config"
done

# Phase 3: TE's one-time prerequisites, _utils.sh sourced into this shell.
DIR="$REPO_ROOT/ci"
# shellcheck source=/dev/null
. "$REPO_ROOT/ci/_utils.sh"
export TE_CI_CK_JIT_SNAPSHOT="$SETUP_DIR/ck_jit_cache.snapshot"
(export HIP_VISIBLE_DEVICES="$FIRST_GPU"; ck_jit_prebuild build) >"$SETUP_DIR/ck_jit_prebuild.log" 2>&1 || exit 1
for label in $(awk '$5 == "list" { print $1 }' "$QUEUE_FILE" | uniq); do
    cmd=$(awk -v l="$label" '$1 == l { print $2; exit }' "$QUEUE_FILE")
    HIP_VISIBLE_DEVICES=$FIRST_GPU TE_CI_SETUP_ONLY=1 TE_CI_SKIP_CK_JIT=1 "$cmd" >"$SETUP_DIR/$label.log" 2>&1 || exit 1
done

# Phase 4: each item, as TE's run_item gives it its environment.
: "${TE_CI_PORT_BASE:=29600}"
rc_all=0
while read -r label cmd tag width mode logfile; do
    gpus=$(echo "$GPU_LIST" | tr ' ' '\n' | head -n "$width" | paste -sd, -)
    safetag=$tag
    [ "$tag" = - ] && safetag=whole
    junit_dir=""
    if [ -n "${JUNITXML_PREFIX:-}${JUNITXML_SUFFIX:-}" ]; then
        junit_dir="${JUNITXML_PREFIX:-}${label}/"
        mkdir -p "$junit_dir"
    fi
    itemcwd="$LOG_DIR/cwd/${label}.${safetag}"
    mkdir -p "$itemcwd"
    port=$((TE_CI_PORT_BASE + ${gpus%%,*}))
    if [ "$mode" = list ]; then
        (cd "$itemcwd" && HIP_VISIBLE_DEVICES=$gpus PET_MASTER_PORT=$port TE_CI_SKIP_SETUP=1 TEST_FILTER="$tag" \
            JUNITXML_PREFIX="$junit_dir" TE_CI_ONLY_TESTS="" "$cmd") </dev/null >"$LOG_DIR/items/$label.$safetag.log" 2>&1
    else
        (cd "$itemcwd" && HIP_VISIBLE_DEVICES=$gpus PET_MASTER_PORT=$port JUNITXML_PREFIX="$junit_dir" "$cmd") \
            </dev/null >"$LOG_DIR/items/$label.$safetag.log" 2>&1
    fi
    rc=$?
    rmdir "$itemcwd" 2>/dev/null
    echo "$rc" >"$LOG_DIR/items/$label.$safetag.log.rc"
    [ "$rc" = 0 ] || rc_all=$rc
    echo "rc=$rc $label $safetag on $gpus"
done <"$QUEUE_FILE"
(ck_jit_prebuild list) >/dev/null 2>&1
exit "$rc_all"
