// Package dockerexec runs the engine's commands inside another, running container
// through the Docker Engine API exec — the container action's way to reach the GPUs and
// the test environment of the job container (docs/action.md).
//
// Every command starts under a small sh launcher (see launcher) that makes the program
// the leader of a new process group and reports that group on stderr, so a second exec
// can signal the whole group on cancel (the API cannot kill an exec), and kills what
// the group leaves behind when the program ends, as executor.Local does, together
// with the processes that left the group but carry the command's mark
// (executor.MarkPrefix) in their environment. The output stream is read for at most
// outputWait after the launcher ended: a process that escaped both may still hold it.
//
// Paths: Run translates Command.Dir and an absolute Command.Path with the Mapper. It
// does not touch Args or Env: whoever puts a path into them (the engine's
// JUNITXML_PREFIX) translates it with Mapper.ToTarget first.
package dockerexec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"

	"github.com/rocm/sgpu-queue/internal/executor"
	"github.com/rocm/sgpu-queue/internal/exitcode"
)

// ErrNotRunning is wrapped by the errors for a target container that is missing,
// stopped, or stopped (or restarted) while a command ran: nothing more can run there.
// It matches executor.ErrUnavailable, so dispatch stops instead of failing every item.
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
	// NoCoreDumps runs every command with a soft RLIMIT_CORE of 0, whatever limit the
	// container was started with (docker run --ulimit core=-1, a daemon's default).
	NoCoreDumps bool
	// Client talks to the engine; nil makes one from the environment (NewClient),
	// which Close then closes.
	Client *client.Client
}

// Exec is an executor.Executor that runs commands inside one running container.
type Exec struct {
	cli       *client.Client
	ownCli    bool
	name      string // as the user gave it, for messages
	id        string
	startedAt string // the container's start, to notice a restart under a command
	env       []string
	grace     time.Duration
	force     <-chan struct{}
	mapper    *Mapper
	warn      func(string)
	noCore    bool
}

var _ executor.Executor = (*Exec)(nil)

// apiTimeout bounds each control call to the engine (create, inspect, signal): a
// daemon that stops answering must not hang the run.
const apiTimeout = 60 * time.Second

// containerGoneWait is how long a container whose command lost its launcher gets to
// show that it stopped.
const containerGoneWait = 10 * time.Second

// killWait is how long a command may take to end after KILL before Run gives up on it.
const killWait = 30 * time.Second

// checkWait is how long Run lets the stream end by itself after the launcher's last
// report before it asks the engine whether the launcher really ended.
const checkWait = 200 * time.Millisecond

// outputWait bounds how long Run reads the stream once the launcher ended. The
// engine itself closes an exec's stream about 2 s after its process exited (Docker
// 20.10); the shorter bound here makes the warning come every time.
const outputWait = time.Second

// NewClient connects to the Docker engine named by the environment (DOCKER_HOST,
// DOCKER_API_VERSION, DOCKER_CERT_PATH, DOCKER_TLS_VERIFY); the API version is
// negotiated with the daemon on the first call.
func NewClient() (*client.Client, error) {
	cli, err := client.New(client.FromEnv)
	if err != nil {
		return nil, fmt.Errorf("docker client: %w (check DOCKER_HOST)", err)
	}
	return cli, nil
}

