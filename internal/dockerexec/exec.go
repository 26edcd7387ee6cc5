// Package dockerexec runs commands inside another running container through the Docker Engine API exec
// (docs/action.md). A small sh launcher makes each program a process-group leader and reports the group, so a
// second exec can signal it (the API cannot kill an exec), and sweeps what the program left, as executor.Local does.
// Run maps Command.Dir and Path; whoever puts a path in Args or Env maps it with Mapper.ToTarget.
package dockerexec

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"

	"github.com/rocm/sgpu-queue/internal/executor"
	"github.com/rocm/sgpu-queue/internal/exitcode"
)

// ErrNotRunning wraps errors for a target container missing, stopped or restarted; it matches
// executor.ErrUnavailable, so dispatch stops instead of failing every item.
var ErrNotRunning error = notRunning{}

type notRunning struct{}

func (notRunning) Error() string        { return "container not running" }
func (notRunning) Is(target error) bool { return target == executor.ErrUnavailable }

// Options configure an Exec.
type Options struct {
	Container string          // name or id of the running target container
	Grace     time.Duration   // TERM → KILL on cancel (0 = none: KILL right after TERM)
	Force     <-chan struct{} // closed: cut grace short
	Mapper    *Mapper         // path translation; nil = identity
	Warn      func(string)    // hears about a command that left its output held; nil = none
	// NoCoreDumps runs every command with a soft RLIMIT_CORE of 0, whatever the container was started with.
	NoCoreDumps bool
	// Client talks to the engine; nil makes one (NewClient), which Close closes.
	Client *client.Client
}

// Exec is an executor.Executor that runs commands inside one running container.
type Exec struct {
	o         Options
	cli       *client.Client
	ownCli    bool
	id        string
	startedAt string // the container's start, to notice a restart under a command
	env       []string
}

var _ executor.Executor = (*Exec)(nil)

// apiTimeout bounds each control call: a daemon that stops answering must not hang the run.
const apiTimeout = 60 * time.Second

// containerGoneWait is how long a container whose launcher was lost gets to show that it stopped.
const containerGoneWait = 10 * time.Second

// killWait is how long a command may take to end after KILL before Run gives up on it.
const killWait = 30 * time.Second

// checkWait is how long the stream may end by itself after the last report before Run asks the engine.
const checkWait = 200 * time.Millisecond

// outputWait bounds reading the stream after the launcher ended; shorter than Docker's own 2 s, so the warning
// always comes.
const outputWait = time.Second

// NewClient connects to the engine the environment names (DOCKER_HOST…), negotiating the API version.
func NewClient() (*client.Client, error) {
	cli, err := client.New(client.FromEnv)
	if err != nil {
		return nil, fmt.Errorf("docker client: %w (check DOCKER_HOST)", err)
	}
	return cli, nil
}

// New connects and checks that the container exists and runs.
func New(ctx context.Context, o Options) (*Exec, error) {
	e := &Exec{o: o, cli: o.Client}
	if e.cli == nil {
		cli, err := NewClient()
		if err != nil {
			return nil, err
		}
		e.cli, e.ownCli = cli, true
	}
	ictx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	t, err := inspectTarget(ictx, e.cli, o.Container)
	if err == nil && (t.Container.State == nil || !t.Container.State.Running) {
		err = fmt.Errorf("container %s is not running (%s): start it before sgpu-queue: %w", o.Container, status(t), ErrNotRunning)
	}
	if err != nil {
		_ = e.Close()
		return nil, err
	}
	e.id = t.Container.ID
	e.startedAt = t.Container.State.StartedAt
	if t.Container.Config != nil {
		e.env = t.Container.Config.Env
	}
	return e, nil
}

// Close releases the connection to the engine when New made it.
func (e *Exec) Close() error {
	if e.ownCli && e.cli != nil {
		return e.cli.Close()
	}
	return nil
}

// Mapper is the path translation Run applies (nil = identity).
func (e *Exec) Mapper() *Mapper { return e.o.Mapper }

// ContainerEnv is the target's own environment, which an exec starts from: build items' environments on it.
func (e *Exec) ContainerEnv() []string { return append([]string(nil), e.env...) }

