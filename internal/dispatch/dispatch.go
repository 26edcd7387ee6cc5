// Package dispatch runs the queue: the moment GPUs are free it asks the scheduler
// for the next item and the GPUs it takes, runs it pinned to them, and records it.
//
// GPUs are a pool that items take and give back, not goroutines welded to one GPU,
// so a multi-GPU item takes several (docs/suites.md#multi-gpu-suites) and a bad GPU
// can leave the pool. The bad-day policies live here too (docs/bad-day.md).
package dispatch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/rocm/sgpu-queue/internal/executor"
	"github.com/rocm/sgpu-queue/internal/expand"
	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/runenv"
	"github.com/rocm/sgpu-queue/internal/schedule"
	"github.com/rocm/sgpu-queue/internal/weights"
)

// Config is everything phase 4 needs.
type Config struct {
	// Target is where the items run.
	runenv.Target
	Layout logdir.Layout
	// GPUs is the pool: the scheduler's GPU positions index it.
	GPUs   []string
	PinVar string
	// AlsoPin are more variables set to the item's GPUs with PinVar (gpu.Pool.AlsoPin).
	AlsoPin []string
	// Ports is each GPU's PET_MASTER_PORT, given to an item that starts on it
	// (hook.Ports); nil gives none.
	Ports map[string]int
	// JUnitPrefix is the absolute local directory (trailing slash) under which each
	// suite writes its JUnit XML, "" when the environment sets none.
	JUnitPrefix string
	JUnitSuffix string
	// JUnitRoot is the JUnit prefix's trusted root; "" is the prefix itself
	// (docs/bad-day.md#the-state-between-runs-links-and-fifos).
	JUnitRoot string
	// JUnitOptional are the items that write no JUnit file (TE's torch/benchmark):
	// judged by their exit code alone (docs/outcomes.md).
	JUnitOptional []weights.KeyPattern
	Attempts      *logdir.AttemptsWriter
	Console       io.Writer
	Warn          func(string)
	// Lost reports an item's log or rc file that was not written; nil: a warning.
	Lost func(what, path string, err error)
	// Start is the zero of the timings offsets (zero: when Run is called).
	Start time.Time

	Policy
}

// Policy is the bad-day policy of a run (docs/bad-day.md), taken whole.
type Policy struct {
	// Timeout kills an item that runs far past its learned weight (off when zero).
	Timeout Timeout
	// Retries is how many times a failed item is queued again (at the back, on
	// another GPU when there is one).
	Retries int
	// FlakyIsFailure fails an item that failed and then passed.
	FlakyIsFailure bool
	// Quarantine takes a GPU whose items fail fast out of the pool (off when
	// Threshold is 0).
	Quarantine Quarantine
}

// Attempt is one run of one item, its outcome decided here once, so the engine
// decides from the same attempts even when the disk refused a row.
type Attempt struct {
	record.Attempt
	Item   int // index into the items
	Number int // 1 for the first attempt
	// Slots are the positions of its GPUs (record.Attempt.GPUs) in Config.GPUs.
	Slots      []int
	Start, End time.Time
	DeviceErr  string
	// Unavailable is set when nothing more can run where commands run (the target
	// container stopped): the run stops dispatching.
	Unavailable error

	panicked *WorkerPanic // the worker running this attempt panicked
}

// WorkerPanic is a worker goroutine's panic and stack; Run stops the other items.
type WorkerPanic struct {
	Value any
	Stack []byte
}

func (p *WorkerPanic) Error() string { return fmt.Sprint(p.Value) }

// Unwrap is the panic value when it is an error (a runtime error, say).
func (p *WorkerPanic) Unwrap() error {
	err, _ := p.Value.(error)
	return err
}

// Seconds is the attempt's duration.
func (a Attempt) Seconds() float64 { return a.End.Sub(a.Start).Seconds() }

// Failed reports whether the attempt failed by its outcome (a no-run has rc 0).
func (a Attempt) Failed() bool { return a.Outcome.Failed() }

// Result is what phase 4 did.
type Result struct {
	Started  time.Time
	Wall     time.Duration
	Attempts []Attempt
	// Cancelled is true when ctx ended before the queue was empty.
	Cancelled bool
	// Quarantined lists the GPUs taken out of the pool, in order.
	Quarantined []record.Quarantined
	// Unfit are the items not run (again) because they need more GPUs than
	// quarantine left in the pool.
	Unfit []record.Unfit
	// Stop is why dispatch ended with items left; nil when the queue ran empty.
	Stop *record.Stop
	// Panic is a worker's panic; what finished is in Attempts, for phases 5–8.
	Panic *WorkerPanic
}

func stop(reason outcome.Stop, msg string) *record.Stop {
	return &record.Stop{Reason: reason, Message: msg, Phase: 4}
}

// Run dispatches every item the scheduler holds onto cfg.GPUs and returns when all
// have ended, or, once ctx is cancelled, when the running ones have stopped.
func Run(ctx context.Context, cfg Config, items []expand.Item, s schedule.Scheduler) *Result {
	d := &dispatcher{cfg: cfg, items: items, sched: s, attempts: make([]int, len(items)),
		again: map[int]bool{}, held: map[int]bool{}, progress: newProgress(cfg.Console, len(cfg.GPUs), s.Len(), items, s.Calibration())}
	return d.run(ctx)
}

