package dockerexec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/rocm/sgpu-queue/internal/executor"
)

// hangGuard bounds how long a test waits for Run, so that a hang fails the test
// instead of the whole run; it is no speed requirement.
const hangGuard = 3 * time.Minute

type outcome struct {
	res executor.Result
	err error
}

// startItem runs script in the background and returns once it printed "ready PGID
// CHILD": the group its launcher made and a child it started.
func startItem(t *testing.T, e *Exec, ctx context.Context, script string) (pgid, child int, done <-chan outcome, out *watch) {
	t.Helper()
	out = newWatch("\n")
	ch := make(chan outcome, 1)
	go func() {
		r, err := e.Run(ctx, executor.Command{Path: "sh", Args: []string{"-c", script}, Stdout: out, Stderr: out})
		ch <- outcome{r, err}
	}()
	select {
	case <-out.seen:
	case o := <-ch:
		select {
		case <-out.seen:
			ch <- o // it was ready, and has ended already
		default:
			t.Fatalf("the item ended before it was ready: %+v %v, output %q", o.res, o.err, out.String())
		}
	case <-time.After(hangGuard):
		t.Fatal("the item never printed its ready line")
	}
	if _, err := fmt.Sscanf(out.String(), "ready %d %d", &pgid, &child); err != nil {
		t.Fatalf("ready line %q: %v", out.String(), err)
	}
	return pgid, child, ch, out
}

func wait(t *testing.T, done <-chan outcome) outcome {
	t.Helper()
	select {
	case o := <-done:
		return o
	case <-time.After(hangGuard):
		t.Fatal("Run did not return")
		return outcome{}
	}
}

// groupMembers lists the live (not zombie) processes of group pgid in the
// container, by ps there.
func groupMembers(t *testing.T, e *Exec, pgid int) []string {
	t.Helper()
	r := run(t, e, executor.Command{Path: "ps", Args: []string{"-o", "pid,pgid,stat,args"}})
	if r.runErr != nil || r.res.ExitCode != 0 {
		t.Fatalf("ps: %+v %v %s", r.res, r.runErr, r.err)
	}
	var live []string
	for _, line := range strings.Split(r.out, "\n")[1:] {
		f := strings.Fields(line)
		if len(f) >= 3 && f[1] == strconv.Itoa(pgid) && !strings.HasPrefix(f[2], "Z") {
			live = append(live, line)
		}
	}
	return live
}

func TestCancelStopsTheProcessGroup(t *testing.T) {
	cli := engine(t)
	target := startTarget(t, cli, nil, true)
	closed := make(chan struct{})
	close(closed)
	// Each item starts a child in its group and waits for it.
	const item = `sleep 300 & echo "ready $$ $!"; wait`
	tests := []struct {
		name   string
		script string
		grace  time.Duration
		force  <-chan struct{}
		code   int
	}{
		{name: "TERM ends it", script: item, grace: time.Hour, code: 143},
		{name: "KILL after the grace when TERM is ignored", script: `trap "" TERM; ` + item, grace: 200 * time.Millisecond, code: 137},
		{name: "Force cuts the grace short", script: `trap "" TERM; ` + item, grace: time.Hour, force: closed, code: 137},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newExec(t, cli, Options{Container: target, Grace: tt.grace, Force: tt.force})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			pgid, child, done, _ := startItem(t, e, ctx, tt.script)
			before := groupMembers(t, e, pgid)
			if !containsPid(before, child) || !containsPid(before, pgid) {
				t.Fatalf("before cancel, group %d is %q: want the item %d and its child %d", pgid, before, pgid, child)
			}
			cancel()
			o := wait(t, done)
			if o.err != nil {
				t.Fatalf("Run: %v", o.err)
			}
			if !o.res.Cancelled || o.res.ExitCode != tt.code || !o.res.Signaled {
				t.Errorf("result %+v, want cancelled, signaled, code %d", o.res, tt.code)
			}
			if left := groupMembers(t, e, pgid); len(left) != 0 {
				t.Errorf("group %d still has %q after cancel", pgid, left)
			}
		})
	}
}

// What an item leaves running when it ends is killed with it, as executor.Local does.
func TestLeftoversKilled(t *testing.T) {
	cli := engine(t)
	e := newExec(t, cli, Options{Container: startTarget(t, cli, nil, true)})
	pgid, child, done, _ := startItem(t, e, context.Background(), `sleep 300 >/dev/null 2>&1 & echo "ready $$ $!"; exit 4`)
	o := wait(t, done)
	if o.err != nil || o.res.ExitCode != 4 || o.res.Cancelled {
		t.Fatalf("Run: %+v %v", o.res, o.err)
	}
	if left := groupMembers(t, e, pgid); len(left) != 0 {
		t.Errorf("the item's child %d outlived it: %q", child, left)
	}
}

