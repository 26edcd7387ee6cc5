// Package treetest copies and snapshots directory trees, to check that a run changed
// nothing outside what it owns, and bounds a call that a FIFO could block.
package treetest

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Snapshot is each path under root with its type, mode, mtime, inode and content,
// so a rewrite with the same bytes still shows.
func Snapshot(t testing.TB, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		what := info.Mode().String() + " " + info.ModTime().Format(time.RFC3339Nano)
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			what += fmt.Sprintf(" inode %d", st.Ino)
		}
		if info.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			what += " " + string(data)
		}
		out[rel] = what
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Same fails the test, naming what changed, when two snapshots of one tree differ.
func Same(t testing.TB, what string, before, after map[string]string) {
	t.Helper()
	var diffs []string
	for p, b := range before {
		if a, ok := after[p]; !ok {
			diffs = append(diffs, p+" deleted")
		} else if a != b {
			diffs = append(diffs, fmt.Sprintf("%s changed: %.60q → %.60q", p, b, a))
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			diffs = append(diffs, p+" created")
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		t.Errorf("%s changed:\n  %s", what, strings.Join(diffs, "\n  "))
	}
}

// Copy copies the tree src to dst, keeping modes and symbolic links; skip (may be
// nil) leaves out a path and what is below it.
func Copy(t testing.TB, src, dst string, skip func(rel string, d fs.DirEntry) bool) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if skip != nil && skip(rel, d) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(to, info.Mode().Perm())
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, to)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, data, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Finishes runs f, failing the test if it blocks, as a FIFO opened for reading
// waits for a writer forever.
func Finishes(t testing.TB, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { f(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("blocked (on a FIFO?)")
	}
}
