package expand

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/rocm/sgpu-queue/internal/adapter"
	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/executor"
	"github.com/rocm/sgpu-queue/internal/textfmt"
)

// errSetupDeadline is the cause of a setup= command's context ended by
// Request.SetupTimeout.
var errSetupDeadline = errors.New("setup deadline")

// Setups runs each distinct setup= command once (TE's three core lines share one
// build), in config order. It stops at the first that fails: every suite listed
// after it would fail the same way.
func Setups(ctx context.Context, r Request) ([]SetupRun, error) {
	var runs []SetupRun
	byCmd := map[string]int{}
	for _, s := range r.Suites {
		if s.Options.Setup == "" {
			continue
		}
		if i, ok := byCmd[s.Options.Setup]; ok {
			runs[i].Shared = append(runs[i].Shared, s.Label)
			continue
		}
		run, err := setup(ctx, r, s)
		if err != nil {
			return runs, err
		}
		byCmd[s.Options.Setup] = len(runs)
		runs = append(runs, run)
	}
	return runs, nil
}

func setup(ctx context.Context, r Request, s config.Suite) (SetupRun, error) {
	run := SetupRun{Suite: s}
	log := io.WriteCloser(nopCloser{io.Discard})
	if r.SetupLog != nil {
		var err error
		if log, run.Log, err = r.SetupLog(s); err != nil {
			return run, &Error{Suite: s, Msg: fmt.Sprintf("cannot open the log of its setup= command: %v", err), Err: err}
		}
	}
	defer log.Close()
	tail := &textfmt.Tail{}
	w := io.MultiWriter(log, tail)
	c, _ := adapter.Setup(s, r.AdapterListing(nil)) // the caller skips suites without one
	c.Name = fmt.Sprintf("suite %q setup", s.Label)
	c.Stdout, c.Stderr = w, w
	sctx, cancel := executor.Deadline(ctx, r.SetupTimeout, errSetupDeadline)
	defer cancel()
	start := time.Now()
	res, err := r.Exec.Run(sctx, c)
	run.Secs = time.Since(start).Seconds()
	where := ""
	if run.Log != "" {
		where = "; log " + run.Log
	}
	switch {
	case err != nil:
		return run, &Error{Suite: s, Msg: fmt.Sprintf("its setup= command could not run: %v", err), Err: err}
	case res.Cancelled && executor.PastDeadline(ctx, sctx, errSetupDeadline):
		return run, &Error{Suite: s, TimedOut: true, Tail: tail.String(),
			Msg: fmt.Sprintf("its setup= command did not end within %s (setup-timeout) and was stopped%s", r.SetupTimeout, where)}
	case res.Cancelled || ctx.Err() != nil:
		return run, &Error{Suite: s, Msg: "setup cancelled", Err: context.Cause(ctx)}
	case res.ExitCode != 0:
		return run, &Error{Suite: s, Tail: tail.String(),
			Msg: fmt.Sprintf("its setup= command (sh -c %q) exited with %d%s", s.Options.Setup, res.ExitCode, where)}
	}
	return run, nil
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// ListAdapter lists a suite through its adapter, from the repo root, with the
// listing deadline; its stderr goes to Request.Log.
func ListAdapter(ctx context.Context, r Request, s config.Suite) (adapter.Adapter, *adapter.Listed, error) {
	a, err := adapter.New(s)
	if err != nil {
		return nil, nil, FromAdapter(s, err)
	}
	l, err := a.List(ctx, r.Exec, r.Listing(s, r.Log))
	if err != nil {
		return nil, nil, FromAdapter(s, err)
	}
	return a, l, nil
}

// AdapterListing is where the tools' commands list: the repo root, the tools'
// environment.
func (r Request) AdapterListing(log io.Writer) adapter.Listing {
	return adapter.Listing{Env: r.Hooks.AdapterEnv(r.Env, r.Level), Dir: r.RepoRoot, Log: log}
}

// Listing is where suite s lists, under the listing deadline; a hook-contract script
// is pinned to the suite's first GPUs (Request.Pin).
func (r Request) Listing(s config.Suite, log io.Writer) adapter.Listing {
	in := r.AdapterListing(log)
	in.Timeout = r.Timeout
	in.Hook = adapter.Hook{Names: r.Hooks, Level: r.Level, Base: r.Env, Census: r.Census}
	if r.Pin != nil {
		in.Hook.Pin = r.Pin(s)
	}
	return in
}

// FromAdapter is an adapter's error as a listing error of suite s.
func FromAdapter(s config.Suite, err error) *Error {
	var ae *adapter.Error
	if errors.As(err, &ae) {
		return &Error{Suite: s, Msg: ae.Msg, Tail: ae.Tail, Err: ae.Err, TimedOut: ae.TimedOut}
	}
	return &Error{Suite: s, Msg: err.Error(), Err: err}
}
