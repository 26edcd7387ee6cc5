package dispatch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rocm/sgpu-queue/internal/executor"
	"github.com/rocm/sgpu-queue/internal/expand"
	"github.com/rocm/sgpu-queue/internal/junit"
	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/safefs"
)

// itemLog is an item's output file. A write error (full disk) is remembered and
// reported once, but never fails the write back to the item: losing log lines must
// not kill a test that is otherwise running fine.
type itemLog struct {
	executor.Sink
	f    *os.File
	path string
}

// openLog creates the item's log, never through a link or into a FIFO; without one
// the item runs with its output dropped.
func (d *dispatcher) openLog(it expand.Item) *itemLog {
	path := d.cfg.Layout.ItemLog(it.Label, it.Tag)
	f, err := d.cfg.Layout.Create(path)
	if err != nil {
		d.lost(fmt.Sprintf("the log of item %s, its output is lost", name(it)), path, err)
		return &itemLog{path: path}
	}
	return &itemLog{Sink: executor.Sink{W: f}, f: f, path: path}
}

func (l *itemLog) Close() error {
	if l.f == nil {
		return nil
	}
	cerr := l.f.Close()
	if l.Err != nil {
		return fmt.Errorf("%s: output lost after %d bytes: %w", l.path, l.N, l.Err)
	}
	if cerr != nil {
		return fmt.Errorf("%s: %w", l.path, cerr)
	}
	return nil
}

// mkdir creates an item's working directory ("": an adapter item has none), a real
// directory, never a link's target.
func mkdir(l logdir.Layout, dir string) error {
	if dir == "" {
		return nil
	}
	return l.MkdirAll(dir)
}

// removeIfEmpty removes the item's working directory ("": none) unless the item
// left files or a link there.
func removeIfEmpty(l logdir.Layout, dir string) {
	if dir != "" {
		l.RemoveIfEmpty(dir)
	}
}

// writeRC replaces the item's rc file whole (a full disk leaves no empty .rc for a
// gate to read as a verdict), never through a link.
func writeRC(l logdir.Layout, path string, rc int) error {
	return l.WriteFile(path, []byte(fmt.Sprintf("%d\n", rc)))
}

// partialLeft reports whether a .partial sidecar newer than start outlived the
// item: a tagged item's own only, since its suite's items run at once; for an
// opaque suite's one item, any under its prefix.
func (d *dispatcher) partialLeft(it expand.Item, start time.Time) bool {
	if d.cfg.JUnitPrefix == "" {
		return false
	}
	dir := filepath.Clean(d.cfg.JUnitPrefix + it.Label)
	since := start.Add(-time.Second) // coarse file-system clocks
	if it.Tag == "" {
		found := false
		n := 0
		_ = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
			n++
			if n > maxWalk {
				// A suite's JUnit tree this large is not worth the time at
				// every item's end: no sidecar found.
				return filepath.SkipAll
			}
			if err != nil {
				return filepath.SkipDir // an unreadable folder: look elsewhere
			}
			if !e.IsDir() && strings.HasSuffix(p, ".partial") && newer(p, since) {
				found = true
				return filepath.SkipAll
			}
			return nil
		})
		return found
	}
	p := d.xmlFile(it)
	if p == "" {
		return false // a hostile tag pointing outside: not this item's sidecar
	}
	return newer(p+".partial", since)
}

// maxWalk bounds the entries partialLeft visits under an opaque suite's prefix.
// (SkipDir on a file only leaves that file's folder, so the bound needs SkipAll.)
const maxWalk = 100000

func newer(path string, since time.Time) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.ModTime().Before(since)
}

// keepAttemptJUnit copies attempt n's JUnit XML and sidecar into the log dir before
// the next attempt overwrites them, so the report names the tests that failed, then
// passed (docs/report.md). Only regular files written since t0, never via a link.
func (d *dispatcher) keepAttemptJUnit(it expand.Item, n int, t0 time.Time) {
	src := d.xmlFile(it)
	if src == "" {
		return
	}
	dst := d.cfg.Layout.ItemAttemptJUnit(it.Label, it.Tag, n)
	for _, ext := range []string{"", ".partial"} {
		fi, err := os.Lstat(src + ext)
		if err != nil || !fi.Mode().IsRegular() || fi.ModTime().Before(t0.Add(-time.Second)) || fi.Size() > junit.MaxFileBytes {
			continue
		}
		data, err := safefs.ReadFile(src + ext)
		if err == nil {
			err = d.cfg.Layout.WriteFile(dst+ext, data)
		}
		if err != nil {
			d.warn(fmt.Sprintf("keeping the JUnit XML of attempt %d of %s: %v", n, name(it), err))
		}
	}
}

// keepAttempt moves an item's log and rc aside as attempt n, never through a link.
func keepAttempt(l logdir.Layout, label, tag string, n int, warn func(string)) {
	for _, p := range [][2]string{
		{l.ItemLog(label, tag), l.ItemAttemptLog(label, tag, n)},
		{l.ItemRC(label, tag), l.ItemAttemptRC(label, tag, n)},
	} {
		if err := l.Rename(p[0], p[1]); err != nil && !errors.Is(err, fs.ErrNotExist) {
			warn(fmt.Sprintf("keeping attempt %d of %s: %v", n, p[0], err))
		}
	}
}