// launcher runs as: sh -c launcher sgpu-queue DIR MARK CORE PROG ARGS…. It sets the core limit (an exec takes no
// rlimit), enters DIR, starts PROG in a new session reporting its group, with MARK in its environment; when PROG
// ends it sweeps the group and MARK twice and exits with PROG's status after reporting it. Its own stderr is
// /dev/null, keeping "Killed" out of the log, and it has no MARK, so the sweep spares it.
const launcher = `d=$1; m=$2; c=$3; shift 3
if [ -n "$c" ]; then ulimit -S -c "$c" 2>/dev/null || ulimit -c "$c" 2>/dev/null; fi
if [ -n "$d" ]; then cd "$d" 2>/dev/null || { printf '\036sgpu-queue:nodir\n' >&2; exit 126; }; fi
command -v setsid >/dev/null 2>&1 || { printf '\036sgpu-queue:nosetsid\n' >&2; exit 126; }
exec 3>&1 4>&2 2>/dev/null
g=$(setsid /bin/sh -c 'exec 2>&4 4>&-
export "$1"; shift
command -v "$1" >/dev/null 2>&1 || { printf "\036sgpu-queue:notfound\n" >&2; exit 127; }
printf "\036sgpu-queue:pgid=%s\n" $$ >&2
echo $$
exec "$@" >&3 3>&-' sgpu-queue "$m" "$@")
rc=$?
[ -n "$g" ] && kill -KILL -"$g"
` + sweep + `
` + sweep + `
printf '\036sgpu-queue:exit=%s\n' "$rc" >&4
exit $rc`

// sweep signals (default KILL) every process whose environment carries the mark $m: those that left the group.
const sweep = `for p in $(grep -l "$m" /proc/[0-9]*/environ 2>/dev/null); do p=${p#/proc/}; ` +
	`kill -${s:-KILL} "${p%/environ}" 2>/dev/null; done`

// Run implements executor.Executor. Signaled is inferred from codes 129…159. A missing program is reported by the
// launcher as executor.ErrNotFound, so a script that itself exits 127 stays a plain failure.
func (e *Exec) Run(ctx context.Context, c executor.Command) (executor.Result, error) {
	if ctx.Err() != nil {
		return executor.Result{ExitCode: exitcode.Interrupted, Cancelled: true}, nil
	}
	dir, prog, err := e.targets(c)
	if err != nil {
		return executor.Result{}, err
	}
	// The command outlives ctx by its grace period: API calls use their own deadlines.
	bg := context.WithoutCancel(ctx)
	mark := executor.NewMark()
	execID, att, err := e.start(bg, c, dir, prog, mark)
	if err != nil {
		return executor.Result{}, err
	}
	defer att.Close()

	stdout := &executor.Sink{W: c.Stdout}
	stderr := &executor.Sink{W: c.Stderr}
	mk := newMarker(stderr)
	copied := make(chan error, 1)
	go func() {
		_, err := stdcopy.StdCopy(stdout, mk, att.Reader)
		copied <- err
	}()
	w := &waiter{e: e, ctx: bg, mk: mk, copied: copied, att: &att, execID: execID, mark: mark}
	streamErr := w.await(ctx)
	// Once the copy has ended, mk, stdout and stderr are this goroutine's again.
	_ = mk.finish()
	if w.held && !w.cancelled {
		c.Note(e.o.Warn, executor.UnfoundHolder(outputWait))
	}
	res, err := e.result(bg, c, dir, w, streamErr)
	if err != nil {
		return res, err
	}
	if err := errors.Join(stdout.Err, stderr.Err); err != nil {
		return res, fmt.Errorf("%s: writing its output: %w", c.Path, err)
	}
	return res, nil
}

// targets are the command's dir and program as the target names them; a bare name stays for its PATH.
func (e *Exec) targets(c executor.Command) (dir, prog string, err error) {
	dir, prog = c.Dir, c.Path
	if dir != "" {
		if dir, err = e.o.Mapper.ToTarget(dir); err != nil {
			return "", "", fmt.Errorf("working directory: %w", err)
		}
	}
	if path.IsAbs(prog) {
		if prog, err = e.o.Mapper.ToTarget(prog); err != nil {
			return "", "", fmt.Errorf("program: %w", err)
		}
	}
	return dir, prog, nil
}

// start creates the command's exec and attaches to its stream, which starts it; only those two calls follow ctx.
func (e *Exec) start(ctx context.Context, c executor.Command, dir, prog, mark string) (string, client.ExecAttachResult, error) {
	cctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	core := ""
	if e.o.NoCoreDumps {
		core = "0"
	}
	cmd := append([]string{"/bin/sh", "-c", launcher, "sgpu-queue", dir, mark, core, prog}, c.Args...)
	cr, err := e.cli.ExecCreate(cctx, e.id, client.ExecCreateOptions{
		AttachStdout: true, AttachStderr: true, Env: c.Env, Cmd: cmd,
	})
	if err != nil {
		return "", client.ExecAttachResult{}, e.explain(ctx, c.Path, err)
	}
	att, err := e.cli.ExecAttach(cctx, cr.ID, client.ExecAttachOptions{})
	if err != nil {
		return "", client.ExecAttachResult{}, e.explain(ctx, c.Path, err)
	}
	return cr.ID, att, nil
}

