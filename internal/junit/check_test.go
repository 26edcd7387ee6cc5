package junit

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// CheckFile reads a file as Merge does: a whole JUnit file is fine; one cut off
// mid-element, empty, not JUnit, or not a regular file is not, and says why.
func TestCheckFile(t *testing.T) {
	dir := t.TempDir()
	good := `<testsuite name="x" tests="1"><testcase classname="x" name="a"/></testsuite>`
	for _, tt := range []struct {
		name, data string
		want       string // "" = usable
	}{
		{"whole", good, ""},
		{"cut off mid-element", good[:40], "XML syntax error"},
		{"empty", "", "empty file"},
		{"not JUnit", "<html/>", "not JUnit"},
	} {
		p := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_")+".xml")
		os.WriteFile(p, []byte(tt.data), 0o644)
		err := CheckFile(p)
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
	link := filepath.Join(dir, "link.xml")
	os.Symlink("whole.xml", link)
	if err := CheckFile(link); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a symlink: %v", err)
	}
	fifo := filepath.Join(dir, "fifo.xml")
	if syscall.Mkfifo(fifo, 0o644) == nil {
		if err := CheckFile(fifo); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("a FIFO: %v", err)
		}
	}
}
