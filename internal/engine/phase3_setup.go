package engine

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/rocm/sgpu-queue/internal/adapter"
	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/executor"
	"github.com/rocm/sgpu-queue/internal/gpu"
	"github.com/rocm/sgpu-queue/internal/schedule"
	"github.com/rocm/sgpu-queue/internal/textfmt"
)

// setupError is a list suite's setup that failed: the run stops (stoppedOnSuite).
type setupError struct {
	label string
	err   error
	tail  string // the last lines of its output
}

func (e *setupError) Error() string { return e.err.Error() }
func (e *setupError) Unwrap() error { return e.err }

// errSetupDeadline is the cause of a setup's context ended by its deadline.
var errSetupDeadline = errors.New("setup deadline")

// setup is phase 3: each list suite's one-time setup, in config order, pinned by
// suitePin. A failing setup stops the run: every item of the suite would fail the
// same way; a suite with nothing queued is not set up.
func (r *run) setup(ctx context.Context, suites []config.Suite, pool gpu.Pool, plan []schedule.Item) error {
	for _, s := range suites {
		a, err := adapter.New(s)
		if err != nil {
			return err // phase 0 checked every suite's adapter (adapter.Check)
		}
		su, ok := a.(adapter.SetUpper)
		if !ok {
			continue
		}
		if !hasItems(plan, s) {
			r.printf("  %-12s %s: no setup\n", s.Label, r.nothingQueued())
			continue
		}
		path := r.layout.SetupLog(s.Label)
		f, err := r.layout.Create(path)
		if err != nil {
			return r.pathError(path, err)
		}
		tail := &textfmt.Tail{}
		w := io.MultiWriter(f, tail)
		run := adapter.Run{Dir: r.o.Target.RepoRoot, Stdout: w, Stderr: w,
			Hook: adapter.Hook{Names: r.o.Target.Hooks, Level: r.o.Target.Level, Base: r.target.Env.With(r.o.Once.SetupEnv...), Pin: suitePin(s, pool)}}
		if run.JUnitDir, err = r.suiteJUnitDir(s.Label); err != nil {
			f.Close()
			return err
		}
		run.JUnitSuffix = r.junitSuffix()
		c := su.SetupCommand(run)
		c.Name = fmt.Sprintf("suite %q setup", s.Label)
		sctx, cancel := executor.Deadline(ctx, r.o.Target.SetupTimeout, errSetupDeadline)
		res, err := r.target.Exec.Run(sctx, c)
		timedOut := res.Cancelled && executor.PastDeadline(ctx, sctx, errSetupDeadline)
		cancel()
		f.Close()
		switch {
		case err != nil:
			return &setupError{label: s.Label, err: fmt.Errorf("%s: suite %q setup (%s=1) could not run: %w", s.Where(), s.Label,
				r.o.Target.Hooks.SetupOnly, err)}
		case timedOut:
			return &setupError{label: s.Label, tail: tail.String(),
				err: fmt.Errorf("%s: suite %q setup (%s=1) did not end within %s (setup-timeout) and was stopped; log %s:\n%s", s.Where(), s.Label,
					r.o.Target.Hooks.SetupOnly, r.o.Target.SetupTimeout, r.rel(path), textfmt.Indent(tail.String()))}
		case res.Cancelled || ctx.Err() != nil:
			return fmt.Errorf("suite %q setup cancelled", s.Label)
		case res.ExitCode != 0:
			return &setupError{label: s.Label, tail: tail.String(),
				err: fmt.Errorf("%s: suite %q setup (%s=1) exited with %d; log %s:\n%s", s.Where(), s.Label, r.o.Target.Hooks.SetupOnly, res.ExitCode,
					r.rel(path), textfmt.Indent(tail.String()))}
		}
		r.printf("  %-12s setup ok  → %s\n", s.Label, r.rel(path))
	}
	return nil
}

// nothingQueued says why a suite has no item in this run's queue.
func (r *run) nothingQueued() string {
	switch {
	case r.shard != nil:
		return "no item on this shard"
	case r.rerun != nil:
		return "nothing to re-run"
	}
	return "no item queued"
}
