package dockerexec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/rocm/sgpu-queue/internal/dockerexec/dockertest"
	"github.com/rocm/sgpu-queue/internal/executor"
)

func engine(t testing.TB) *client.Client { return dockertest.Engine(t) }

func uniqueName(t testing.TB) string { return dockertest.UniqueName(t) }

func startTarget(t testing.TB, cli *client.Client, binds []string, start bool) string {
	return dockertest.Start(t, cli, binds, nil, start)
}

func newExec(t testing.TB, cli *client.Client, o Options) *Exec {
	t.Helper()
	o.Client = cli
	e, err := New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// watch is a goroutine-safe output buffer that can wait for a piece of text.
type watch struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
}

func newWatch(want string) *watch { return &watch{want: want, seen: make(chan struct{})} }

func (w *watch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	had := w.want != "" && strings.Contains(w.buf.String(), w.want)
	w.buf.Write(p)
	if !had && w.want != "" && strings.Contains(w.buf.String(), w.want) {
		close(w.seen)
	}
	return len(p), nil
}

func (w *watch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

type ran struct {
	out, err string
	res      executor.Result
	runErr   error
}

func run(t testing.TB, e *Exec, c executor.Command) ran {
	t.Helper()
	var o, s bytes.Buffer
	c.Stdout, c.Stderr = &o, &s
	res, err := e.Run(context.Background(), c)
	return ran{o.String(), s.String(), res, err}
}

func TestRunInContainer(t *testing.T) {
	cli := engine(t)
	e := newExec(t, cli, Options{Container: startTarget(t, cli, nil, true)})
	sh := func(script string) executor.Command {
		return executor.Command{Path: "sh", Args: []string{"-c", script}}
	}
	tests := []struct {
		name     string
		cmd      executor.Command
		out, err string
		code     int
		signaled bool
	}{
		{name: "exit 0", cmd: executor.Command{Path: "true"}},
		{name: "exit 1", cmd: executor.Command{Path: "false"}, code: 1},
		{name: "exit 3 with both streams", cmd: sh("echo to-out; echo to-err >&2; exit 3"), out: "to-out\n", err: "to-err\n", code: 3},
		{name: "segfault", cmd: sh("kill -SEGV $$"), code: 139, signaled: true},
		{name: "absolute program", cmd: executor.Command{Path: "/bin/echo", Args: []string{"a b", "c"}}, out: "a b c\n"},
		{name: "arguments kept apart", cmd: executor.Command{Path: "printf", Args: []string{"<%s>", "x y", "", "$HOME", "'q'"}}, out: "<x y><><$HOME><'q'>"},
		{name: "env passed", cmd: func() executor.Command {
			c := sh(`echo "$SGPU_A|$SGPU_B|$PATH"`)
			c.Env = []string{"SGPU_A=one two", "SGPU_B=", "PATH=/bin"}
			return c
		}(), out: "one two||/bin\n"},
		{name: "container env is the base", cmd: sh(`echo "$PATH"`), out: "/bin\n"},
		{name: "working dir", cmd: func() executor.Command { c := sh("pwd"); c.Dir = "/tmp"; return c }(), out: "/tmp\n"},
		{name: "default working dir", cmd: sh("pwd"), out: "/\n"},
		{name: "stderr that looks like a report", cmd: sh(`printf '\036sgpu-queue:pgid=7\n' >&2`), err: "\x1esgpu-queue:pgid=7\n"},
		{name: "script exiting 127 is a failure, not a missing program", cmd: sh("exit 127"), code: 127},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, e, tt.cmd)
			if r.runErr != nil {
				t.Fatalf("Run: %v", r.runErr)
			}
			if r.res.ExitCode != tt.code || r.res.Signaled != tt.signaled || r.res.Cancelled {
				t.Errorf("result %+v, want code %d signaled %v", r.res, tt.code, tt.signaled)
			}
			if r.out != tt.out || r.err != tt.err {
				t.Errorf("stdout %q stderr %q, want %q %q", r.out, r.err, tt.out, tt.err)
			}
		})
	}
}

