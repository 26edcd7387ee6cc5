package executor

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rocm/sgpu-queue/internal/proctest"
)

func sh(script string) Command {
	return Command{Path: "/bin/sh", Args: []string{"-c", script}, Env: []string{"PATH=/usr/bin:/bin", "X=42"}}
}

func TestLocalExitCodes(t *testing.T) {
	tests := []struct {
		script   string
		code     int
		signaled bool
	}{
		{"exit 0", 0, false},
		{"exit 3", 3, false},
		{"kill -SEGV $$", 139, true},
		{"kill -KILL $$", 137, true},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			res, err := Local{}.Run(context.Background(), sh(tt.script))
			if err != nil || res.ExitCode != tt.code || res.Signaled != tt.signaled || res.Cancelled {
				t.Errorf("res %+v err %v", res, err)
			}
		})
	}
}

func TestLocalEnvDirOutput(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	c := sh(`echo "x=$X pwd=$(pwd)"; echo oops >&2`)
	c.Dir, c.Stdout, c.Stderr = dir, &out, &errb
	if _, err := (Local{}).Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(dir)
	if out.String() != "x=42 pwd="+real+"\n" || errb.String() != "oops\n" {
		t.Errorf("out %q err %q", out.String(), errb.String())
	}
}

func TestLocalNotFound(t *testing.T) {
	for _, p := range []string{"/nonexistent/tool", "no-such-tool-sgpu"} {
		_, err := Local{}.Run(context.Background(), Command{Path: p, Env: []string{"PATH=/bin"}})
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: err %v", p, err)
		}
	}
	dir := t.TempDir()
	noexec := filepath.Join(dir, "x.sh")
	os.WriteFile(noexec, []byte("#!/bin/sh\n"), 0o644)
	if _, err := (Local{}).Run(context.Background(), Command{Path: noexec}); !errors.Is(err, ErrNotFound) {
		t.Errorf("not executable: %v", err)
	}
}

// Cancel reaches the whole process group: a child that ignores nothing dies with its
// parent, and one that traps TERM is killed after the grace period.
func TestLocalCancelKillsGroup(t *testing.T) {
	dir := t.TempDir()
	pidfile := filepath.Join(dir, "child.pid")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Result)
	go func() {
		res, _ := Local{Grace: 200 * time.Millisecond}.Run(ctx, sh(`trap '' TERM; sleep 60 & echo $! > `+pidfile+`; wait`))
		done <- res
	}()
	waitFile(t, pidfile)
	cancel()
	res := <-done
	if !res.Cancelled || res.ExitCode != 137 {
		t.Errorf("res %+v, want cancelled and killed (137)", res)
	}
	data, _ := os.ReadFile(pidfile)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	if pid <= 0 {
		t.Fatalf("pid %q", data)
	}
	// A generous bound: a busy machine may take a while to reap it.
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if !alive(pid) {
			return
		}
	}
	t.Errorf("child %d survived the cancel", pid)
}

// alive reports whether pid runs; a zombie (dead, not yet reaped by an init that may
// not reap in a container) counts as dead.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(stat), ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}

func TestLocalForceCutsGrace(t *testing.T) {
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready")
	ctx, cancel := context.WithCancel(context.Background())
	force := make(chan struct{})
	done := make(chan Result)
	go func() {
		res, _ := Local{Grace: time.Hour, Force: force}.Run(ctx, sh(`trap '' TERM; touch `+ready+`; while :; do sleep 0.05; done`))
		done <- res
	}()
	waitFile(t, ready)
	cancel()
	close(force)
	if res := <-done; !res.Cancelled || res.ExitCode != 137 {
		t.Errorf("res %+v", res)
	}
}

func TestLocalCancelledBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := Local{}.Run(ctx, sh("exit 0"))
	if err != nil || !res.Cancelled {
		t.Errorf("res %+v err %v", res, err)
	}
}

func waitFile(t *testing.T, p string) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if fi, err := os.Stat(p); err == nil && fi.Size() >= 0 {
			if data, _ := os.ReadFile(p); len(data) > 0 || strings.HasSuffix(p, "ready") {
				return
			}
		}
	}
	t.Fatalf("%s never appeared", p)
}

