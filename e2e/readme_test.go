package e2e

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// README.md's first command, the demo, runs as written, twice, from the top of a copy
// of the repository's testdata/demo ("go run ." is the binary the tests built): the
// first run learns every item's duration into testdata/demo/ci-weights/, the second
// orders from them, as the README says.
func TestReadmeDemoCommand(t *testing.T) {
	t.Parallel()
	readme := readFile(t, filepath.Join("..", "README.md"))
	m := regexp.MustCompile("(?s)```sh\n(.*?)\n```").FindStringSubmatch(readme)
	if m == nil || !strings.Contains(m[1], "go run . ") {
		t.Fatalf("README.md's first sh block is not a `go run .` command: %q", m)
	}
	top := t.TempDir()
	copyFixture(t, "demo", filepath.Join(top, "testdata", "demo"))
	line := strings.Replace(m[1], "go run . ", "'"+binary+"' ", 1)
	for run := 1; run <= 2; run++ {
		cmd := exec.Command("sh", "-c", line)
		cmd.Dir = top
		out, err := cmd.CombinedOutput()
		// The plan line counts the items no weight is known of: all, then none.
		if unknown := strings.Contains(string(out), "unknown item(s)"); err != nil || unknown != (run == 1) {
			t.Fatalf("run %d of %s: %v, unknown items %v\n%s", run, line, err, unknown, out)
		}
	}
	if tables, _ := filepath.Glob(filepath.Join(top, "testdata", "demo", "ci-weights", "*.txt")); len(tables) != 1 {
		t.Errorf("the demo learned into %q, want one table under testdata/demo/ci-weights/", tables)
	}
}
