// Package treetest snapshots a directory tree for tests that check a run changed
// nothing outside what it owns (a link's target, a FIFO's neighbours).
package treetest

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// Snapshot is each path under root with its mode and, for a regular file, its
// content: two snapshots are equal when nothing under root was created, removed,
// replaced or written.
func Snapshot(t testing.TB, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		v := info.Mode().String()
		if info.Mode().IsRegular() {
			data, _ := os.ReadFile(p)
			v += " " + string(data)
		}
		out[p] = v
		return nil
	})
	return out
}