// New connects and checks that the container exists and runs.
func New(ctx context.Context, o Options) (*Exec, error) {
	e := &Exec{cli: o.Client, name: o.Container, grace: max(o.Grace, 0), force: o.Force, mapper: o.Mapper, warn: o.Warn,
		noCore: o.NoCoreDumps}
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
func (e *Exec) Mapper() *Mapper { return e.mapper }

// ContainerEnv is the target container's own environment (its image's and its
// `docker run -e` variables). An exec starts from it and Command.Env is laid over it,
// so the engine should build the items' environment on this base, not on its own.
func (e *Exec) ContainerEnv() []string { return append([]string(nil), e.env...) }

// launcher is run by /bin/sh in the container as: sh -c launcher sgpu-queue DIR MARK CORE
// PROG ARGS… It sets the soft core-file limit to CORE when that is not empty (0: no
// core dumps, as executor.NoCoreDumps does here; an exec cannot be given an rlimit
// through the API), enters DIR, then starts PROG under setsid (a new session, so a new process
// group that the launcher itself is not in) through an inner sh that reports the group
// on stderr, hands the group id to the launcher, puts MARK (NAME=1) into the
// program's environment and execs PROG with the launcher's stdout. When PROG ends,
// the launcher kills what is left of the group and every process carrying MARK
// (sweep, twice: once more for what was forking), and exits with PROG's status (128+N
// when a signal N ended it), after reporting it on stderr: a stream without that last
// report tells that the launcher itself was killed, i.e. the container died. The
// launcher's own stderr is /dev/null so that its shell's remarks ("Killed") stay out
// of the item's log; its own environment has no MARK, so the sweep spares it.
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

// sweep, in sh with $m the mark (NAME=1) and $s a signal name (default KILL),
// signals every process whose environment carries the mark: those that left the
// process group (setsid, daemons). One grep reads every /proc/<pid>/environ there.
const sweep = `for p in $(grep -l "$m" /proc/[0-9]*/environ 2>/dev/null); do p=${p#/proc/}; ` +
	`kill -${s:-KILL} "${p%/environ}" 2>/dev/null; done`

// Run implements executor.Executor.
//
// Exit codes follow the shell convention; as the launcher reports a signal N as
// status 128+N, Signaled is inferred from codes 129…159. A program that does not exist
// in the container is an error wrapping executor.ErrNotFound (code 127), reported by
// the launcher rather than read from the code, so a script that itself exits 127 stays
// a plain failure.
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

	stdout := &drain{w: orDiscard(c.Stdout)}
	stderr := &drain{w: orDiscard(c.Stderr)}
	mk := newMarker(stderr)
	copied := make(chan error, 1)
	go func() {
		_, err := stdcopy.StdCopy(stdout, mk, att.Reader)
		copied <- err
	}()
	w := &waiter{e: e, ctx: bg, mk: mk, copied: copied, att: &att, execID: execID, mark: mark}
	streamErr := w.await(ctx)
	// await returns once the copy has ended: mk, stdout and stderr are this
	// goroutine's again.
	_ = mk.finish()
	if w.held && !w.cancelled {
		e.note(c, fmt.Sprintf("left a process holding its output that could not be found (it cleared its environment and left its process "+
			"group?); its output was read for %s more, then cut", outputWait))
	}
	res, err := e.result(bg, c, dir, w, streamErr)
	if err != nil {
		return res, err
	}
	if err := errors.Join(stdout.err, stderr.err); err != nil {
		return res, fmt.Errorf("%s: writing its output: %w", c.Path, err)
	}
	return res, nil
}

// targets are the command's working directory and program as the target container
// names them (Mapper.ToTarget); a bare program name stays for its PATH.
func (e *Exec) targets(c executor.Command) (dir, prog string, err error) {
	dir, prog = c.Dir, c.Path
	if dir != "" {
		if dir, err = e.mapper.ToTarget(dir); err != nil {
			return "", "", fmt.Errorf("working directory: %w", err)
		}
	}
	if path.IsAbs(prog) {
		if prog, err = e.mapper.ToTarget(prog); err != nil {
			return "", "", fmt.Errorf("program: %w", err)
		}
	}
	return dir, prog, nil
}

