package logdir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/safefs"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func claim(labels ...string) *record.Meta {
	m := &record.Meta{Tool: ToolName}
	for _, l := range labels {
		m.Suites = append(m.Suites, record.MetaSuite{Label: l, LogFile: l + ".log", Mode: "list"})
	}
	return m
}

func TestClaimNewDir(t *testing.T) {
	l := Layout{Root: filepath.Join(t.TempDir(), "a", "logs")}
	lock, err := l.Claim(claim("torch"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	for _, d := range l.dirs() {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			t.Errorf("%s not created", d)
		}
	}
	if data, err := os.ReadFile(l.Meta()); err != nil || !strings.Contains(string(data), `"tool": "sgpu-queue"`) {
		t.Errorf("run.json not written at once: %v %s", err, data)
	}
	holder, _ := os.ReadFile(filepath.Join(l.Root, LockName))
	if !strings.HasPrefix(string(holder), fmt.Sprintf("pid %d on host ", os.Getpid())) {
		t.Errorf("lock file %q does not name its holder", holder)
	}
}

// A directory with someone's files and no run of ours is refused, untouched; with
// reuse the run writes beside them and deletes none.
func TestClaimRefusesForeignDir(t *testing.T) {
	root := t.TempDir()
	l := Layout{Root: root}
	gen := filepath.Join(root, "report", "generator.py")
	write(t, gen, "print('mine')\n")
	write(t, filepath.Join(root, "README.md"), "repo\n")
	_, err := l.Claim(claim("torch"), false)
	var no *NotOursError
	if !errors.As(err, &no) {
		t.Fatalf("err = %v, want *NotOursError", err)
	}
	for _, want := range []string{"log dir " + root + " holds files that no sgpu-queue run wrote (no queue/run.json; it holds README.md, report/)", "--log-dir-reuse"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	if exists(filepath.Join(root, LockName)) || exists(l.ItemsDir()) {
		t.Error("a refused log dir was written to")
	}
	// A run.json that is not ours is refused too.
	write(t, l.Meta(), `{"tool": "other"}`)
	if _, err := l.Claim(claim("torch"), false); !errors.As(err, &no) || !strings.Contains(err.Error(), "not one of sgpu-queue's") {
		t.Errorf("foreign run.json: %v", err)
	}
	lock, err := l.Claim(claim("torch"), true)
	if err != nil {
		t.Fatal(err)
	}
	lock.Release()
	if data, err := os.ReadFile(gen); err != nil || string(data) != "print('mine')\n" {
		t.Errorf("generator.py: %v %q", err, data)
	}
	// Only the lock and empty directories of a run (a claim killed half way) count
	// as empty.
	empty := Layout{Root: t.TempDir()}
	os.MkdirAll(empty.ItemsDir(), 0o755)
	write(t, filepath.Join(empty.Root, LockName), "")
	if lock, err := empty.Claim(claim("x"), false); err != nil {
		t.Errorf("empty layout refused: %v", err)
	} else {
		lock.Release()
	}
}

// A new run deletes exactly what the earlier run wrote, whatever else is there.
func TestClaimDeletesOnlyOwned(t *testing.T) {
	root := t.TempDir()
	l := Layout{Root: root}
	lock, err := l.Claim(claim("torch", "core"), false)
	if err != nil {
		t.Fatal(err)
	}
	q := FormatQueue([]record.QueueRow{{ItemID: record.ItemID{Label: "torch", Tag: "a.b"}, Weight: 1, Cmd: "c"},
		{ItemID: record.ItemID{Label: "torch", Tag: "evil/tag"}, Weight: 1, Cmd: "c"}, {ItemID: record.ItemID{Label: "core"}, Weight: 1, Cmd: "c"}})
	write(t, l.QueueTSV(), string(q))
	owned := []string{
		l.ExpandLog(), l.ItemsTSV(), l.TimingsTSV(), l.AttemptsTSV(), l.OutcomesTSV(), l.Report(), l.Timeline(),
		l.ItemLog("torch", "a.b"), l.ItemRC("torch", "a.b"), l.ItemAttemptLog("torch", "a.b", 1), l.ItemAttemptRC("torch", "a.b", 1),
		l.ItemLog("torch", "evil/tag"), l.ItemLog("core", ""), l.ItemRC("core", ""),
		filepath.Join(l.ItemCwd("torch", "a.b"), "leftover", "core.dump"),
		l.SuiteLog("torch.log"), l.SuiteRC("torch.log"), l.SuiteRC("core.log"), l.SetupLog("torch"),
		filepath.Join(l.ReportDir(), ".schedule.md.tmp123456"), filepath.Join(l.QueueDir(), ".run.json.tmp9"),
	}
	for _, p := range owned {
		write(t, p, "old run\n")
	}
	users := []string{
		filepath.Join(root, "mine.txt"), filepath.Join(l.ReportDir(), "generator.py"),
		filepath.Join(l.ItemsDir(), "notes.txt"), l.ItemLog("torch", "not.queued"), l.ItemLog("jax", "a.b"),
		filepath.Join(l.CwdDir(), "torch.not.queued", "f"), l.SuiteLog("jax.log"), l.SetupLog("jax"),
		filepath.Join(l.ReportDir(), ".schedule.md.tmpx"), filepath.Join(l.ReportDir(), "schedule.md.bak"),
	}
	for _, p := range users {
		write(t, p, "user\n")
	}
	lock.Release()
	lock, err = l.Claim(claim("torch"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	for _, p := range owned {
		if exists(p) {
			t.Errorf("%s of the earlier run survived", p)
		}
	}
	if exists(l.ItemCwd("torch", "a.b")) {
		t.Error("the earlier item's cwd survived")
	}
	for _, p := range users {
		if data, err := os.ReadFile(p); err != nil || string(data) != "user\n" {
			t.Errorf("%s: %v %q: a file the tool did not write was touched", p, err, data)
		}
	}
}

// A layout directory that is a symlink is refused, and not looked into: its
// target could be anyone's (TestClaimRefusesLinksAndFIFOs tries every path).
func TestClaimDoesNotFollowLinkedDirs(t *testing.T) {
	root := t.TempDir()
	elsewhere := t.TempDir()
	l := Layout{Root: root}
	lock, err := l.Claim(claim("torch"), false)
	if err != nil {
		t.Fatal(err)
	}
	lock.Release()
	os.Remove(l.SuitesDir())
	os.Symlink(elsewhere, l.SuitesDir())
	victim := filepath.Join(elsewhere, "torch.log")
	write(t, victim, "precious\n")
	_, err = l.Claim(claim("torch"), false)
	var se *safefs.Error
	if !errors.As(err, &se) || se.Path != l.SuitesDir() {
		t.Fatalf("Claim = %v, want the linked suites/ refused", err)
	}
	if data, err := os.ReadFile(victim); err != nil || string(data) != "precious\n" {
		t.Error("a file behind a symlinked suites/ was touched")
	}
}

// A second claim while the first holds the lock exits naming the holder, and
// deletes nothing; once released the log dir can be claimed again.
func TestClaimLocked(t *testing.T) {
	l := Layout{Root: t.TempDir()}
	first, err := l.Claim(claim("torch"), false)
	if err != nil {
		t.Fatal(err)
	}
	write(t, l.SuiteRC("torch.log"), "0\n")
	_, err = l.Claim(claim("torch"), false)
	var busy *BusyError
	if !errors.As(err, &busy) || !strings.Contains(err.Error(), fmt.Sprintf("in use by another sgpu-queue run (pid %d on host ", os.Getpid())) {
		t.Fatalf("second claim: %v", err)
	}
	if !exists(l.SuiteRC("torch.log")) {
		t.Error("the refused claim deleted the running run's files")
	}
	first.Release()
	second, err := l.Claim(claim("torch"), false)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	second.Release()
}

// A cwd/<label>.<safetag>/ that was there when a run claimed the log dir (a
// --log-dir-reuse run over someone's files) is recorded in foreign_cwd, and no later
// run deletes it, nor what is in it; an item directory the run made is deleted as
// before.
func TestClaimKeepsForeignCwd(t *testing.T) {
	l := Layout{Root: t.TempDir()}
	mine := filepath.Join(l.CwdDir(), "torch.a", "mine.txt")
	write(t, mine, "the user's\n")
	m := claim("torch")
	lock, err := l.Claim(m, true)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(m.ForeignCwd, ",") != "torch.a" {
		t.Errorf("foreign_cwd %q, want torch.a", m.ForeignCwd)
	}
	// The run's items torch/a (in the user's folder) and torch/b (in its own).
	write(t, l.QueueTSV(), "1\ttorch\tci.sh\ta\n1\ttorch\tci.sh\tb\n")
	write(t, filepath.Join(l.CwdDir(), "torch.a", "left_by_item"), "x")
	write(t, filepath.Join(l.CwdDir(), "torch.b", "left_by_item"), "x")
	lock.Release()
	for i := 0; i < 2; i++ { // and the run after the next one
		m := claim("torch")
		lock, err := l.Claim(m, false)
		if err != nil {
			t.Fatal(err)
		}
		if !exists(mine) {
			t.Fatalf("claim %d deleted the user's %s", i+1, mine)
		}
		if exists(filepath.Join(l.CwdDir(), "torch.b")) {
			t.Errorf("claim %d kept the earlier run's own cwd/torch.b", i+1)
		}
		if strings.Join(m.ForeignCwd, ",") != "torch.a" {
			t.Errorf("claim %d: foreign_cwd %q, want torch.a still", i+1, m.ForeignCwd)
		}
		write(t, l.QueueTSV(), "1\ttorch\tci.sh\ta\n")
		lock.Release()
	}
}

// A claim that stops while it deletes the earlier run's files (killed, or an item's
// directory it cannot remove: here a mount point in it) leaves queue/run.json and
// queue/queue.tsv, which name what is left: the next claim deletes the rest. Before,
// run.json went first, and the next claim refused the log dir as no run's.
func TestClaimStoppedMidwayIsFinishedByTheNext(t *testing.T) {
	l := Layout{Root: t.TempDir()}
	lock, err := l.Claim(claim("torch"), false)
	if err != nil {
		t.Fatal(err)
	}
	write(t, l.QueueTSV(), "1\ttorch\tci.sh\ta\n")
	old := []string{l.ExpandLog(), l.AttemptsTSV(), l.TimingsTSV(), l.Report(), l.SuiteLog("torch.log"), l.SuiteRC("torch.log"),
		l.ItemLog("torch", "a"), l.ItemRC("torch", "a"), filepath.Join(l.ItemCwd("torch", "a"), "left.txt")}
	for _, p := range old {
		write(t, p, "old run\n")
	}
	lock.Release()
	busy := filepath.Join(l.ItemCwd("torch", "a"), "busy")
	if err := os.Mkdir(busy, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", busy, "tmpfs", 0, "size=4096"); err != nil {
		t.Skipf("TMPFS UNAVAILABLE: cannot mount a tmpfs on %s (%v): a claim that fails midway is not tried; run it as root (CAP_SYS_ADMIN)",
			busy, err)
	}
	mounted := true
	unmount := func() {
		if mounted {
			mounted = false
			if err := syscall.Unmount(busy, syscall.MNT_DETACH); err != nil {
				t.Errorf("unmounting %s: %v", busy, err)
			}
		}
	}
	t.Cleanup(unmount)
	if lock, err := l.Claim(claim("torch"), false); err == nil {
		lock.Release()
		t.Fatal("a claim that cannot remove cwd/torch.a/ succeeded")
	}
	unmount()
	for _, p := range []string{l.Meta(), l.QueueTSV()} {
		if !exists(p) {
			t.Errorf("the stopped claim deleted %s, which names what it left", p)
		}
	}
	lock, err = l.Claim(claim("torch"), false)
	if err != nil {
		t.Fatalf("the claim after a stopped one: %v", err)
	}
	defer lock.Release()
	for _, p := range append(old, busy) {
		if exists(p) {
			t.Errorf("%s of the earlier run survived", p)
		}
	}
}

// A run that reuses a directory of someone's files (--log-dir-reuse over the
// test-results/logs TE's own script left) replaces its own files there, never
// appends to them: attempts.tsv and timings.tsv start empty, so TE's readers see
// this run's rows alone.
func TestReuseStartsTheAttemptFilesEmpty(t *testing.T) {
	l := Layout{Root: t.TempDir()}
	old := "torch\told\t0\t1\t0\t0\t1\tunknown\t0\n"
	write(t, l.TimingsTSV(), old)
	write(t, l.AttemptsTSV(), old)
	lock, err := l.Claim(claim("torch"), true)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	w, err := l.OpenAttempts()
	if err != nil {
		t.Fatal(err)
	}
	a := record.Attempt{ItemID: record.ItemID{Label: "torch", Tag: "new"}, GPUs: []string{"0"}, Secs: 1, EndOff: 1, Outcome: outcome.OK}
	if err := w.Append(a); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{l.TimingsTSV(): FormatTiming(a), l.AttemptsTSV(): FormatAttempt(a)} {
		if got := readFile(t, path); got != want {
			t.Errorf("%s holds %q, want this run's row alone %q", path, got, want)
		}
	}
}
