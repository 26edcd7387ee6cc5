// Package golden compares a test's output with its golden file under testdata/ and
// rewrites the file when the test runs with -update.
package golden

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Check fails t when got differs from the file at path; with update it writes got
// there instead.
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

// Diff is the line-by-line difference between two texts as cmp.Diff shows it; ""
// when they are equal.
func Diff(want, got string) string {
	if want == got {
		return ""
	}
	return cmp.Diff(strings.Split(want, "\n"), strings.Split(got, "\n"))
}