// result is how the command ended: the exit code, and the error its reports or the container's state say.
func (e *Exec) result(ctx context.Context, c executor.Command, dir string, w *waiter, streamErr error) (executor.Result, error) {
	res := executor.Result{Cancelled: w.cancelled}
	if errors.Is(streamErr, errAbandoned) {
		res.ExitCode = exitcode.Killed
		return res, fmt.Errorf("%s: %w in container %s", c.Path, streamErr, e.o.Container)
	}
	mk := w.mk
	// Without the last report the launcher was killed, likely with the container: the exit code means nothing.
	if orderly := mk.ended || w.launcherEnded || mk.kind == markNoDir || mk.kind == markNoSetsid; !orderly {
		if err := e.launcherLost(ctx, w.execID, mk.kind); err != nil {
			return res, fmt.Errorf("%s: %w", c.Path, err)
		}
	}
	code, running, ierr := e.exitCode(ctx, w.execID)
	switch {
	case ierr != nil:
		return res, fmt.Errorf("%s: cannot read the exit status in container %s: %w", c.Path, e.o.Container, ierr)
	case running:
		return res, fmt.Errorf("%s: the output stream from container %s ended (%w) while the command still runs", c.Path, e.o.Container,
			streamErr)
	}
	res.ExitCode = code
	res.Signaled = code > 128 && code < 160
	return res, e.reported(c, dir, mk.kind, code)
}

// launcherLost checks the container after a stream without the last report: sh could not start (126, 127: one look)
// or the container died (worth waiting for the engine).
func (e *Exec) launcherLost(ctx context.Context, execID, kind string) error {
	wait := kind != markNone
	if code, running, err := e.exitCode(ctx, execID); !wait && err == nil && !running && code != exitcode.CannotRun &&
		code != exitcode.NotFound {
		wait = true
	}
	return e.checkAfter(ctx, wait)
}

// reported is the error the launcher's first report means; nil when the program ran.
func (e *Exec) reported(c executor.Command, dir, kind string, code int) error {
	switch kind {
	case markNotFound:
		return fmt.Errorf("%s: %w in container %s (not on its PATH, or not executable)", c.Path, executor.ErrNotFound, e.o.Container)
	case markNoDir:
		return fmt.Errorf("working directory %s does not exist in container %s: %s", dir, e.o.Container, mountHint)
	case markNoSetsid:
		return fmt.Errorf("container %s has no setsid (util-linux or busybox) on its PATH: sgpu-queue needs it to stop commands on cancel",
			e.o.Container)
	case markNone:
		if code == exitcode.CannotRun || code == exitcode.NotFound {
			return fmt.Errorf("%s: container %s could not start /bin/sh (exit %d): sgpu-queue needs a POSIX shell there", c.Path,
				e.o.Container, code)
		}
	}
	return nil
}

const mountHint = "the directory must be on a mount both containers share (see --container-workdir)"

var errAbandoned = errors.New("the command did not end after KILL; left behind")

// waiter follows one command to its end: the stream's end, a cancel, or the launcher's end with the stream still
// held. Only Run's goroutine uses it, so it needs no lock.
type waiter struct {
	e      *Exec
	ctx    context.Context // for API calls: outlives the command's
	mk     *marker
	copied <-chan error
	att    *client.ExecAttachResult
	execID string
	mark   string

	cancelled     bool // the command's context ended first and it was stopped
	held          bool // the stream was cut outputWait after the launcher ended
	launcherEnded bool // the engine said the launcher ended
}