// start creates the command's exec, prog under the launcher in dir with mark, and
// attaches to its output stream, which starts it. The stream is not tied to ctx:
// only the two calls are.
func (e *Exec) start(ctx context.Context, c executor.Command, dir, prog, mark string) (string, client.ExecAttachResult, error) {
	cctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	core := ""
	if e.noCore {
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

// result is how the command ended, once its stream has: the exec's exit code, with
// the error that the launcher's reports or the container's state say (the program
// or its directory missing, the container gone, the command abandoned after KILL).
func (e *Exec) result(ctx context.Context, c executor.Command, dir string, w *waiter, streamErr error) (executor.Result, error) {
	res := executor.Result{Cancelled: w.cancelled}
	if errors.Is(streamErr, errAbandoned) {
		res.ExitCode = exitcode.Killed
		return res, fmt.Errorf("%s: %w in container %s", c.Path, streamErr, e.name)
	}
	mk := w.mk
	// Without the launcher's last report, the launcher was killed: most likely with
	// the whole container, whose exit the engine may record a moment after the stream
	// ended. The exec's exit code then means nothing.
	if orderly := mk.ended || w.launcherEnded || mk.kind == markNoDir || mk.kind == markNoSetsid; !orderly {
		if err := e.launcherLost(ctx, w.execID, mk.kind); err != nil {
			return res, fmt.Errorf("%s: %w", c.Path, err)
		}
	}
	code, running, ierr := e.exitCode(ctx, w.execID)
	switch {
	case ierr != nil:
		return res, fmt.Errorf("%s: cannot read the exit status in container %s: %w", c.Path, e.name, ierr)
	case running:
		return res, fmt.Errorf("%s: the output stream from container %s ended (%w) while the command still runs", c.Path, e.name, streamErr)
	}
	res.ExitCode = code
	res.Signaled = code > 128 && code < 160
	return res, e.reported(c, dir, mk.kind, code)
}

// launcherLost checks the container after a stream that ended without the
// launcher's last report. With no report at all, either /bin/sh could not start
// there (126, 127: one look is enough) or the container died before the launcher
// reported (killed: worth waiting for the engine to record it).
func (e *Exec) launcherLost(ctx context.Context, execID, kind string) error {
	wait := kind != markNone
	if code, running, err := e.exitCode(ctx, execID); !wait && err == nil && !running && code != exitcode.CannotRun &&
		code != exitcode.NotFound {
		wait = true
	}
	return e.checkAfter(ctx, wait)
}

// reported is the error the launcher's first report (kind) means, with the exec's
// exit code: nil when the program ran.
func (e *Exec) reported(c executor.Command, dir, kind string, code int) error {
	switch kind {
	case markNotFound:
		return fmt.Errorf("%s: %w in container %s (not on its PATH, or not executable)", c.Path, executor.ErrNotFound, e.name)
	case markNoDir:
		return fmt.Errorf("working directory %s does not exist in container %s: %s", dir, e.name, mountHint)
	case markNoSetsid:
		return fmt.Errorf("container %s has no setsid (util-linux or busybox) on its PATH: sgpu-queue needs it to stop commands on cancel",
			e.name)
	case markNone:
		if code == exitcode.CannotRun || code == exitcode.NotFound {
			return fmt.Errorf("%s: container %s could not start /bin/sh (exit %d): sgpu-queue needs a POSIX shell there", c.Path, e.name, code)
		}
	}
	return nil
}

const mountHint = "the directory must be on a mount both containers share (see --container-workdir)"

var errAbandoned = errors.New("the command did not end after KILL; left behind")

// waiter follows one command to its end: the stream's end, a cancel (TERM, grace,
// KILL), or the launcher's end with a stream that something else still holds. Only
// Run's goroutine uses it (the copy talks to it through copied and the marker's
// channels), so it needs no lock.
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

// await returns the stream's error once it ended, or errAbandoned when the command
// did not end after KILL.
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
			// Before the report, nothing of the program runs yet; the launcher
			// reports at once.
			select {
			case <-w.mk.ready:
			case err := <-w.copied:
				return err
			}
			if w.mk.kind == markPgid {
				w.signal("TERM")
				grace, force = time.After(w.e.grace), w.e.force
			}
		case <-grace:
			grace, force, kill = nil, nil, w.kill()
		case <-force:
			grace, force, kill = nil, nil, w.kill()
		case <-kill:
			// A process stuck in the kernel (a hung GPU driver) ignores KILL: stop
			// waiting for it rather than hang the run.
			w.cut()
			return errAbandoned
		case <-w.mk.hint:
			check = time.After(checkWait)
		case <-check:
			check = nil
			if running, err := w.e.running(w.ctx, w.execID); err == nil && !running {
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

// signal sends sig to process group pgid in the container, and to every process there
// carrying mark, by a second exec.
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

// running asks the engine once whether an exec still runs.
func (e *Exec) running(ctx context.Context, id string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	r, err := e.cli.ExecInspect(ctx, id, client.ExecInspectOptions{})
	return r.Running, err
}

// note writes msg into the command's own output (its log) and to Warn, naming it.
func (e *Exec) note(c executor.Command, msg string) {
	if c.Stderr != nil {
		fmt.Fprintf(c.Stderr, "\nsgpu-queue: %s\n", msg)
	}
	if e.warn != nil {
		e.warn(c.Label() + " " + msg)
	}
}

// exitCode reads the exec's status. The stream can end a moment before the engine
// records the exit, so a still-running exec is asked again for a little while.
func (e *Exec) exitCode(ctx context.Context, id string) (code int, running bool, err error) {
	delay := time.Millisecond
	for deadline := time.Now().Add(5 * time.Second); ; {
		ictx, cancel := context.WithTimeout(ctx, apiTimeout)
		r, err := e.cli.ExecInspect(ictx, id, client.ExecInspectOptions{})
		cancel()
		if err != nil || !r.Running || time.Now().After(deadline) {
			return r.ExitCode, r.Running, err
		}
		time.Sleep(delay)
		delay = min(2*delay, 100*time.Millisecond)
	}
}

// gone tells whether the container can no longer run this Exec's commands: it is
// removed, stopped, or restarted (which lost what ran in it). "" when it still runs.
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

// checkAfter is run when a command's stream ended without the launcher's last report.
// A container that is stopping gets up to containerGoneWait to show it (wait=false:
// one look); a container that still runs then is not the cause.
func (e *Exec) checkAfter(ctx context.Context, wait bool) error {
	delay := 10 * time.Millisecond
	deadline := time.Now().Add(containerGoneWait)
	for {
		why, err := e.gone(ctx)
		if err != nil {
			return fmt.Errorf("cannot check container %s after the command: %w", e.name, err)
		}
		if why != "" {
			return fmt.Errorf("container %s stopped while the command ran (%s): %w", e.name, why, ErrNotRunning)
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
		return fmt.Errorf("%s: container %s is not running (%s): %w", prog, e.name, why, ErrNotRunning)
	}
	return fmt.Errorf("%s: cannot exec in container %s: %w", prog, e.name, err)
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

// drain passes output on and keeps consuming it after a write error (a full disk):
// a stream left unread would block the command in the container.
type drain struct {
	w   io.Writer
	err error // the first write error: set by the copy, read by Run once it ended
}

func (d *drain) Write(p []byte) (int, error) {
	if d.err == nil {
		if _, err := d.w.Write(p); err != nil {
			d.err = err
		}
	}
	return len(p), nil
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
