package logdir

import (
	"cmp"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/safefs"
	"github.com/rocm/sgpu-queue/internal/treetest"
)

// ranLogDir is repo/test-results/logs after a run of suite torch with item a:
// every file and directory a run leaves there. The layout's trusted root is repo.
func ranLogDir(t *testing.T) Layout {
	t.Helper()
	repo := filepath.Join(t.TempDir(), "repo")
	l := New(filepath.Join(repo, "test-results", "logs"), repo)
	lock, err := l.Claim(claim("torch"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	for _, f := range []string{l.ExpandLog(), l.ItemsTSV(), l.TimingsTSV(), l.AttemptsTSV(), l.OutcomesTSV(), l.Report(), l.Timeline(),
		l.SuiteLog("torch.log"), l.SuiteRC("torch.log"), l.SetupLog("torch"), l.ItemLog("torch", "a"), l.ItemRC("torch", "a"),
		l.ItemAttemptLog("torch", "a", 1), filepath.Join(l.ItemCwd("torch", "a"), "left.txt"), filepath.Join(l.JUnitDir(), "torch", "a.xml")} {
		write(t, f, "run\n")
	}
	write(t, l.QueueTSV(), "1\ttorch\tci/t.sh\ta\t\n")
	return l
}

// outsideCopy copies path (a file or a directory) to a new place outside the repo
// and returns it with a snapshot of it.
func outsideCopy(t *testing.T, path string) (string, map[string]string) {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "precious")
	treetest.Copy(t, path, dst, nil)
	return dst, treetest.Snapshot(t, filepath.Dir(dst))
}

// What a run writes, truncates or deletes in the log dir, replaced by a link to a
// copy outside the repo, a FIFO, a directory where a file goes or a file where a
// directory goes: the claim refuses it (a *safefs.Error naming it) before it reads,
// writes or deletes anything, and the outside copy keeps every byte.
func TestClaimRefusesLinksAndFIFOs(t *testing.T) {
	var l0 Layout // names only
	files := append(l0.fixedFiles(), l0.SuiteLog("torch.log"), l0.SuiteRC("torch.log"), l0.SetupLog("torch"),
		l0.ItemLog("torch", "a"), l0.ItemRC("torch", "a"), l0.ItemAttemptLog("torch", "a", 1),
		filepath.Join(l0.QueueDir(), ".run.json.tmp123"), // a killed atomic write's
		l0.ItemLog("other", "b"))                         // an item of no earlier run: named as one
	dirs := append(l0.dirs(), l0.JUnitDir(), l0.ItemCwd("torch", "a"), l0.ItemCwd("other", "b"))
	type tcase struct {
		rel   string // under the log dir
		isDir bool   // a directory of the run
		make  string // "link", "fifo", "dir", "file"
		kind  string
	}
	var cases []tcase
	for _, f := range files {
		f = strings.TrimPrefix(f, string(filepath.Separator))
		cases = append(cases, tcase{f, false, "link", "a symbolic link"}, tcase{f, false, "fifo", "a named pipe (FIFO)"},
			tcase{f, false, "dir", "a directory"})
	}
	// Above the log dir, below the repo root: a committed test-results link.
	dirs = append(dirs, "..", ".")
	for _, d := range dirs {
		d = strings.TrimPrefix(d, string(filepath.Separator))
		cases = append(cases, tcase{d, true, "link", "a symbolic link"}, tcase{d, true, "file", "a regular file"})
	}
	for _, tc := range cases {
		t.Run(tc.make+" "+tc.rel, func(t *testing.T) {
			l := ranLogDir(t)
			path := filepath.Clean(filepath.Join(l.Root, tc.rel))
			if _, err := os.Lstat(path); err != nil && tc.isDir {
				write(t, filepath.Join(path, "left.txt"), "run\n") // not left by the run: made for the case
			} else if err != nil {
				write(t, path, "run\n")
			}
			outside, before := outsideCopy(t, path)
			if err := os.RemoveAll(path); err != nil {
				t.Fatal(err)
			}
			var err error
			switch tc.make {
			case "link":
				err = os.Symlink(outside, path)
			case "fifo":
				err = syscall.Mkfifo(path, 0o644)
			case "dir":
				err = os.MkdirAll(filepath.Join(path, "sub"), 0o755)
			case "file":
				err = os.WriteFile(path, []byte("x\n"), 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
			in := treetest.Snapshot(t, filepath.Dir(l.Trusted))
			treetest.Finishes(t, func() {
				var lock *Lock
				lock, err = l.Claim(claim("torch"), false)
				lock.Release()
			})
			var se *safefs.Error
			if !errors.As(err, &se) || se.Path != path || se.Kind != tc.kind {
				t.Fatalf("Claim = %v, want a *safefs.Error naming %s as %s", err, path, tc.kind)
			}
			if msg := se.Rel(l.Trusted).Error(); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "test-results/") && tc.rel != ".." {
				t.Errorf("message %q: want one line naming the path relative to the repo root", msg)
			}
			treetest.Same(t, "the copy outside the repo", before, treetest.Snapshot(t, filepath.Dir(outside)))
			treetest.Same(t, "the repo, by the refused claim,", in, treetest.Snapshot(t, filepath.Dir(l.Trusted)))
		})
	}
}

// A link the run meets mid-run (made after the claim) is refused by each write:
// run.json, the timings, a file written whole; the target keeps its bytes.
func TestWritesRefuseLinksMidRun(t *testing.T) {
	for _, tc := range []struct {
		name  string
		path  func(Layout) string
		write func(Layout) error
	}{
		{"run.json", Layout.Meta, func(l Layout) error { return l.WriteMeta(&record.Meta{Tool: ToolName}) }},
		{"attempts.tsv", Layout.AttemptsTSV, func(l Layout) error { _, err := l.OpenAttempts(); return err }},
		{"timings.tsv", Layout.TimingsTSV, func(l Layout) error { _, err := l.OpenAttempts(); return err }},
		{"expand.log", Layout.ExpandLog, func(l Layout) error { _, err := l.Create(l.ExpandLog()); return err }},
		{"queue.tsv", Layout.QueueTSV, func(l Layout) error { return l.WriteFile(l.QueueTSV(), nil) }},
		{"an item's cwd", func(l Layout) string { return l.ItemCwd("torch", "a") },
			func(l Layout) error { return l.MkdirAll(l.ItemCwd("torch", "a")) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := ranLogDir(t)
			path := tc.path(l)
			outside, before := outsideCopy(t, path)
			os.RemoveAll(path)
			if err := os.Symlink(outside, path); err != nil {
				t.Fatal(err)
			}
			err := tc.write(l)
			var se *safefs.Error
			if !errors.As(err, &se) || se.Path != path {
				t.Errorf("err = %v, want a *safefs.Error naming %s", err, path)
			}
			treetest.Same(t, "the copy outside the repo", before, treetest.Snapshot(t, filepath.Dir(outside)))
		})
	}
}

// The trusted root of a log dir outside the repo is the log dir itself: a link
// above it is the user's choice (a workspace on another disk) and is followed.
func TestTrustedRootOutsideRepo(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "disk")
	if err := os.MkdirAll(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(base, "ws")); err != nil {
		t.Fatal(err)
	}
	l := New(filepath.Join(base, "ws", "logs"), filepath.Join(base, "repo"))
	if l.Trusted != l.Root {
		t.Fatalf("trusted root %s, want the log dir %s", l.Trusted, l.Root)
	}
	lock, err := l.Claim(claim("torch"), false)
	if err != nil {
		t.Fatal(err)
	}
	lock.Release()
	if _, err := os.Stat(filepath.Join(real, "logs", "queue", "run.json")); err != nil {
		t.Errorf("run.json not written through the user's own link above the log dir: %v", err)
	}
}

// Load (report, merge) reads a log dir that may come from elsewhere: a FIFO in
// place of any file it reads is an error naming it, never a hang.
func TestLoadRefusesFIFOs(t *testing.T) {
	var l0 Layout
	format := map[string]int{l0.TimingsTSV(): FormatOutcomes, l0.OutcomesTSV(): FormatOutcomes} // an older log dir's files
	for _, rel := range []string{LockName, l0.Meta(), l0.QueueTSV(), l0.AttemptsTSV(), l0.TimingsTSV(), l0.OutcomesTSV(), l0.ShardsTSV()} {
		f := cmp.Or(format[rel], FormatAttempts)
		rel = strings.TrimPrefix(rel, string(filepath.Separator))
		t.Run(rel, func(t *testing.T) {
			l := Layout{Root: t.TempDir()}
			write(t, l.QueueTSV(), "")
			if err := l.WriteMeta(&record.Meta{Tool: ToolName, Format: f, Merge: &record.Merge{Shards: 2}}); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(l.Root, rel)
			os.Remove(path)
			if err := syscall.Mkfifo(path, 0o644); err != nil {
				t.Fatal(err)
			}
			var err error
			treetest.Finishes(t, func() { _, _, err = Load(l.Root) })
			var se *safefs.Error
			if !errors.As(err, &se) || se.Path != path || !se.Read || strings.Contains(err.Error(), "\n") {
				t.Errorf("Load = %v, want one line refusing the FIFO %s", err, path)
			}
		})
	}
}

// Owned lists a link in place of an owned file (it is the claim's to refuse), and
// never what is behind a linked layout directory.
func TestOwnedLinks(t *testing.T) {
	l := ranLogDir(t)
	outside, _ := outsideCopy(t, l.ItemsDir())
	os.RemoveAll(l.ItemsDir())
	os.Symlink(outside, l.ItemsDir())
	files, _ := l.Owned(claim("torch"))
	for _, f := range files {
		if strings.HasPrefix(f, l.ItemsDir()+string(filepath.Separator)) {
			t.Errorf("Owned looked into a linked items/: %s", f)
		}
	}
	sort.Strings(files)
	if len(files) == 0 {
		t.Error("Owned lists nothing of the earlier run")
	}
}