// A bare name is looked up on the PATH the command runs with, not on this process's.
func TestLocalLooksUpTheCommandsPATH(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "sgpu-fake-tool"), []byte("#!/bin/sh\necho found\n"), 0o755)
	var out bytes.Buffer
	res, err := Local{}.Run(context.Background(), Command{Path: "sgpu-fake-tool", Env: []string{"PATH=" + dir + ":/bin"}, Stdout: &out})
	if err != nil || res.ExitCode != 0 || out.String() != "found\n" {
		t.Errorf("res %+v err %v out %q", res, err, out.String())
	}
	if _, err := (Local{}).Run(context.Background(), Command{Path: "sgpu-fake-tool", Env: []string{"PATH=/bin"}}); !errors.Is(err, ErrNotFound) {
		t.Errorf("found outside the command's PATH: %v", err)
	}
}

type warnings struct {
	mu    sync.Mutex
	lines []string
}

func (w *warnings) add(s string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lines = append(w.lines, s)
}

func (w *warnings) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.lines, "\n")
}

// hangGuard bounds how long a test waits for Run, so that a hang fails the test
// instead of the whole run; it is far above what any case needs, no speed claim.
const hangGuard = 30 * time.Second

func runGuarded(t *testing.T, l Local, ctx context.Context, c Command) (Result, error) {
	t.Helper()
	type outcome struct {
		res Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := l.Run(ctx, c)
		done <- outcome{res, err}
	}()
	select {
	case o := <-done:
		return o.res, o.err
	case <-time.After(hangGuard):
		t.Fatalf("Run did not return within %s", hangGuard)
		return Result{}, nil
	}
}

// up waits until "sleep MARK" runs (not only forked: execed, and in its own session
// when it was started by setsid), so that what the test expects is what Run finds.
const up = `until pgrep -xf "sleep MARK" >/dev/null; do sleep 0.01; done`

// A command ends when its script exits, whatever it left behind: a background child
// in its group or one that left it with setsid, holding the output or not. What is
// left is killed, said in the command's log and in one warning naming it.
func TestLocalEndsWhenTheScriptExits(t *testing.T) {
	tests := []struct {
		name, script string
		want         []string // in the warning
		holds        bool
	}{
		{"group, holding the output", `sleep MARK & UP; echo out; exit 3`,
			[]string{"test-item left a process holding its output after it exited: pid ", "(sleep MARK); killed"}, true},
		{"setsid, holding the output", `setsid sleep MARK & UP; echo out; exit 3`,
			[]string{"test-item left a process holding its output after it exited: pid ", "(sleep MARK; outside its process group); killed"}, true},
		{"setsid, output closed", `setsid sleep MARK >/dev/null 2>&1 </dev/null & UP; echo out; exit 3`,
			[]string{"test-item left a process running after it exited: pid ", "(sleep MARK; outside its process group); killed"}, false},
		{"double fork, holding the output", `(sleep MARK &); UP; echo out; exit 3`,
			[]string{"test-item left a process holding its output after it exited: pid ", "(sleep MARK); killed"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			mark := proctest.Mark()
			var warn warnings
			var out bytes.Buffer
			c := sh(strings.ReplaceAll(strings.ReplaceAll(tt.script, "UP", up), "MARK", mark))
			c.Name, c.Stdout, c.Stderr = "test-item", &out, &out
			res, err := runGuarded(t, Local{Grace: time.Hour, Warn: warn.add}, context.Background(), c)
			if err != nil || res.ExitCode != 3 || res.Cancelled || res.Signaled {
				t.Errorf("res %+v err %v, want the script's own exit 3", res, err)
			}
			proctest.NoSurvivors(t, mark)
			w := warn.String()
			for _, s := range tt.want {
				if !strings.Contains(w, strings.ReplaceAll(s, "MARK", mark)) {
					t.Errorf("warning %q lacks %q", w, strings.ReplaceAll(s, "MARK", mark))
				}
			}
			if strings.Count(w, "\n") != 0 {
				t.Errorf("want one warning line, got %q", w)
			}
			log := out.String()
			if !strings.HasPrefix(log, "out\n") || !strings.Contains(log, "sgpu-queue: left a process") {
				t.Errorf("log %q: want the output, then the note", log)
			}
		})
	}
}

