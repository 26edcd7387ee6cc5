package executor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/rocm/sgpu-queue/internal/exitcode"
)

// Local runs commands as child process-group leaders, so stopping one reaches everything it started; processes that
// leave the group are found by their mark (MarkPrefix). When the leader exits, what it left is killed and its output
// read for at most outputWait, so nothing in the background keeps the GPU.
type Local struct {
	// Grace is the time between TERM and KILL on cancel; zero: KILL right after TERM.
	Grace time.Duration
	// Force, when closed, cuts every grace period short (a second Ctrl-C).
	Force <-chan struct{}
	// Warn, when set, hears of processes a command left behind, one line each.
	Warn func(string)
}

// outputWait bounds the output read after the leader exited and its leftovers were killed.
const outputWait = 2 * time.Second

// killWait bounds the wait for a leader after KILL: one stuck in the kernel (a hung GPU driver) is left behind.
const killWait = 10 * time.Second

// Run implements Executor.
func (l Local) Run(ctx context.Context, c Command) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{ExitCode: exitcode.Interrupted, Cancelled: true}, nil
	}
	path, err := lookPath(c.Path, c.Env)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", c.Path, notFound(err))
	}
	out, err := connect(c.Stdout, c.Stderr)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", c.Path, err)
	}
	mark := NewMark()
	cmd := exec.Command(path, c.Args...)
	cmd.Args[0] = c.Path
	cmd.Env = withMark(c.Env, mark)
	cmd.Dir = c.Dir
	if out.stdout != nil {
		cmd.Stdout = out.stdout
	}
	if out.stderr != nil {
		cmd.Stderr = out.stderr
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	out.started()
	if err != nil {
		out.close()
		return Result{}, fmt.Errorf("%s: %w", c.Path, notFound(err))
	}
	t := newTree(cmd.Process.Pid, mark)

	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	res := Result{}
	ended := true
	select {
	case err = <-waited:
	case <-ctx.Done():
		res.Cancelled = true
		ended, err = l.stop(t, waited)
	}
	// Nothing it left may outlive the command: it would hold the GPU under the next item, or the output.
	left := t.sweep(out.inodes)
	outputEnded := out.wait(outputWait)
	if !ended {
		res.ExitCode, res.Signaled = exitcode.Killed, true
		c.Note(l.Warn, fmt.Sprintf("did not end %s after KILL (stuck in the kernel?); left behind as pid %d", killWait, t.pgid))
		return res, nil
	}
	if err := exitStatus(err, &res); err != nil {
		return res, fmt.Errorf("%s: %w", c.Path, err)
	}
	if !res.Cancelled {
		l.reportLeft(c, left, outputEnded)
	}
	if err := out.writeErr(); err != nil {
		return res, fmt.Errorf("%s: writing its output: %w", c.Path, err)
	}
	return res, nil
}

// exitStatus fills the exit code from Wait's error; other errors are returned.
func exitStatus(err error, res *Result) error {
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.Signaled = true
			res.ExitCode = 128 + int(ws.Signal())
		} else {
			res.ExitCode = ee.ExitCode()
		}
	default:
		return err
	}
	return nil
}

// stop ends a cancelled command: TERM, then KILL after the grace period unless all ended. It returns false when
// the leader outlived killWait after the KILL, and the leader's Wait error.
func (l Local) stop(t *tree, waited <-chan error) (bool, error) {
	t.signal(syscall.SIGTERM)
	var werr error
	exited := false
	if l.Grace > 0 {
		grace := time.NewTimer(l.Grace)
		defer grace.Stop()
		poll := time.NewTicker(50 * time.Millisecond)
		defer poll.Stop()
	wait:
		for {
			select {
			case werr = <-waited:
				exited, waited = true, nil
				if t.gone() {
					return true, werr
				}
			case <-poll.C:
				if exited && t.gone() {
					return true, werr
				}
			case <-grace.C:
				break wait
			case <-l.Force:
				break wait
			}
		}
	}
	t.signal(syscall.SIGKILL)
	if exited {
		return true, werr
	}
	k := time.NewTimer(killWait)
	defer k.Stop()
	select {
	case werr = <-waited:
		return true, werr
	case <-k.C:
		return false, nil
	}
}

// reportLeft says what a command that ended by itself left behind.
func (l Local) reportLeft(c Command, left []leftover, outputEnded bool) {
	if len(left) > 0 {
		c.Note(l.Warn, describeLeft(left))
	}
	held := false
	for _, p := range left {
		held = held || p.holds
	}
	if !outputEnded && !held {
		c.Note(l.Warn, UnfoundHolder(outputWait))
	}
}

// describeLeft is the one line about the processes a command left behind.
func describeLeft(left []leftover) string {
	var b strings.Builder
	holding := 0
	for _, p := range left {
		if p.holds {
			holding++
		}
	}
	switch {
	case holding > 0 && len(left) == 1:
		b.WriteString("left a process holding its output after it exited: ")
	case holding > 0:
		fmt.Fprintf(&b, "left %d processes after it exited, %d holding its output: ", len(left), holding)
	case len(left) == 1:
		b.WriteString("left a process running after it exited: ")
	default:
		fmt.Fprintf(&b, "left %d processes running after it exited: ", len(left))
	}
	stuck := 0
	for i, p := range left {
		if i > 0 {
			b.WriteString(", ")
		}
		if i == 5 {
			fmt.Fprintf(&b, "… (%d more)", len(left)-i)
			break
		}
		fmt.Fprintf(&b, "pid %d (%s", p.pid, p.cmd)
		if p.escaped {
			b.WriteString("; outside its process group")
		}
		b.WriteString(")")
	}
	for _, p := range left {
		if p.stuck {
			stuck++
		}
	}
	if stuck > 0 {
		fmt.Fprintf(&b, "; killed, but %d did not die within %s", stuck, sweepWait)
	} else {
		b.WriteString("; killed")
	}
	return b.String()
}

// lookPath finds a bare name on the command's own PATH, else on this process's.
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return exec.LookPath(name)
	}
	for i := len(env) - 1; i >= 0; i-- {
		v, ok := strings.CutPrefix(env[i], "PATH=")
		if !ok {
			continue
		}
		for _, dir := range filepath.SplitList(v) {
			if dir == "" {
				dir = "."
			}
			p := filepath.Join(dir, name)
			if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode().Perm()&0o111 != 0 {
				return p, nil
			}
		}
		return "", fmt.Errorf("%w in PATH=%s", exec.ErrNotFound, v)
	}
	return exec.LookPath(name)
}

func notFound(err error) error {
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) || errors.Is(err, os.ErrPermission) {
		return fmt.Errorf("%w (%w)", ErrNotFound, err)
	}
	return err
}
