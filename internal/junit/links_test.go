package junit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/safefs"
	"github.com/rocm/sgpu-queue/internal/treetest"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

// recordLog is a Log that keeps what WriteSuites said.
type recordLog struct{ lines []string }

func (l *recordLog) Printf(format string, a ...any) {
	l.lines = append(l.lines, fmt.Sprintf(format, a...))
}
func (l *recordLog) Warn(msg string) { l.lines = append(l.lines, "warning: "+msg) }
func (l *recordLog) Lost(what, path string, err error) {
	l.lines = append(l.lines, fmt.Sprintf("lost %s %s: %v", what, path, err))
}
func (l *recordLog) Rel(path string) string { return path }

// The JUnit dir's merged files, its manifest and the dir itself, each replaced by
// a link to a copy outside the repo or a FIFO (the merged file of a suite of this
// run, and of one that is not, which is left as another run's): WriteSuites never
// writes, truncates or deletes through them, never blocks, and says what it left.
func TestWriteSuitesLinksAndFIFOs(t *testing.T) {
	for _, tc := range []struct {
		name, rel string // under the repo
		fifo      bool
	}{
		{"this run's file", "test-results/junit/s.xml", false},
		{"another suite's file", "test-results/junit/gone.xml", false},
		{"the manifest", "test-results/junit/" + ManifestName, false},
		{"the JUnit dir", "test-results/junit", false},
		{"test-results", "test-results", false},
		{"a FIFO manifest", "test-results/junit/" + ManifestName, true},
		{"a FIFO file", "test-results/junit/s.xml", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := filepath.Join(t.TempDir(), "repo")
			dir := filepath.Join(repo, "test-results", "junit")
			suites := []verdict.Suite{{Label: "s", Items: []verdict.Item{{ItemID: record.ItemID{Tag: "a"}, Finished: true}}}}
			doc := func(verdict.Suite) (*Doc, error) {
				return emptyDoc("s"), nil
			}
			// An earlier run wrote s.xml and gone.xml, and its manifest lists both.
			WriteSuites(context.Background(), repo, dir, append(suites, verdict.Suite{Label: "gone"}), doc, &recordLog{})
			path := filepath.Join(repo, tc.rel)
			outside := filepath.Join(t.TempDir(), "precious")
			if err := os.Rename(path, outside); err != nil {
				t.Fatal(err)
			}
			if tc.fifo {
				if err := syscall.Mkfifo(path, 0o644); err != nil {
					t.Fatal(err)
				}
			} else if err := os.Symlink(outside, path); err != nil {
				t.Fatal(err)
			}
			before := treetest.Snapshot(t, filepath.Dir(outside))
			log := &recordLog{}
			var written []string
			treetest.Finishes(t, func() { written = WriteSuites(context.Background(), repo, dir, suites, doc, log) })
			treetest.Same(t, "outside the repo", before, treetest.Snapshot(t, filepath.Dir(outside)))
			said := strings.Join(log.lines, "\n")
			if fi, _ := os.Lstat(path); fi == nil || fi.Mode().IsRegular() {
				t.Errorf("%s was replaced", tc.rel)
			}
			if len(written) > 0 && tc.rel != "test-results/junit/gone.xml" && !strings.HasSuffix(tc.rel, ManifestName) {
				t.Errorf("wrote %v through %s", written, tc.rel)
			}
			// A stale file replaced by a link is not this tool's any more: left
			// silently, as one a user replaced.
			if !strings.Contains(said, filepath.Base(path)) && tc.name != "another suite's file" {
				t.Errorf("nothing said of %s:\n%s", tc.rel, said)
			}
		})
	}
}

// A FIFO where a JUnit file is read (an item's XML, a shard's merged file, the
// report's) is an error naming it, never a wait for a writer.
func TestReadsRefuseFIFOs(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "a.xml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, read := range map[string]func() error{
		"ReadCases":   func() error { _, err := ReadCases(fifo); return err },
		"FailedCases": func() error { _, _, err := FailedCases(fifo); return err },
		"readCapped":  func() error { _, err := readCapped(dirFS(dir), "a.xml", 1<<20); return err },
		"OpenOutputs": func() error { _, err := OpenOutputs(dir, filepath.Join(dir, "m")); return err },
	} {
		t.Run(name, func(t *testing.T) {
			if name == "OpenOutputs" {
				os.MkdirAll(filepath.Join(dir, "m"), 0o755)
				os.Remove(filepath.Join(dir, "m", ManifestName))
				if err := syscall.Mkfifo(filepath.Join(dir, "m", ManifestName), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var err error
			treetest.Finishes(t, func() { err = read() })
			var se *safefs.Error
			if !errors.As(err, &se) || !se.Read {
				t.Errorf("err = %v, want a refused read of the FIFO", err)
			}
		})
	}
	// A shard's merged file that is a FIFO is an error case of the combined
	// document, not a hang.
	var d *Doc
	var err error
	treetest.Finishes(t, func() {
		d, err = Combine(context.Background(), verdict.Suite{Label: "s"}, []Part{{Shard: "1/2", Path: fifo}}, func(verdict.Item) bool { return false })
	})
	if err != nil || d == nil || d.Stats().Errors != 1 {
		t.Errorf("Combine of a FIFO: %+v, %v", d, err)
	}
}
