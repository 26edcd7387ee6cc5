package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/executor"
	"github.com/rocm/sgpu-queue/internal/gpu"
	"github.com/rocm/sgpu-queue/internal/schedule"
	"github.com/rocm/sgpu-queue/internal/textfmt"
)

// setupError is a list suite's setup that failed: the run stops, and records
// which suite (stoppedOnSuite).
type setupError struct {
	label string
	err   error
	tail  string // the last lines of its output
}

func (e *setupError) Error() string { return e.err.Error() }
func (e *setupError) Unwrap() error { return e.err }

// errSetupDeadline is the cause of a setup's context ended by its deadline.
var errSetupDeadline = errors.New("setup deadline")

// setup is phase 3: each list suite's one-time setup, in config order, on the first
// GPU (a multi-GPU suite's on its first GPUs: suitePin). A failing setup stops the
// run: every item of the suite would fail the same way. A shard skips the setup of a
// suite it has no item of.
func (r *run) setup(ctx context.Context, suites []config.Suite, pool gpu.Pool, plan []schedule.Item) error {
	for _, s := range suites {
		if s.Mode != config.List {
			continue
		}
		if r.shard != nil && !hasItems(plan, s) {
			r.printf("  %-12s no item on this shard: no setup\n", s.Label)
			continue
		}
		path := r.layout.SetupLog(s.Label)
		f, err := os.Create(path)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		tail := &textfmt.Tail{}
		env := r.o.Hooks.SetupEnv(s.Environ(r.target.Env.With(r.o.SetupEnv...)), r.o.Level, s.GPUKind()).With(suitePin(s, pool)...)
		env, err = r.junitEnv(env, s.Label)
		if err != nil {
			f.Close()
			return err
		}
		sctx, cancel := executor.Deadline(ctx, r.o.SetupTimeout, errSetupDeadline)
		w := io.MultiWriter(f, tail)
		res, err := r.target.Exec.Run(sctx, executor.Command{
			Name: fmt.Sprintf("suite %q setup", s.Label),
			Path: s.Path, Args: s.Args, Env: env, Dir: r.o.RepoRoot, Stdout: w, Stderr: w,
		})
		timedOut := res.Cancelled && executor.PastDeadline(ctx, sctx, errSetupDeadline)
		cancel()
		f.Close()
		switch {
		case err != nil:
			return &setupError{label: s.Label, err: fmt.Errorf("%s: suite %q setup (%s=1) could not run: %w", s.Where(), s.Label,
				r.o.Hooks.SetupOnly, err)}
		case timedOut:
			return &setupError{label: s.Label, tail: tail.String(),
				err: fmt.Errorf("%s: suite %q setup (%s=1) did not end within %s (setup-timeout) and was stopped; log %s:\n%s", s.Where(), s.Label,
					r.o.Hooks.SetupOnly, r.o.SetupTimeout, r.rel(path), textfmt.Indent(tail.String()))}
		case res.Cancelled || ctx.Err() != nil:
			return fmt.Errorf("suite %q setup cancelled", s.Label)
		case res.ExitCode != 0:
			return &setupError{label: s.Label, tail: tail.String(),
				err: fmt.Errorf("%s: suite %q setup (%s=1) exited with %d; log %s:\n%s", s.Where(), s.Label, r.o.Hooks.SetupOnly, res.ExitCode,
					r.rel(path), textfmt.Indent(tail.String()))}
		}
		r.printf("  %-12s setup ok  → %s\n", s.Label, r.rel(path))
	}
	return nil
}