// dispatcher is phase 4's state. cfg and items are read-only once Run starts: the
// workers read them. sched, attempts, again and held belong to the loop's goroutine
// (loop.go); progress is shared and takes its own lock.
type dispatcher struct {
	cfg      Config
	items    []expand.Item
	sched    schedule.Scheduler
	attempts []int        // per item, attempts started
	again    map[int]bool // items queued for another attempt
	held     map[int]bool // items whose hold the console noted
	progress *progress
}

func anyCancelled(as []Attempt) bool {
	for _, a := range as {
		if a.Outcome == outcome.Cancelled {
			return true
		}
	}
	return false
}

// errHang is the cause of an item context ended by its hang deadline.
var errHang = errors.New("hang timeout")

// runItem runs one attempt on the GPUs at positions slots and records it: log, rc
// file, timings row, console line.
func (d *dispatcher) runItem(ctx context.Context, t0 time.Time, slots []int, idx, n int, dl deadline) Attempt {
	it := d.items[idx]
	a := Attempt{
		Attempt: record.Attempt{ItemID: it.ItemID, GPUs: d.gpuList(slots)},
		Item:    idx,
		Number:  n,
		Slots:   slots,
	}
	if n > 1 {
		// The canonical log holds the last attempt (the one the verdict is
		// from); earlier ones keep theirs beside it.
		keepAttempt(d.cfg.Layout, it.Label, it.Tag, n-1, d.warn)
		d.keepAttemptJUnit(it, n-1, t0)
	}
	log := d.openLog(it)
	limit, why := dl.limit, dl.why
	e, cwd := d.execute(ctx, it, &a, log, limit)
	a.Outcome = decide(e)
	a.RC, a.Unavailable = rcOf(a.Outcome, e)
	if msg := d.explain(it, a, e, limit, why); msg != "" {
		fmt.Fprintf(log, "\n%s\n", msg)
	}
	if err := log.Close(); err != nil {
		d.warn(err.Error())
	}
	removeIfEmpty(d.cfg.Layout, cwd)
	d.record(it, &a, t0)
	return a
}

// execute runs the attempt's command under its hang deadline (limit; 0: none) and
// gathers the evidence. cwd is the item's own directory, to remove when empty.
func (d *dispatcher) execute(ctx context.Context, it expand.Item, a *Attempt, log io.Writer, limit time.Duration) (e evidence, cwd string) {
	cmd, cwd, cmdErr := d.command(it, a.GPU(), log)
	ictx, cancel := executor.Deadline(ctx, limit, errHang)
	defer cancel()
	a.Start = time.Now()
	if cmdErr != nil {
		e.runErr = cmdErr
	} else if err := mkdir(d.cfg.Layout, cwd); err != nil {
		e.runErr = fmt.Errorf("cannot create the item's working directory: %w", err)
	} else {
		e.res, e.runErr = d.cfg.Exec.Run(ictx, cmd)
	}
	a.End = time.Now()
	e.hang = executor.PastDeadline(ctx, ictx, errHang)
	if e.runErr == nil && !e.res.Cancelled {
		e.partial = d.partialLeft(it, a.Start)
		e.junit, e.wroteXML, e.badXML = d.junitEvidence(it, a.Start)
	}
	return e, cwd
}

// rcOf is the rc an attempt with outcome o is recorded with (outcome.Outcome.RC);
// unavailable is the executor's error when where commands run went away.
func rcOf(o outcome.Outcome, e evidence) (rc int, unavailable error) {
	if o == outcome.Unavailable {
		unavailable = e.runErr
	}
	return o.RC(e.res.ExitCode, e.runErr == nil), unavailable
}

// record writes down an ended attempt, its log closed.
func (d *dispatcher) record(it expand.Item, a *Attempt, t0 time.Time) {
	l := d.cfg.Layout
	if a.Failed() && a.Outcome.Exercised() {
		a.DeviceErr = deviceError(l.ItemLog(it.Label, it.Tag))
	}
	if err := writeRC(l, l.ItemRC(it.Label, it.Tag), a.RC); err != nil {
		d.lost(fmt.Sprintf("the exit code of item %s", name(it)), l.ItemRC(it.Label, it.Tag), err)
	}
	a.Secs, a.StartOff, a.EndOff = a.Seconds(), a.Start.Sub(t0).Seconds(), a.End.Sub(t0).Seconds()
	if it.Known { // a prior's estimate is not the table's: TE's est column says unknown
		a.Estimate, a.Known = it.Weight, true
	}
	a.Attempt = a.Attempt.Rounded()
	if d.cfg.Attempts != nil {
		if err := d.cfg.Attempts.Append(a.Attempt); err != nil {
			d.warn(fmt.Sprintf("cannot record %s: %v", name(it), err))
		}
	}
	d.line(*a, t0)
}

// gpuList is the ids of the GPUs at positions slots.
func (d *dispatcher) gpuList(slots []int) []string {
	ids := make([]string, len(slots))
	for i, s := range slots {
		ids[i] = d.cfg.GPUs[s]
	}
	return ids
}

func (d *dispatcher) warn(msg string) {
	if d.cfg.Warn != nil {
		d.cfg.Warn(msg)
	}
}

// lost reports a file of the run (what, at path) that was not written.
func (d *dispatcher) lost(what, path string, err error) {
	if d.cfg.Lost != nil {
		d.cfg.Lost(what, path, err)
		return
	}
	d.warn(fmt.Sprintf("%s NOT written (%s): %v", path, what, err))
}

// note prints an informational line among the item lines.
func (d *dispatcher) note(msg string) { d.progress.note(msg) }