// await returns the stream's error once it ended, or errAbandoned when the command outlived KILL.
func (w *waiter) await(ctx context.Context) error {
	done := ctx.Done()
	var grace, kill, check, drain <-chan time.Time
	var force <-chan struct{}
	for {
		select {
		case err := <-w.copied:
			return err
		case <-done:
			done, w.cancelled = nil, true
			// Before the report nothing of the program runs; it comes at once.
			select {
			case <-w.mk.ready:
			case err := <-w.copied:
				return err
			}
			if w.mk.kind == markPgid {
				w.signal("TERM")
				grace, force = time.After(w.e.o.Grace), w.e.o.Force
			}
		case <-grace:
			grace, force, kill = nil, nil, w.kill()
		case <-force:
			grace, force, kill = nil, nil, w.kill()
		case <-kill:
			// A process stuck in the kernel (a hung GPU driver) ignores KILL: stop waiting rather than hang the run.
			w.cut()
			return errAbandoned
		case <-w.mk.hint:
			check = time.After(checkWait)
		case <-check:
			check = nil
			if r, err := w.e.inspect(w.ctx, w.execID); err == nil && !r.Running {
				w.launcherEnded = true
				drain = time.After(outputWait)
			}
		case <-drain:
			w.held = true
			return w.cut()
		}
	}
}

// kill sends KILL and returns the timer of killWait.
func (w *waiter) kill() <-chan time.Time {
	w.signal("KILL")
	return time.After(killWait)
}

// cut stops reading the stream and returns how its copy ended.
func (w *waiter) cut() error {
	w.att.Close()
	return <-w.copied
}

// signal sends sig to the command's process group and its marked processes.
func (w *waiter) signal(sig string) {
	w.e.signal(w.ctx, w.mk.pgid, w.mark, sig)
}

// signal sends sig to group pgid and every process carrying mark, by a second exec.
func (e *Exec) signal(ctx context.Context, pgid int, mark, sig string) {
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	script := `m=$1; s=$2; kill -$s -` + strconv.Itoa(pgid) + ` 2>/dev/null; ` + sweep
	cr, err := e.cli.ExecCreate(ctx, e.id, client.ExecCreateOptions{
		Cmd: []string{"/bin/sh", "-c", script, "sgpu-queue", mark, sig},
	})
	if err != nil {
		return // the container is gone: its stream ends, and Run says so
	}
	_, _ = e.cli.ExecStart(ctx, cr.ID, client.ExecStartOptions{Detach: true})
}

// inspect asks the engine once about an exec.
func (e *Exec) inspect(ctx context.Context, id string) (client.ExecInspectResult, error) {
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	return e.cli.ExecInspect(ctx, id, client.ExecInspectOptions{})
}

// exitCode reads the exec's status, asking again briefly as the engine may record it after the stream ended.
func (e *Exec) exitCode(ctx context.Context, id string) (code int, running bool, err error) {
	delay := time.Millisecond
	for deadline := time.Now().Add(5 * time.Second); ; {
		r, err := e.inspect(ctx, id)
		if err != nil || !r.Running || time.Now().After(deadline) {
			return r.ExitCode, r.Running, err
		}
		time.Sleep(delay)
		delay = min(2*delay, 100*time.Millisecond)
	}
}

// gone tells whether the container was removed, stopped or restarted; "" when it still runs.
func (e *Exec) gone(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	t, err := inspectTarget(ctx, e.cli, e.id)
	switch {
	case errors.Is(err, ErrNotRunning):
		return "removed", nil
	case err != nil:
		return "", err
	case t.Container.State == nil || !t.Container.State.Running:
		return status(t), nil
	case t.Container.State.StartedAt != e.startedAt:
		return "restarted", nil
	}
	return "", nil
}

// checkAfter checks a container after a stream without the last report, waiting up to containerGoneWait when wait.
func (e *Exec) checkAfter(ctx context.Context, wait bool) error {
	delay := 10 * time.Millisecond
	deadline := time.Now().Add(containerGoneWait)
	for {
		why, err := e.gone(ctx)
		if err != nil {
			return fmt.Errorf("cannot check container %s after the command: %w", e.o.Container, err)
		}
		if why != "" {
			return fmt.Errorf("container %s stopped while the command ran (%s): %w", e.o.Container, why, ErrNotRunning)
		}
		if !wait || time.Now().After(deadline) {
			return nil
		}
		time.Sleep(delay)
		delay = min(2*delay, 500*time.Millisecond)
	}
}

// explain turns a failed exec create/attach into a clear error.
func (e *Exec) explain(ctx context.Context, prog string, err error) error {
	if why, _ := e.gone(ctx); why != "" {
		return fmt.Errorf("%s: container %s is not running (%s): %w", prog, e.o.Container, why, ErrNotRunning)
	}
	return fmt.Errorf("%s: cannot exec in container %s: %w", prog, e.o.Container, err)
}

func status(t client.ContainerInspectResult) string {
	s := t.Container.State
	if s == nil {
		return "state unknown"
	}
	if s.Status == "exited" {
		return fmt.Sprintf("exited with %d", s.ExitCode)
	}
	return string(s.Status)
}
