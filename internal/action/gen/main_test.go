package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocm/sgpu-queue/internal/safefs"
)

// root is a copy of the files the generator reads and writes.
func root(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"action.yml", "docs/action.md", ".github/actions/dev/action.yml"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "..", filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A stale table is rewritten and the text around it kept; a second run finds nothing
// to write.
func TestWrite(t *testing.T) {
	dir := root(t)
	docs := filepath.Join(dir, "docs", "action.md")
	want, _ := os.ReadFile(docs)
	stale := strings.Replace(string(want), "| test level, passed to the suites", "| old words", 1)
	if stale == string(want) {
		t.Fatal("the edit did not apply: the test no longer edits a generated cell")
	}
	if err := os.WriteFile(docs, []byte("kept\n"+stale), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := write(dir); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(docs); string(got) != "kept\n"+string(want) {
		t.Errorf("docs/action.md: the table was not rewritten, or the text around it changed:\n%.300s", got)
	}
	before, _ := os.Stat(docs)
	if err := write(dir); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.Stat(docs); !os.SameFile(before, after) {
		t.Error("a current file was written again")
	}
}

// A generated file that is a link is refused, not written through.
func TestWriteRefusesALink(t *testing.T) {
	dir := root(t)
	dev := filepath.Join(dir, ".github", "actions", "dev", "action.yml")
	outside := filepath.Join(t.TempDir(), "elsewhere.yml")
	if err := os.WriteFile(outside, []byte("theirs\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(dev); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, dev); err != nil {
		t.Fatal(err)
	}
	err := write(dir)
	var se *safefs.Error
	if !errors.As(err, &se) {
		t.Errorf("write through a link: %v, want a *safefs.Error", err)
	}
	if got, _ := os.ReadFile(outside); string(got) != "theirs\n" {
		t.Errorf("the link's target was written: %q", got)
	}
}