func TestCancelledBeforeStart(t *testing.T) {
	cli := engine(t)
	e := newExec(t, cli, Options{Container: startTarget(t, cli, nil, true)})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := newWatch("")
	res, err := e.Run(ctx, executor.Command{Path: "echo", Args: []string{"ran"}, Stdout: out})
	if err != nil || !res.Cancelled || res.ExitCode != 130 || out.String() != "" {
		t.Errorf("Run: %+v %v, output %q; want cancelled 130 and nothing run", res, err, out.String())
	}
}

// A container that dies under a running item: Run returns with ErrNotRunning, and
// later Runs fail at once with the same while it is down.
func TestContainerDiesMidRun(t *testing.T) {
	cli := engine(t)
	zero := 0
	tests := []struct {
		name string
		end  func(ctx context.Context, target string) error
		why  string // what the Run under it reports, where the engine's pace cannot change it
		next string // what the next Run reports ("" = it runs)
	}{
		{name: "killed", end: func(ctx context.Context, c string) error {
			_, err := cli.ContainerKill(ctx, c, client.ContainerKillOptions{Signal: "KILL"})
			return err
		}, why: "(exited with 137)", next: "is not running (exited with 137)"},
		{name: "stopped", end: func(ctx context.Context, c string) error {
			_, err := cli.ContainerStop(ctx, c, client.ContainerStopOptions{Timeout: &zero})
			return err
		}, why: "(exited with 137)", next: "is not running (exited with 137)"},
		{name: "removed", end: func(ctx context.Context, c string) error {
			_, err := cli.ContainerRemove(ctx, c, client.ContainerRemoveOptions{Force: true})
			return err
		}, next: "is not running ("}, // removing or removed, as the engine is at it
		{name: "restarted", end: func(ctx context.Context, c string) error {
			_, err := cli.ContainerRestart(ctx, c, client.ContainerRestartOptions{Timeout: &zero})
			return err
		}}, // exited or restarted, as the engine is at it
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target := startTarget(t, cli, nil, true)
			e := newExec(t, cli, Options{Container: target})
			_, _, done, _ := startItem(t, e, context.Background(), `sleep 300 & echo "ready $$ $!"; wait`)
			if err := tt.end(context.Background(), target); err != nil {
				t.Fatal(err)
			}
			o := wait(t, done)
			want := "container " + target + " stopped while the command ran " + tt.why
			if !errors.Is(o.err, ErrNotRunning) || !strings.Contains(o.err.Error(), want) || strings.Contains(o.err.Error(), "\n") {
				t.Fatalf("Run under it: %+v %v; want one line with %q", o.res, o.err, want)
			}
			r := run(t, e, executor.Command{Path: "echo", Args: []string{"ran"}})
			switch {
			case tt.next == "" && (r.runErr != nil || r.out != "ran\n"):
				t.Errorf("next Run: %+v %v %q, want it to run", r.res, r.runErr, r.out)
			case tt.next != "" && (!errors.Is(r.runErr, ErrNotRunning) || !strings.Contains(r.runErr.Error(), "container "+target+" "+tt.next)):
				t.Errorf("next Run: %+v %v; want %q", r.res, r.runErr, tt.next)
			}
		})
	}
}

func containsPid(lines []string, pid int) bool {
	for _, l := range lines {
		if f := strings.Fields(l); len(f) > 0 && f[0] == strconv.Itoa(pid) {
			return true
		}
	}
	return false
}

