package executor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Local runs commands as child processes of this one, each the leader of its own
// process group so that cancelling reaches everything the command started (pytest
// workers, compilers), not just the shell script at the top.
type Local struct {
	// Grace is the time between TERM and KILL on cancel; zero means DefaultGrace.
	Grace time.Duration
	// Force, when closed, cuts every grace period short (a second Ctrl-C).
	Force <-chan struct{}
}

// Run implements Executor.
func (l Local) Run(ctx context.Context, c Command) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{ExitCode: 130, Cancelled: true}, nil
	}
	path, err := lookPath(c.Path, c.Env)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", c.Path, notFound(err))
	}
	cmd := exec.Command(path, c.Args...)
	cmd.Args[0] = c.Path
	cmd.Env = c.Env
	cmd.Dir = c.Dir
	cmd.Stdout = orDiscard(c.Stdout)
	cmd.Stderr = orDiscard(c.Stderr)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return Result{}, fmt.Errorf("%s: %w", c.Path, notFound(err))
	}
	pgid := cmd.Process.Pid

	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()

	cancelled := false
	select {
	case err = <-waited:
	case <-ctx.Done():
		cancelled = true
		err = l.stop(pgid, waited)
	}
	res := Result{Cancelled: cancelled}
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
		return res, fmt.Errorf("%s: %w", c.Path, err)
	}
	// The leader is gone; anything it left running in its group must not outlive
	// the item (it would keep the GPU busy under the next item).
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	return res, nil
}

// stop sends TERM to the group, then KILL once the grace period is over.
func (l Local) stop(pgid int, waited <-chan error) error {
	grace := l.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case err := <-waited:
		return err
	case <-t.C:
	case <-l.Force:
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	return <-waited
}

// lookPath finds a bare program name on the PATH of the command's own environment
// (where it runs), falling back to this process's PATH when that has none.
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

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