// A command that leaves nothing behind gets no warning, however it ended.
func TestLocalNoWarningWhenNothingIsLeft(t *testing.T) {
	var warn warnings
	for _, script := range []string{"exit 0", "sleep 0.1 & wait; exit 1", "kill -TERM $$"} {
		if _, err := (Local{Warn: warn.add}).Run(context.Background(), sh(script)); err != nil {
			t.Fatal(err)
		}
	}
	if w := warn.String(); w != "" {
		t.Errorf("warned %q", w)
	}
}

// A process that clears its environment and leaves the group cannot be found; it
// holds the output, which is then read for outputWait only, and the warning says so.
func TestLocalUnfindableHolderIsBounded(t *testing.T) {
	mark := proctest.Mark()
	t.Cleanup(func() { proctest.Kill(mark) })
	var warn warnings
	var out bytes.Buffer
	c := sh(`env -i /usr/bin/setsid sleep ` + mark + ` & ` + strings.ReplaceAll(up, "MARK", mark) + `; echo out; exit 0`)
	c.Name, c.Stdout, c.Stderr = "test-item", &out, &out
	res, err := runGuarded(t, Local{Warn: warn.add}, context.Background(), c)
	if err != nil || res.ExitCode != 0 {
		t.Errorf("res %+v err %v", res, err)
	}
	if w := warn.String(); !strings.Contains(w, "test-item left a process holding its output that could not be found") {
		t.Errorf("warning %q", w)
	}
	if len(proctest.Sleeping(mark)) == 0 {
		t.Log("the unfindable process died anyway (environment cleared, but found by another way?)")
	}
}

// cancelWhenReady runs c under l, cancels it once the file ready exists, and returns
// its result; limit bounds how long Run may take after the cancel.
func cancelWhenReady(t *testing.T, l Local, c Command, ready string, limit time.Duration) Result {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan Result, 1)
	go func() {
		res, _ := l.Run(ctx, c)
		done <- res
	}()
	waitFile(t, ready)
	cancel()
	select {
	case res := <-done:
		return res
	case <-time.After(limit):
		t.Fatalf("Run did not return within %s of the cancel", limit)
		return Result{}
	}
}

// Cancel reaches a process that left the group with setsid and ignores TERM: it is
// killed once the grace period is over.
func TestLocalCancelKillsEscapedProcesses(t *testing.T) {
	mark := proctest.Mark()
	ready := filepath.Join(t.TempDir(), "ready")
	script := `trap '' TERM; setsid sleep MARK >/dev/null 2>&1 & ` + up + `; touch ` + ready + `; wait`
	res := cancelWhenReady(t, Local{Grace: 300 * time.Millisecond}, sh(strings.ReplaceAll(script, "MARK", mark)), ready, hangGuard)
	if !res.Cancelled || res.ExitCode != 137 {
		t.Errorf("res %+v, want cancelled and killed (137)", res)
	}
	proctest.NoSurvivors(t, mark)
}

// A hang deadline (a context deadline) ends the command the same way as a cancel.
func TestLocalDeadlineKillsEscapedProcesses(t *testing.T) {
	mark := proctest.Mark()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	res, err := runGuarded(t, Local{Grace: 100 * time.Millisecond}, ctx, sh(`setsid sleep `+mark+` & sleep `+mark))
	if err != nil || !res.Cancelled {
		t.Errorf("res %+v err %v", res, err)
	}
	proctest.NoSurvivors(t, mark)
}

// On cancel, the grace period lasts until every process of the command ended, not
// only its leader: a child that cleans up on TERM gets to finish, and Run returns then,
// not at the end of the grace period.
func TestLocalGraceWaitsForTheWholeTree(t *testing.T) {
	dir := t.TempDir()
	ready, cleaned := filepath.Join(dir, "ready"), filepath.Join(dir, "cleaned")
	// The leader dies at TERM at once; its child takes a moment to clean up.
	c := sh(`sh -c 'trap "sleep 0.5; touch ` + cleaned + `; exit 0" TERM; touch ` + ready + `; while :; do sleep 0.05; done' & wait`)
	res := cancelWhenReady(t, Local{Grace: time.Hour}, c, ready, hangGuard)
	if !res.Cancelled || res.ExitCode != 143 {
		t.Errorf("res %+v, want cancelled, leader ended by TERM (143)", res)
	}
	if _, err := os.Stat(cleaned); err != nil {
		t.Errorf("the child was killed before it finished its cleanup: %v", err)
	}
}

