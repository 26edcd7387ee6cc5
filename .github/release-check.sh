#!/usr/bin/env bash
# The release rules, run by .github/workflows/release.yml and tested by
# internal/action/release_test.go (docs/releases.md):
#
#   .github/release-check.sh check vX.Y.Z    the tag is a full version, action.yml runs
#                                            docker://$IMAGE:vX.Y.Z, CHANGELOG.md has its entry
#   .github/release-check.sh notes vX.Y.Z    prints that changelog entry (the release notes)
#   .github/release-check.sh major vX.Y.Z    prints the major tag (v1) when vX.Y.Z is the
#                                            newest release of its major among the tags on
#                                            stdin (one per line), else nothing
#
# Run in the repository root (RELEASE_ROOT overrides). Errors are ::error lines and exit 1.
set -euo pipefail
IMAGE=${IMAGE:-ghcr.io/rocm/sgpu-queue}
root=${RELEASE_ROOT:-.}
full='^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$'

die() { echo "::error${2:+ file=$2}::$1"; exit 1; }

version() {
    [[ "${1:-}" =~ $full ]] || die "tag '${1:-}' is not a full version vX.Y.Z (v1, v1.2 and pre-releases such as v1.2.3-rc1 are not released)"
}

# entry prints the body of CHANGELOG.md's "## vX.Y.Z" section (up to the next "## ").
entry() {
    [ -f "$root/CHANGELOG.md" ] || die "no CHANGELOG.md" CHANGELOG.md
    awk -v v="$1" '
        /^## / { on = ($2 == v); next }
        on { print }
    ' "$root/CHANGELOG.md" | sed -e '/./,$!d' | sed -e ':a' -e '/^\n*$/{$d;N;ba' -e '}'
}

check() {
    version "$1"
    local want="docker://$IMAGE:$1" got
    got=$(sed -n 's/^  image: *//p' "$root/action.yml")
    [ "$got" = "$want" ] || die "action.yml runs.image is '$got', but the release $1 must run '$want': set it in the release commit" action.yml
    [ -n "$(entry "$1")" ] || die "CHANGELOG.md has no entry '## $1' (with what the release holds): add it in the release commit" CHANGELOG.md
    echo "release $1: tag, action.yml ($want) and CHANGELOG.md entry agree"
}

# major prints vX when $1 is the newest full version of major X among stdin's tags.
major() {
    version "$1"
    local x=${BASH_REMATCH[1]} newest
    newest=$( (grep -E "^v$x\.[0-9]+\.[0-9]+$" || true; echo "$1") | sort -t. -k1,1V -k2,2n -k3,3n | tail -n1)
    if [ "$newest" = "$1" ]; then echo "v$x"; fi
}

case "${1:-}" in
    check) check "${2:-}" ;;
    notes) version "${2:-}"; entry "$2" ;;
    major) major "${2:-}" ;;
    *) echo "usage: $0 check|notes|major vX.Y.Z" >&2; exit 2 ;;
esac