// BenchmarkRunTrue measures what every item pays for running in the container: two
// API round trips to create and start the exec, the launcher's shells, the exit status
// and the container check.
func BenchmarkRunTrue(b *testing.B) {
	cli := engine(b)
	e := newExec(b, cli, Options{Container: startTarget(b, cli, nil, true)})
	ctx := context.Background()
	for b.Loop() {
		res, err := e.Run(ctx, executor.Command{Path: "true"})
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("Run: %+v %v", res, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/exec")
}

// BenchmarkRawExecTrue is the engine's own cost for the same, without the launcher
// and the checks: the floor that BenchmarkRunTrue compares with.
func BenchmarkRawExecTrue(b *testing.B) {
	cli := engine(b)
	target := startTarget(b, cli, nil, true)
	ctx := context.Background()
	for b.Loop() {
		cr, err := cli.ExecCreate(ctx, target, client.ExecCreateOptions{AttachStdout: true, AttachStderr: true, Cmd: []string{"true"}})
		if err != nil {
			b.Fatal(err)
		}
		att, err := cli.ExecAttach(ctx, cr.ID, client.ExecAttachOptions{})
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, att.Reader)
		att.Close()
		if r, err := cli.ExecInspect(ctx, cr.ID, client.ExecInspectOptions{}); err != nil || r.ExitCode != 0 {
			b.Fatalf("inspect: %+v %v", r, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/exec")
}

// sleeping lists the live processes in the container whose command line is
// "sleep mark", by ps there.
func sleeping(t *testing.T, e *Exec, mark string) []string {
	t.Helper()
	r := run(t, e, executor.Command{Path: "ps", Args: []string{"-o", "pid,stat,args"}})
	if r.runErr != nil || r.res.ExitCode != 0 {
		t.Fatalf("ps: %+v %v %s", r.res, r.runErr, r.err)
	}
	var live []string
	for _, line := range strings.Split(r.out, "\n")[1:] {
		f := strings.Fields(line)
		if len(f) == 4 && !strings.HasPrefix(f[1], "Z") && f[2] == "sleep" && f[3] == mark {
			live = append(live, line)
		}
	}
	return live
}

// settled waits a moment for KILLed processes to be gone (delivery is at once, the
// exit a moment later) and returns what is still there.
func settled(t *testing.T, e *Exec, mark string) []string {
	t.Helper()
	var left []string
	// A generous bound: a busy machine may take a while to reap them.
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if left = sleeping(t, e, mark); len(left) == 0 {
			return nil
		}
	}
	return left
}

func sleepMark() string {
	return fmt.Sprintf("%d.%06d", 40+time.Now().Nanosecond()%20, time.Now().UnixNano()/1000%1000000)
}

// A process that left the group with setsid, found by the command's mark, dies when
// the command ends, and Run does not wait for the output it holds; the same on cancel,
// for one that ignores TERM, with no grace (Grace 0: KILL right after TERM).
func TestEscapedProcessesKilled(t *testing.T) {
	cli := engine(t)
	e := newExec(t, cli, Options{Container: startTarget(t, cli, nil, true)})
	mark := sleepMark()
	up := `until ps -o args | grep -qx "sleep ` + mark + `"; do sleep 0.05; done`
	_, _, done, _ := startItem(t, e, context.Background(), `setsid sleep `+mark+` & `+up+`; echo "ready $$ $!"; exit 4`)
	o := wait(t, done)
	if o.err != nil || o.res.ExitCode != 4 || o.res.Cancelled {
		t.Fatalf("Run: %+v %v", o.res, o.err)
	}
	if left := settled(t, e, mark); len(left) != 0 {
		t.Errorf("the escaped process outlived the item: %q", left)
	}

	e0 := newExec(t, cli, Options{Container: e.id, Grace: 0})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, _, done, _ = startItem(t, e0, ctx, `trap "" TERM; setsid sleep `+mark+` & `+up+`; echo "ready $$ $!"; wait`)
	cancel()
	select {
	case o = <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("a zero grace still waited") // the old meaning of 0 was 20 s
	}
	if o.err != nil || !o.res.Cancelled || o.res.ExitCode != 137 {
		t.Errorf("Run: %+v %v, want cancelled and killed (137)", o.res, o.err)
	}
	if left := settled(t, e, mark); len(left) != 0 {
		t.Errorf("the escaped process outlived the cancel: %q", left)
	}
}

// One that cleared its environment as well cannot be found: the output it holds is
// read for outputWait after the launcher ended, then cut, with a warning naming the
// command.
func TestUnfindableHolderBounded(t *testing.T) {
	cli := engine(t)
	var warned []string
	var mu sync.Mutex
	e := newExec(t, cli, Options{Container: startTarget(t, cli, nil, true), Warn: func(s string) {
		mu.Lock()
		defer mu.Unlock()
		warned = append(warned, s)
	}})
	mark := sleepMark()
	out := newWatch("")
	res, err := e.Run(context.Background(), executor.Command{Name: "item s/t", Path: "sh", Stdout: out, Stderr: out,
		Args: []string{"-c", `env -i setsid sleep ` + mark + ` & until ps -o args | grep -qx "sleep ` + mark + `"; do sleep 0.05; done; echo out; exit 0`}})
	if err != nil || res.ExitCode != 0 {
		t.Errorf("Run: %+v %v", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(warned) != 1 || !strings.HasPrefix(warned[0], "item s/t left a process holding its output that could not be found") {
		t.Errorf("warnings %q", warned)
	}
	if !strings.HasPrefix(out.String(), "out\n") || !strings.Contains(out.String(), "sgpu-queue: left a process holding its output") {
		t.Errorf("log %q", out.String())
	}
}
