package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/dispatch"
	"github.com/rocm/sgpu-queue/internal/expand"
	"github.com/rocm/sgpu-queue/internal/gpu"
	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/safefs"
	"github.com/rocm/sgpu-queue/internal/schedule"
)

// meta is run.json as phase 4 starts.
func (r *run) meta(suites []config.Suite, pool gpu.Pool) *record.Meta {
	m := r.claim(suites, pool)
	m.Format = logdir.FormatAttempts
	m.DefaultWeight = r.o.Weights.Default
	if r.weights != nil {
		// After its Load, which may say where the table came from; relative, so the
		// report shows no runner's path.
		m.Weights = r.rel(r.weights.String())
	}
	d := r.o.Dispatch
	m.BadDay, m.Policy = record.BadDay{Retries: d.Retries, FlakyIsFailure: d.FlakyIsFailure, TimeoutFactor: d.Timeout.Factor}, r.policy
	r.markNotRerun(m)
	return m
}

// dispatch is phase 4: items, in the plan's order, through the scheduler q.
func (r *run) dispatch(ctx context.Context, items []expand.Item, q schedule.Scheduler, pool gpu.Pool,
	meta *record.Meta) (*dispatch.Result, error) {
	aw, err := r.layout.OpenAttempts()
	if err != nil {
		return nil, fmt.Errorf("log dir %s: %w", r.o.LogDir, err)
	}
	defer aw.Close()
	suffix := r.junitSuffix()
	prefix := r.junitPrefix()
	if prefix != "" {
		if err := safefs.MkdirAll(r.junitPrefixRoot(), prefix); err != nil {
			r.warn(fmt.Sprintf("JUnit prefix %s: %v", r.rel(prefix), r.stateError(err)))
		}
	}
	meta.Started = time.Now()
	r.writeMeta(meta)
	cfg := dispatch.Config{
		Target: *r.target, Layout: r.layout,
		GPUs: pool.IDs, PinVar: pool.PinVar, AlsoPin: pool.AlsoPin, Ports: r.ports, JUnitPrefix: prefix, JUnitSuffix: suffix,
		JUnitOptional: r.optional,
		JUnitRoot:     r.junitPrefixRoot(), Lost: r.lost,
		Attempts: aw, Console: r.out, Warn: r.warn, Start: meta.Started,
		Policy: r.o.Dispatch,
	}
	return dispatch.Run(ctx, cfg, items, q), nil
}
