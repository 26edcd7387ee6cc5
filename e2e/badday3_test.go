package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// codeSuite writes ci/codes.sh, a list suite whose items are the lines of $TAGS:
// an item named "exitN" exits N, any other passes.
func codeSuite(t *testing.T, dir string) {
	t.Helper()
	script := `#!/bin/sh
if [ -n "$TE_CI_LIST_ITEMS" ]; then
    printf '%s\n' "$TAGS" | while IFS= read -r t; do [ -n "$t" ] && printf 'TE_CI_ITEM %s\n' "$t"; done
    exit 0
fi
[ -n "$TE_CI_SETUP_ONLY" ] && exit 0
echo "item $TEST_FILTER"
case $TEST_FILTER in exit*) exit "${TEST_FILTER#exit}" ;; esac
exit 0
`
	if err := os.WriteFile(filepath.Join(dir, "ci", "codes.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// An item that exits with one of the tool's own codes (2 usage, 70 internal, 130
// and 143 cancelled) by itself makes its suite's rc and the run's exit code 1: a
// run exiting 130 would read as cancelled. The item's own code stays in its verdict
// line and its .rc file.
func TestItemCodesThatAreTheTools(t *testing.T) {
	for _, code := range []string{"2", "70", "130", "143"} {
		t.Run(code, func(t *testing.T) {
			dir := fixture(t, "e2e")
			codeSuite(t, dir)
			conf := writeConf(t, dir, "codes.conf", "c c.log list ci/codes.sh\n")
			r := sgpu(t, dir, []string{"TAGS=ok1\nexit" + code + "\n"}, "run", "--gpus", "2", "--arch", "gfx942", conf)
			if r.code != 1 {
				t.Fatalf("exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
			}
			logs := filepath.Join(dir, "test-results", "logs")
			if rc := readFile(t, filepath.Join(logs, "suites", "c.log.rc")); rc != "1\n" {
				t.Errorf("c.log.rc = %q, want 1", rc)
			}
			verdict := readFile(t, filepath.Join(logs, "suites", "c.log"))
			if !strings.Contains(verdict, "FAIL rc="+code+" items/c.exit"+code+".log") {
				t.Errorf("verdict lost the item's own code %s:\n%s", code, verdict)
			}
			if rc := readFile(t, filepath.Join(logs, "items", "c.exit"+code+".log.rc")); strings.TrimSpace(rc) != code {
				t.Errorf("item .rc = %q, want %s", rc, code)
			}
			if !strings.Contains(r.stdout, "FAIL rc="+code+" c exit"+code) || !strings.Contains(r.stdout, "exit code 1\n") {
				t.Errorf("summary:\n%s", r.stdout)
			}
			if strings.Contains(r.stdout, "run cancelled") {
				t.Errorf("an item's own %s reads as a cancel:\n%s", code, r.stdout)
			}
		})
	}
}
