// Package golden compares a test's output with its golden file under testdata/ and
// rewrites the file when the test runs with -update, for the packages whose output
// is text a reviewer reads (report, merged JUnit, simulate, GPU detection, publish,
// help texts, error messages).
package golden

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Check fails t when got differs from the file at path, showing the difference line
// by line (-want +got); with update it writes got there instead.
func Check(t testing.TB, path string, got []byte, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run '%s' -update writes it)", err, t.Name())
	}
	if diff := Diff(string(want), string(got)); diff != "" {
		t.Errorf("output differs from %s (go test -run '%s' -update rewrites it; review the diff):\n%s", path, t.Name(), diff)
	}
}

// Diff is the difference between two texts as cmp.Diff shows it, one element per
// line: lines only in want are marked -, lines only in got +, and runs of equal lines
// are elided. It is "" when the texts are equal. A missing final newline shows as an
// empty last line.
func Diff(want, got string) string {
	if want == got {
		return ""
	}
	return cmp.Diff(strings.Split(want, "\n"), strings.Split(got, "\n"))
}