// --grace 0 means no grace: TERM then KILL at once, for a command that ignores TERM
// (the old meaning of 0 was a 20 s grace).
func TestLocalZeroGrace(t *testing.T) {
	mark := proctest.Mark()
	ready := filepath.Join(t.TempDir(), "ready")
	res := cancelWhenReady(t, Local{Grace: 0}, sh(`trap '' TERM; sleep `+mark+` & touch `+ready+`; wait`), ready, 10*time.Second)
	if !res.Cancelled || res.ExitCode != 137 {
		t.Errorf("res %+v, want killed (137)", res)
	}
	proctest.NoSurvivors(t, mark)
}

// A writer that fails (a full disk) neither blocks the command nor hides its exit:
// Run keeps reading, and says that the output was lost.
func TestLocalWriteErrorKeepsDraining(t *testing.T) {
	c := sh(`i=0; while [ $i -lt 2000 ]; do echo 0123456789012345678901234567890123456789; i=$((i+1)); done; exit 4`)
	c.Stdout = failingWriter{}
	res, err := runGuarded(t, Local{}, context.Background(), c)
	if res.ExitCode != 4 || err == nil || !strings.Contains(err.Error(), "writing its output: disk full") {
		t.Errorf("res %+v err %v", res, err)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// Stdout and stderr given as one writer share one pipe: their order is kept.
func TestLocalSharedWriterKeepsOrder(t *testing.T) {
	var out bytes.Buffer
	c := sh(`for i in 1 2 3 4 5; do echo o$i; echo e$i >&2; done`)
	c.Stdout, c.Stderr = &out, &out
	if _, err := (Local{}).Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if want := "o1\ne1\no2\ne2\no3\ne3\no4\ne4\no5\ne5\n"; out.String() != want {
		t.Errorf("out %q, want %q", out.String(), want)
	}
}

// Every command's environment carries its own mark, on top of what it was given.
func TestLocalMarksTheEnvironment(t *testing.T) {
	var a, b bytes.Buffer
	for _, w := range []*bytes.Buffer{&a, &b} {
		c := sh(`env | grep '^` + MarkPrefix + `'; echo "X=$X"`)
		c.Stdout = w
		if _, err := (Local{}).Run(context.Background(), c); err != nil {
			t.Fatal(err)
		}
	}
	for _, out := range []string{a.String(), b.String()} {
		if !strings.HasPrefix(out, MarkPrefix) || !strings.HasSuffix(out, "=1\nX=42\n") || strings.Count(out, "\n") != 2 {
			t.Errorf("output %q: want one mark and the given environment", out)
		}
	}
	if a.String() == b.String() {
		t.Errorf("two commands share the mark %q", a.String())
	}
}

// BenchmarkLocalRunTrue measures what every command pays for being run: the process,
// and since commands end when their program exits, the /proc scan for what it left.
func BenchmarkLocalRunTrue(b *testing.B) {
	var out bytes.Buffer
	c := Command{Path: "/bin/true", Stdout: &out, Stderr: &out}
	for b.Loop() {
		if res, err := (Local{}).Run(context.Background(), c); err != nil || res.ExitCode != 0 {
			b.Fatalf("%+v %v", res, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/run")
	b.ReportMetric(float64(len(procs())), "procs")
}

func procs() []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, e.Name())
		}
	}
	return out
}

// BenchmarkTreeMembers is the /proc scan alone, which every command's end pays once:
// a stat read per process (here none is younger than the command, so no environment
// is read).
func BenchmarkTreeMembers(b *testing.B) {
	t := &tree{pgid: -1, mark: []byte(NewMark()), since: ^uint64(0)}
	for b.Loop() {
		if _, err := t.members(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(procs())), "procs")
}

// readStat reads what /proc says of a known process: this one, and a child in a
// process group of its own.
func TestReadStat(t *testing.T) {
	self, err := readStat(os.Getpid())
	if err != nil || self.state != 'R' && self.state != 'S' || self.pgid != syscall.Getpgrp() || self.start == 0 {
		t.Errorf("self: %+v %v (pgrp %d)", self, err, syscall.Getpgrp())
	}
	cmd := exec.Command("sleep", "5")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	child, err := readStat(cmd.Process.Pid)
	if err != nil || child.pgid != cmd.Process.Pid || child.start < self.start {
		t.Errorf("child: %+v %v", child, err)
	}
	if _, err := readStat(1 << 30); err == nil {
		t.Error("a pid that does not exist was read")
	}
}
