package engine

import (
	"context"
	"errors"
	"strings"

	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/exitcode"
	"github.com/rocm/sgpu-queue/internal/expand"
	"github.com/rocm/sgpu-queue/internal/gpu"
	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/textfmt"
)

// stoppedBeforeItems ends a run cancelled in phase 1 or 3: every suite still gets
// its verdict files, "cancelled", and nothing is learned.
func (r *run) stoppedBeforeItems(ctx context.Context, phase int, suites []config.Suite, pool gpu.Pool,
	queueRows []record.QueueRow) (*Result, error) {
	wait, stopWait := r.nextSignal(ctx)
	defer stopWait()
	what := map[int]string{1: "while listing the suites' items (phase 1)", 3: "during setup (phase 3)"}[phase]
	meta := r.meta(suites, pool)
	meta.Finished, meta.Cancelled = true, true
	meta.Stop = &record.Stop{Reason: outcome.StopCancelled, Message: "the run was cancelled " + what + ", before any item ran", Phase: phase}
	r.res.Cancelled, r.res.Stop = true, meta.Stop
	r.warn(meta.Stop.Message)
	if phase == 1 {
		r.writeEmptyQueue()
	}
	r.writeMeta(meta)
	run := &record.Run{Dir: r.layout.Root, Meta: *meta, Queue: queueRows}
	r.finish(ctx, wait, run, ending{
		learn: learning{none: "nothing ran: the weight table is left as it is"},
		junit: r.mergedJUnit(context.WithoutCancel(ctx), run.Meta.Started),
	})
	return r.res, nil
}

// stoppedOnSuite ends a run whose suite's listing or setup failed: run.json records
// why, finished, so that report and merge still read the log dir (docs/runners.md).
// An error of no suite's is returned as it is.
func (r *run) stoppedOnSuite(phase int, suites []config.Suite, pool gpu.Pool, err error) error {
	failed := &exitcode.Error{Code: exitcode.Failed, Err: err}
	stop := suiteStop(err, phase)
	if stop == nil || r.o.DryRun {
		return failed
	}
	if phase == 1 {
		r.writeEmptyQueue()
		if r.shard != nil && r.shard.Raw != nil {
			if werr := r.layout.WriteFile(r.layout.PlanJSON(), r.shard.Raw); werr != nil {
				r.lost("the plan's copy", r.layout.PlanJSON(), werr)
			}
		}
	}
	meta := r.meta(suites, pool)
	meta.Finished, meta.Stop = true, stop
	r.writeMeta(meta)
	return failed
}

// writeEmptyQueue stands for the queue a run stopped in phase 1 never wrote: the
// log dir stays a run that `sgpu-queue report` can rebuild.
func (r *run) writeEmptyQueue() {
	if err := r.layout.WriteFile(r.layout.QueueTSV(), nil); err != nil {
		r.lost("the empty queue", r.layout.QueueTSV(), err)
	}
}

// suiteStop is the stop record of a suite's failed listing or setup, or of the
// failed --before; nil for an error that is no suite's.
func suiteStop(err error, phase int) *record.Stop {
	var le *expand.Error
	var se *setupError
	switch {
	case errors.As(err, &le):
		return &record.Stop{Reason: outcome.StopListingFailed, Phase: phase, Suite: le.Suite.Label, Message: stopMessage(le.Error(), le.Tail)}
	case errors.As(err, &se):
		return &record.Stop{Reason: outcome.StopSetupFailed, Phase: phase, Suite: se.label, Message: stopMessage(se.Error(), se.tail)}
	}
	return onceStop(err)
}

// stopMessage is a failed suite's reason in one line: the error's first line and
// its command's last.
func stopMessage(msg, tail string) string {
	first, _, _ := strings.Cut(msg, "\n")
	lines := strings.Split(strings.TrimSpace(tail), "\n")
	if last := strings.TrimSpace(lines[len(lines)-1]); last != "" {
		first += "; last output: " + last
	}
	// The tail is a suite's output: no terminal escapes or control bytes reach
	// run.json, the console or the report from it.
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(textfmt.StripANSI(first), "?"))
}
