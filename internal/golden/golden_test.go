package golden

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// marked reports whether diff shows line (quoted) on a line starting with mark.
func marked(diff, mark, line string) bool {
	for _, l := range strings.Split(diff, "\n") {
		if strings.HasPrefix(l, mark) && strings.Contains(l, `"`+line+`"`) {
			return true
		}
	}
	return false
}

func TestDiff(t *testing.T) {
	if d := Diff("a\nb\n", "a\nb\n"); d != "" {
		t.Errorf("equal texts: %q", d)
	}
	want := strings.Repeat("same\n", 40) + "old line\n" + strings.Repeat("tail\n", 40)
	got := strings.Repeat("same\n", 40) + "new line\n" + strings.Repeat("tail\n", 40)
	d := Diff(want, got)
	if !marked(d, "-", "old line") || !marked(d, "+", "new line") {
		t.Errorf("changed line not shown as -/+:\n%s", d)
	}
	if strings.Count(d, "same") > 3 || strings.Count(d, "tail") > 3 {
		t.Errorf("equal lines not elided:\n%s", d)
	}
	if d := Diff("a\n", "a"); !marked(d, "-", "") {
		t.Errorf("a missing final newline is not shown:\n%s", d)
	}
}

// recorder is a testing.TB that keeps what a check reported; Fatalf ends the
// check as the real one does (check recovers it).
type recorder struct {
	testing.TB
	errors, fatals []string
}

type fatal struct{}

func (r *recorder) Helper()                        {}
func (r *recorder) Name() string                   { return "TestX" }
func (r *recorder) Errorf(format string, a ...any) { r.errors = append(r.errors, format) }
func (r *recorder) Fatalf(format string, a ...any) {
	r.fatals = append(r.fatals, format)
	panic(fatal{})
}

func (r *recorder) check(path string, got string, update bool) {
	defer func() {
		if v := recover(); v != nil && v != (fatal{}) {
			panic(v)
		}
	}()
	Check(r, path, []byte(got), update)
}

func TestCheckAndUpdate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "x.golden")
	r := &recorder{TB: t}
	r.check(path, "one\n", false)
	if len(r.fatals) != 1 || !strings.Contains(r.fatals[0], "-update writes it") || len(r.errors) != 0 {
		t.Errorf("missing file: fatals %q, errors %q", r.fatals, r.errors)
	}
	r.check(path, "one\n", true)
	if data, err := os.ReadFile(path); err != nil || string(data) != "one\n" {
		t.Fatalf("update wrote %q, %v", data, err)
	}
	r.check(path, "one\n", false)
	if len(r.errors) != 0 {
		t.Errorf("equal output reported: %q", r.errors)
	}
	r.check(path, "two\n", false)
	if len(r.errors) != 1 || !strings.Contains(r.errors[0], "-update rewrites it; review the diff") {
		t.Errorf("differing output: %q", r.errors)
	}
}
