// Package golden compares a test's output with its golden file under testdata/ and
// rewrites the file when the test runs with -update, for the packages whose output
// is text a reviewer reads (report, merged JUnit, simulate, GPU detection, publish).
package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Check fails t when got differs from the file at path, showing the first lines that
// differ; with update it writes got there instead.
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
	if string(got) != string(want) {
		t.Errorf("output differs from %s (go test -run '%s' -update rewrites it; review the diff):\n%s", path, t.Name(), Diff(string(want), string(got)))
	}
}

// Diff shows the first ten lines that differ, enough to see what changed.
func Diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl == gl {
			continue
		}
		fmt.Fprintf(&b, "line %d:\n- %q\n+ %q\n", i+1, wl, gl)
		if shown++; shown == 10 {
			b.WriteString("…\n")
			break
		}
	}
	return b.String()
}