func TestRunCannotStart(t *testing.T) {
	cli := engine(t)
	e := newExec(t, cli, Options{Container: startTarget(t, cli, nil, true)})
	tests := []struct {
		name     string
		cmd      executor.Command
		notFound bool
		msg      string
	}{
		{name: "missing program", cmd: executor.Command{Path: "no-such-program"}, notFound: true, msg: "no-such-program: command not found in container"},
		{name: "missing absolute program", cmd: executor.Command{Path: "/bin/no-such-program"}, notFound: true, msg: "not on its PATH"},
		{name: "not executable", cmd: executor.Command{Path: "/etc/passwd"}, notFound: true, msg: "command not found"},
		{name: "missing working dir", cmd: executor.Command{Path: "true", Dir: "/no/such/dir"}, msg: "working directory /no/such/dir does not exist in container"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, e, tt.cmd)
			if r.runErr == nil {
				t.Fatalf("Run succeeded: %+v", r.res)
			}
			if got := errors.Is(r.runErr, executor.ErrNotFound); got != tt.notFound {
				t.Errorf("errors.Is(ErrNotFound) = %v for %v", got, r.runErr)
			}
			if !strings.Contains(r.runErr.Error(), tt.msg) || strings.Contains(r.runErr.Error(), "\n") {
				t.Errorf("error %q, want one line with %q", r.runErr, tt.msg)
			}
			if r.err != "" || r.out != "" {
				t.Errorf("output %q %q, want none", r.out, r.err)
			}
		})
	}
}

// A large output arrives intact and in order, stdout and stderr apart.
func TestLargeOutput(t *testing.T) {
	cli := engine(t)
	e := newExec(t, cli, Options{Container: startTarget(t, cli, nil, true)})
	const size = 20 << 20
	line := "0123456789abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ sgpu-queue"
	r := run(t, e, executor.Command{Path: "sh", Args: []string{"-c",
		`yes "$1" | head -c "$2"; i=0; while [ $i -lt 1000 ]; do echo "err $i" >&2; i=$((i+1)); done`,
		"sh", line, "20971520"}})
	if r.runErr != nil || r.res.ExitCode != 0 {
		t.Fatalf("Run: %+v %v", r.res, r.runErr)
	}
	want := strings.Repeat(line+"\n", size/(len(line)+1)+1)[:size]
	if r.out != want {
		t.Errorf("stdout: %d bytes, want %d; first difference at %d", len(r.out), size, firstDiff(r.out, want))
	}
	var we strings.Builder
	for i := range 1000 {
		we.WriteString("err " + strconv.Itoa(i) + "\n")
	}
	if r.err != we.String() {
		t.Errorf("stderr: %d bytes, want %d; first difference at %d", len(r.err), we.Len(), firstDiff(r.err, we.String()))
	}
}

