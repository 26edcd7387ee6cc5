package logdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/rocm/sgpu-queue/internal/atomicfile"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/safefs"
)

// Every write and deletion under the log dir goes through safefs: never through a link, never into a FIFO
// (docs/bad-day.md#the-state-between-runs-links-and-fifos).

func (l Layout) trusted() string {
	if l.Trusted == "" {
		return l.Root
	}
	return l.Trusted
}

// WriteFile replaces path whole (safefs.WriteFile); a link or non-regular file there is a *safefs.Error.
func (l Layout) WriteFile(path string, data []byte) error {
	err := safefs.WriteFile(l.trusted(), path, data, 0o644)
	var se *safefs.Error
	if errors.As(err, &se) && se.Path != path {
		return &atomicfile.Error{Path: path, Err: se}
	}
	return err
}

// Create creates or truncates path for writing (safefs.OpenFile).
func (l Layout) Create(path string) (*os.File, error) {
	return safefs.OpenFile(l.trusted(), path, os.O_WRONLY|os.O_TRUNC, 0o644)
}

// MkdirAll makes dir and those above it to the trusted root, each a real directory.
func (l Layout) MkdirAll(dir string) error { return safefs.MkdirAll(l.trusted(), dir) }

// Rename moves from to to (a log aside as an attempt's), never through a link.
func (l Layout) Rename(from, to string) error { return safefs.Rename(l.trusted(), from, to) }

// RemoveIfEmpty removes dir when the item left nothing in it; a link there is left for the next claim to refuse.
func (l Layout) RemoveIfEmpty(dir string) { safefs.RemoveEmptyDir(l.trusted(), dir) }

// removeDir deletes dir with its contents when it and its parents are real directories; a link is refused.
func (l Layout) removeDir(dir string) error {
	if err := safefs.CheckDir(l.trusted(), dir); err != nil {
		return err
	}
	return os.RemoveAll(dir)
}

// readLogFile reads a file as safefs.ReadFile does; errors name the path.
func readLogFile(path string) ([]byte, error) {
	data, err := safefs.ReadFile(path)
	var se *safefs.Error
	if err != nil && !errors.As(err, &se) && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return data, err
}

// runFiles are the files of a run whose names depend on no suite or item, which the next run deletes (Owned).
func (l Layout) runFiles() []string {
	return []string{l.ExpandLog(), l.Meta(), l.ItemsTSV(), l.QueueTSV(), l.AttemptsTSV(), l.TimingsTSV(), l.OutcomesTSV(),
		l.ListedTSV(), l.PlanJSON(), l.ShardsTSV(), l.Report(), l.Timeline()}
}

// fixedFiles are runFiles with the lock and the once-per-run logs, which a claim also checks.
func (l Layout) fixedFiles() []string {
	return append(append([]string{l.path(LockName)}, l.runFiles()...), l.OnceLog("before"), l.OnceLog("after"))
}

// checkFixed is a claim's first look, before anything is read or written: the log dir, its parents to the trusted
// root, its dirs and fixed files are each what a run writes there or absent.
func (l Layout) checkFixed() error {
	for _, d := range append([]string{l.Root, l.JUnitDir()}, l.dirs()...) {
		if err := safefs.CheckDir(l.trusted(), d); err != nil {
			return err
		}
	}
	for _, f := range l.fixedFiles() {
		if err := safefs.Check(l.trusted(), f); err != nil {
			return err
		}
	}
	return nil
}

// checkNamed is a claim's second look, once prev is known: the suite and item files both runs name,
// and what Owned deletes.
func (l Layout) checkNamed(prev, claim *record.Meta) error {
	var files []string
	if prev != nil {
		files = l.suiteFiles(prev)
	}
	files = append(files, l.suiteFiles(claim)...)
	for _, name := range l.list(l.ItemsDir()) {
		if _, ok := ParseItemFile(name); ok {
			files = append(files, filepath.Join(l.ItemsDir(), name))
		}
	}
	var dirs []string
	for _, name := range l.list(l.CwdDir()) {
		if validBase(name) {
			dirs = append(dirs, filepath.Join(l.CwdDir(), name))
		}
	}
	if prev != nil {
		owned, _ := l.Owned(prev)
		files = append(files, owned...)
	}
	for _, f := range files {
		if err := safefs.Check(l.trusted(), f); err != nil {
			return err
		}
	}
	for _, d := range dirs {
		if err := safefs.CheckDir(l.trusted(), d); err != nil {
			return err
		}
	}
	return nil
}

// validBase reports whether name is an item's "<label>.<safetag>" (ItemBase).
func validBase(name string) bool {
	f, ok := ParseItemFile(name + ".log")
	return ok && f.Base == name
}
