package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rocm/sgpu-queue/internal/tmpfstest"
)

func read(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// entries lists a directory's names, to prove no temporary file was left.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteNewAndReplace(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sub", "table.txt")
	if err := Write(p, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o644 {
		t.Errorf("new file mode %v, want 0644", fi.Mode().Perm())
	}
	// The mode of the file it replaces is kept, whatever perm says.
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(p, []byte("two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := read(t, p); got != "two\n" {
		t.Errorf("content %q", got)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v after replace, want the old 0600", fi.Mode().Perm())
	}
	if names := entries(t, filepath.Dir(p)); len(names) != 1 {
		t.Errorf("directory holds %v, want only the file", names)
	}
}

// A symlinked file is updated through the link: the link stays a link, the target
// changes and keeps its mode. Relative links, chains and dangling links all work.
func TestWriteFollowsSymlinks(t *testing.T) {
	dir := t.TempDir()
	shared := filepath.Join(dir, "shared")
	os.MkdirAll(shared, 0o755)
	target := filepath.Join(shared, "t.txt")
	os.WriteFile(target, []byte("old\n"), 0o640)
	os.MkdirAll(filepath.Join(dir, "ci"), 0o755)
	link1 := filepath.Join(dir, "ci", "link1")
	link2 := filepath.Join(dir, "link2")
	if err := os.Symlink("../shared/t.txt", link1); err != nil { // relative to the link's dir
		t.Fatal(err)
	}
	if err := os.Symlink(link1, link2); err != nil { // a chain
		t.Fatal(err)
	}
	for i, p := range []string{link1, link2} {
		want := []string{"via one\n", "via chain\n"}[i]
		if err := Write(p, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Lstat(p); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("%s is no longer a symlink (%v)", p, err)
		}
		if got := read(t, target); got != want {
			t.Errorf("target holds %q, want %q", got, want)
		}
		if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o640 {
			t.Errorf("target mode %v, want 0640 kept", fi.Mode().Perm())
		}
	}
	if names := entries(t, shared); len(names) != 1 {
		t.Errorf("target directory holds %v: a temporary file was left", names)
	}
	// A dangling link creates its target.
	dangling := filepath.Join(dir, "dangling")
	os.Symlink(filepath.Join(shared, "new.txt"), dangling)
	if err := Write(dangling, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(shared, "new.txt")); got != "x\n" {
		t.Errorf("dangling link's target %q", got)
	}
	// A loop is an error, not a hang.
	loop := filepath.Join(dir, "loop")
	os.Symlink(loop, loop)
	if err := Write(loop, nil, 0o644); err == nil || !strings.Contains(err.Error(), "symbolic links") {
		t.Errorf("loop: %v", err)
	}
}

// A rename that fails (the target is a directory) leaves no temporary file.
func TestWriteFailureRemovesTemp(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "report")
	os.MkdirAll(filepath.Join(p, "inside"), 0o755)
	err := Write(p, []byte("data"), 0o644)
	if err == nil || !strings.HasPrefix(err.Error(), p+": ") {
		t.Fatalf("err = %v, want one naming %s", err, p)
	}
	if names := entries(t, dir); len(names) != 1 || names[0] != "report" {
		t.Errorf("directory holds %v: the temporary file was left", names)
	}
}

// On a full disk the old content stays, no temporary file is left and the error is
// ENOSPC, naming the file.
func TestWriteFullDisk(t *testing.T) {
	dir := tmpfstest.Mount(t, 64<<10)
	p := filepath.Join(dir, "run.json")
	if err := Write(p, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tmpfstest.Fill(t, dir)
	err := Write(p, []byte(strings.Repeat("new\n", 4096)), 0o644)
	if !errors.Is(err, syscall.ENOSPC) || !strings.HasPrefix(err.Error(), p+": ") {
		t.Fatalf("err = %v, want ENOSPC naming %s", err, p)
	}
	if got := read(t, p); got != "old\n" {
		t.Errorf("content %q after a failed write, want the old one", got)
	}
	for _, n := range entries(t, dir) {
		if n != "run.json" && n != "fill" {
			t.Errorf("left behind: %s", n)
		}
	}
}

// TempOf names the file a temporary file of Write's belongs to, and nothing else:
// a user's file that merely looks alike is not one.
func TestTempOf(t *testing.T) {
	for _, tt := range []struct {
		entry, name string
		ok          bool
	}{
		{".run.json.tmp123", "run.json", true},
		{".a.tmp.tmp9", "a.tmp", true},
		{"run.json.tmp123", "", false},  // no leading dot
		{".run.json.tmp", "", false},    // no digits
		{".run.json.tmp12x", "", false}, // not only digits
		{"..tmp1", "", false},           // no name
		{".notes.txt", "", false},
	} {
		name, ok := TempOf(tt.entry)
		if name != tt.name || ok != tt.ok {
			t.Errorf("TempOf(%q) = %q, %v; want %q, %v", tt.entry, name, ok, tt.name, tt.ok)
		}
	}
	// Write's own temporary names are recognised: a file left by a failed write.
	dir := t.TempDir()
	f, err := os.CreateTemp(dir, ".x.json"+tempInfix+"*")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if name, ok := TempOf(filepath.Base(f.Name())); !ok || name != "x.json" {
		t.Errorf("TempOf(%q) = %q, %v", filepath.Base(f.Name()), name, ok)
	}
}