// The workspace is a host directory mounted at another path in the target: the
// mapper translates the program, the working dir and what the engine puts in env.
func TestBindMountedWorkspace(t *testing.T) {
	cli := engine(t)
	ws := t.TempDir()
	target := startTarget(t, cli, []string{ws + ":/ws"}, true)
	sharesFiles(t, cli, target, ws, "/ws")

	// This process runs on the host: no self container (HOSTNAME names none).
	m, err := DiscoverMapper(context.Background(), cli, "sgpu-no-such-self-"+uniqueName(t), target, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ws, "ci"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ws, "logs", "item-1"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(ws, "ci", "item.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\npwd\necho \"$JUNITXML_PREFIX\"\necho written > result.txt\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	prefix, err := m.ToTarget(filepath.Join(ws, "test-results") + "/")
	if err != nil {
		t.Fatal(err)
	}
	e := newExec(t, cli, Options{Container: target, Mapper: m})
	r := run(t, e, executor.Command{Path: script, Dir: filepath.Join(ws, "logs", "item-1"), Env: []string{"JUNITXML_PREFIX=" + prefix + "/"}})
	if r.runErr != nil || r.res.ExitCode != 0 {
		t.Fatalf("Run: %+v %v (stderr %q)", r.res, r.runErr, r.err)
	}
	if want := "/ws/logs/item-1\n/ws/test-results/\n"; r.out != want {
		t.Errorf("stdout %q, want %q", r.out, want)
	}
	got, err := os.ReadFile(filepath.Join(ws, "logs", "item-1", "result.txt"))
	if err != nil || string(got) != "written\n" {
		t.Errorf("the file the item wrote, seen from here: %q, %v", got, err)
	}
	// A path on no shared mount is refused before anything runs.
	outside := t.TempDir()
	r = run(t, e, executor.Command{Path: "true", Dir: outside})
	if r.runErr == nil || !strings.Contains(r.runErr.Error(), outside+" is on no mount shared with container "+target) ||
		!strings.Contains(r.runErr.Error(), "--container-workdir") {
		t.Errorf("Run outside the mount: %v", r.runErr)
	}
}

// sharesFiles skips the test when the engine does not see this process's files (an
// engine on another machine): a bind mount of a local directory then shows others.
func sharesFiles(t *testing.T, cli *client.Client, target, local, inside string) {
	t.Helper()
	token := uniqueName(t)
	if err := os.WriteFile(filepath.Join(local, ".probe"), []byte(token), 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(filepath.Join(local, ".probe"))
	e := newExec(t, cli, Options{Container: target})
	if r := run(t, e, executor.Command{Path: "cat", Args: []string{inside + "/.probe"}}); r.out != token {
		t.Skipf("the Docker engine does not share this process's filesystem (%q, %v): bind-mount tests need a local engine", r.out, r.runErr)
	}
}

func TestNewRefusesUnusableContainer(t *testing.T) {
	cli := engine(t)
	stopped := startTarget(t, cli, nil, false)
	missing := uniqueName(t)
	tests := []struct{ name, container, msg string }{
		{"missing", missing, "container " + missing + " does not exist"},
		{"stopped", stopped, "container " + stopped + " is not running (created)"},
		{"none given", "", "no container given"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(context.Background(), Options{Container: tt.container, Client: cli})
			if err == nil || !strings.Contains(err.Error(), tt.msg) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("New: %v, want one line with %q", err, tt.msg)
			}
			if tt.container != "" && !errors.Is(err, ErrNotRunning) {
				t.Errorf("New: %v does not wrap ErrNotRunning", err)
			}
		})
	}
}

func firstDiff(a, b string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// Discovery against real containers: a "self" container with the workspace at
// /github/workspace (as the runner mounts it into a container action), found by its
// short id (its HOSTNAME), and a target with a subdirectory of it at /workspace. A
// file written through the one path is read through the translated one.
func TestDiscoverFromContainer(t *testing.T) {
	cli := engine(t)
	ws := t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, "repo"), 0o777); err != nil {
		t.Fatal(err)
	}
	self := startTarget(t, cli, []string{ws + ":/github/workspace"}, true)
	target := startTarget(t, cli, []string{filepath.Join(ws, "repo") + ":/workspace"}, true)
	si, err := cli.ContainerInspect(context.Background(), self, client.ContainerInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hostname := si.Container.ID[:12]
	m, err := DiscoverMapper(context.Background(), cli, hostname, target, "", "")
	if err != nil {
		t.Fatal(err)
	}
	local := "/github/workspace/repo/ci-logs/item-1/out.txt"
	p, err := m.ToTarget(local)
	if err != nil || p != "/workspace/ci-logs/item-1/out.txt" {
		t.Fatalf("ToTarget(%q) = %q, %v", local, p, err)
	}
	token := uniqueName(t)
	w := run(t, newExec(t, cli, Options{Container: self}), executor.Command{Path: "sh", Args: []string{"-c",
		`mkdir -p "$(dirname "$1")" && echo "$2" > "$1"`, "sh", local, token}})
	if w.runErr != nil || w.res.ExitCode != 0 {
		t.Fatalf("write in self: %+v %v %s", w.res, w.runErr, w.err)
	}
	r := run(t, newExec(t, cli, Options{Container: target}), executor.Command{Path: "cat", Args: []string{p}})
	if r.runErr != nil || r.out != token+"\n" {
		t.Errorf("read in target: %q %+v %v %s", r.out, r.res, r.runErr, r.err)
	}
	if _, err := m.ToTarget("/github/workspace/elsewhere"); err == nil || !strings.Contains(err.Error(), "no mount of "+target+" holds host path "+filepath.Join(ws, "elsewhere")) {
		t.Errorf("ToTarget outside the shared part: %v", err)
	}
}

// A container that lacks what the launcher needs gets a clear error, not a hang or a
// bare exit code. (Busybox's sh runs its setsid applet even with /bin/setsid gone, so
// the "no setsid" report is covered by TestMarker only.)
func TestContainerWithoutLauncherTools(t *testing.T) {
	cli := engine(t)
	tests := []struct{ name, remove, msg string }{
		{"no shell", "/bin/sh", "could not start /bin/sh (exit 126): sgpu-queue needs a POSIX shell there"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target := startTarget(t, cli, nil, true)
			e := newExec(t, cli, Options{Container: target})
			if r := run(t, e, executor.Command{Path: "rm", Args: []string{tt.remove}}); r.runErr != nil || r.res.ExitCode != 0 {
				t.Fatalf("rm %s: %+v %v", tt.remove, r.res, r.runErr)
			}
			r := run(t, e, executor.Command{Path: "true"})
			if r.runErr == nil || !strings.Contains(r.runErr.Error(), tt.msg) || errors.Is(r.runErr, executor.ErrNotFound) {
				t.Errorf("Run: %+v %v; want an error with %q", r.res, r.runErr, tt.msg)
			}
		})
	}
}

func TestNewHonoursDockerHost(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix:///nonexistent/sgpu-docker.sock")
	_, err := New(context.Background(), Options{Container: "te"})
	if err == nil || !strings.Contains(err.Error(), "cannot reach the Docker engine to find container te") ||
		!strings.Contains(err.Error(), "/nonexistent/sgpu-docker.sock") {
		t.Errorf("New: %v", err)
	}
}

// One Exec serves all workers at once; each command keeps its own streams and status.
func TestConcurrentRuns(t *testing.T) {
	cli := engine(t)
	e := newExec(t, cli, Options{Container: startTarget(t, cli, nil, true)})
	const n = 6
	var wg sync.WaitGroup
	got := make([]ran, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = run(t, e, executor.Command{Path: "sh", Args: []string{"-c", `i=0; while [ $i -lt 200 ]; do echo "$1 $i"; echo "$1" >&2; i=$((i+1)); done; exit "$1"`, "sh", strconv.Itoa(i)}})
		}()
	}
	wg.Wait()
	for i, r := range got {
		var out, errs strings.Builder
		for j := range 200 {
			fmt.Fprintf(&out, "%d %d\n", i, j)
			fmt.Fprintf(&errs, "%d\n", i)
		}
		if r.runErr != nil || r.res.ExitCode != i || r.out != out.String() || r.err != errs.String() {
			t.Errorf("item %d: %+v %v, %d bytes out, %d err", i, r.res, r.runErr, len(r.out), len(r.err))
		}
	}
}

// Every command gets a soft RLIMIT_CORE of 0 with NoCoreDumps, however the container
// was started (docker run --ulimit core=-1, or a daemon whose default is unlimited),
// and the container's limit without it: an exec cannot be given an rlimit through the
// API, so the launcher sets it (docs/hooks.md "Core dumps").
func TestCoreLimit(t *testing.T) {
	cli := engine(t)
	host := &container.HostConfig{Resources: container.Resources{Ulimits: []*container.Ulimit{{Name: "core", Soft: -1, Hard: -1}}}}
	name := dockertest.StartConfig(t, cli, &container.Config{}, host, true)
	for _, c := range []struct {
		noCore bool
		want   string
	}{{true, "0 unlimited\n"}, {false, "unlimited unlimited\n"}} {
		e := newExec(t, cli, Options{Container: name, NoCoreDumps: c.noCore})
		r := run(t, e, executor.Command{Path: "sh", Args: []string{"-c", `echo "$(ulimit -S -c) $(ulimit -H -c)"`}})
		if r.runErr != nil || r.out != c.want {
			t.Errorf("NoCoreDumps %v: soft and hard core limit %q (%v), want %q", c.noCore, r.out, r.runErr, c.want)
		}
	}
}
