// Package dispatch is phase 4: one worker per GPU pulls the next item from the
// ordered queue the moment it is free, runs it by re-entering its suite's script
// through the executor, and records its log, exit code and timings row as it ends.
//
// GPUs are a pool of free slots that items take and give back (not goroutines welded
// to one GPU), so a retry can move to another GPU and a bad GPU can leave the pool.
// The policies of a bad day live here too: a hang deadline per item from its learned
// weight, reruns of failed items, and quarantine of a GPU whose items fail fast.
package dispatch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/rocm/sgpu-queue/internal/adapter"
	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/executor"
	"github.com/rocm/sgpu-queue/internal/hook"
	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/schedule"
)

// Item is one queued work item with the suite that runs it.
type Item struct {
	schedule.Item
	Suite config.Suite
	// Adapter builds the command of an adapter suite's item (nil for list and
	// opaque items); Unit is the item as the adapter listed it.
	Adapter adapter.Adapter
	Unit    adapter.Item
}

// Opaque reports whether the item is a whole opaque suite.
func (it Item) Opaque() bool { return it.Suite.Mode == config.Opaque }

// Adapted reports whether an adapter runs the item (pytest, ctest, cmd).
func (it Item) Adapted() bool { return it.Adapter != nil }

// Config is everything phase 4 needs.
type Config struct {
	Exec   executor.Executor
	Layout logdir.Layout
	Hooks  hook.Names
	Env    hook.Env
	Level  string
	GPUs   []string // one slot per id
	PinVar string
	// AlsoPin are more variables set to the item's GPU with PinVar (gpu.Pool.AlsoPin).
	AlsoPin []string
	// JUnitPrefix is the absolute local directory (trailing slash) under which each
	// suite writes its JUnit XML, "" when the environment sets none.
	JUnitPrefix string
	JUnitSuffix string
	// MapPath turns a local path into the path where commands run (container exec);
	// nil is the identity.
	MapPath func(string) (string, error)
	// Dir is the repo root, where adapter items run.
	Dir     string
	Timings *logdir.TimingsWriter
	Console io.Writer
	Warn    func(string)
	// Start is the zero of the timings offsets (zero: when Run is called).
	Start time.Time

	// Timeout kills an item that runs far past its learned weight (off when zero).
	Timeout Timeout
	// Retries is how many times a failed item is queued again (at the back, on
	// another GPU when there is one).
	Retries int
	// Quarantine takes a GPU out of the pool when its items fail fast one after
	// another while they pass elsewhere, or fail with device errors (off when
	// Threshold is 0).
	Quarantine Quarantine
}

// Attempt is one run of one item.
type Attempt struct {
	Item       int // index into the items
	Number     int // 1 for the first attempt
	Slot       int
	GPU        string
	Start, End time.Time
	RC         int
	// Outcome is how it ended, decided here once (decide) and carried in its Row.
	Outcome   outcome.Outcome
	DeviceErr string
	// Unavailable is set when nothing more can run where commands run (the target
	// container stopped): the run stops dispatching.
	Unavailable error
	// Row is the attempt's timings row, as appended to timings.tsv: the engine
	// decides from these, so a row the disk refused is not lost.
	Row logdir.Timing

	panicked *WorkerPanic // the worker running this attempt panicked
}

// WorkerPanic is a panic of a worker goroutine: the value and the worker's own
// stack. Run stops the other items and returns it in Result.Panic.
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

// Failed reports whether the attempt failed (by its outcome: a no-run fails with
// rc 0).
func (a Attempt) Failed() bool { return a.Outcome.Failed() }

// Result is what phase 4 did.
type Result struct {
	Started  time.Time
	Wall     time.Duration
	Attempts []Attempt
	// Cancelled is true when ctx ended before the queue was empty.
	Cancelled bool
	// Quarantined lists the GPUs taken out of the pool, in order.
	Quarantined []Quarantined
	// Stop is why dispatch ended with items left: every GPU quarantined, where
	// commands run gone, the run cancelled, or a worker's panic; nil when the queue
	// ran empty.
	Stop *logdir.Stop
	// Panic is a worker's panic: the other items were stopped and everything that
	// finished is in Attempts, for phases 5–8 to write before the run exits 70.
	Panic *WorkerPanic
}

func stop(reason outcome.Stop, msg string) *logdir.Stop {
	return &logdir.Stop{Reason: reason, Message: msg, Phase: 4}
}

// Run dispatches every item of q onto the GPU slots and returns when all have ended,
// or, once ctx is cancelled, when the running ones have been stopped.
func Run(ctx context.Context, cfg Config, items []Item, q schedule.Queue) *Result {
	d := &dispatcher{cfg: cfg, items: items, q: q, total: q.Len(), attempts: make([]int, len(items)), again: map[int]bool{}}
	for _, it := range items {
		d.queued(it, +1)
	}
	return d.run(ctx)
}

type dispatcher struct {
	cfg      Config
	items    []Item
	q        schedule.Queue
	total    int
	attempts []int        // per item, attempts started; touched by the loop only
	again    map[int]bool // items queued for another attempt; touched by the loop only

	mu            sync.Mutex // guards the progress figures the console lines read
	done          int
	running       map[int]runningItem // by slot
	queuedWork    float64             // known seconds not yet handed out
	queuedUnknown int                 // unknown items not yet handed out
	consoleM      sync.Mutex
}

type runningItem struct {
	item  int
	start time.Time
}

func (d *dispatcher) run(parent context.Context) *Result {
	res := &Result{Started: d.cfg.Start}
	if res.Started.IsZero() {
		res.Started = time.Now()
	}
	d.running = map[int]runningItem{}
	ctx, stopAll := context.WithCancel(parent)
	defer stopAll()
	health := newHealth(d.cfg.Quarantine, len(d.cfg.GPUs))
	idle := make([]int, len(d.cfg.GPUs))
	for i := range idle {
		idle[i] = i
	}
	finished := make(chan Attempt)
	busy := 0
	launch := func(slot, item int) {
		busy++
		delete(d.again, item)
		d.attempts[item]++
		n := d.attempts[item]
		d.mu.Lock()
		d.running[slot] = runningItem{item: item, start: time.Now()}
		d.queued(d.items[item], -1)
		d.mu.Unlock()
		go func() {
			defer func() {
				if v := recover(); v != nil {
					finished <- Attempt{panicked: &WorkerPanic{Value: v, Stack: debug.Stack()}}
				}
			}()
			finished <- d.runItem(ctx, res.Started, slot, item, n)
		}()
	}
	requeue := func(item, avoid int) {
		if d.again[item] {
			return // already queued for another attempt
		}
		d.again[item] = true
		d.mu.Lock()
		d.queued(d.items[item], +1)
		d.total++
		d.mu.Unlock()
		d.q.Requeue(item, avoid)
	}
	for {
		if ctx.Err() == nil && res.Stop == nil {
			var still []int
			for _, slot := range idle {
				if !health.usable(slot) {
					still = append(still, slot)
					continue
				}
				if i, ok := d.q.Next(slot); ok {
					launch(slot, i)
				} else {
					still = append(still, slot)
				}
			}
			idle = still
			// Everything left avoids the idle slots and nothing runs that could
			// free another one: run it here rather than stall.
			if busy == 0 && d.q.Len() > 0 {
				if slot, ok := health.firstUsable(idle); ok {
					if i, ok := d.q.Next(schedule.AnySlot); ok {
						launch(slot, i)
						idle = remove(idle, slot)
					}
				} else if acts := health.releaseSuspended(); len(acts) > 0 {
					for _, act := range acts {
						d.onHealth(act, res, requeue)
					}
					continue
				} else {
					res.Stop = stop(outcome.StopQuarantined, fmt.Sprintf("every GPU is quarantined (%s) with %d item(s) left to run: check the runner's GPUs", health.summary(d.cfg.GPUs), d.q.Len()))
					d.warn(res.Stop.Message)
				}
			}
		}
		if busy == 0 {
			break
		}
		a := <-finished
		busy--
		if a.panicked != nil {
			d.stopOnPanic(a.panicked, res, stopAll, finished, busy)
			break
		}
		idle = append(idle, a.Slot)
		res.Attempts = append(res.Attempts, a)
		if a.Unavailable != nil && res.Stop == nil {
			res.Stop = stop(outcome.StopUnavailable, fmt.Sprintf("%v; %d item(s) left unrun", a.Unavailable, d.q.Len()))
			d.warn(res.Stop.Message)
		}
		if a.Outcome == outcome.Cancelled || ctx.Err() != nil || res.Stop != nil {
			continue
		}
		// A GPU turning bad explains the failure better than flakiness: quarantine
		// is decided first, and its requeue is not counted as a retry.
		if a.Outcome.Exercised() {
			for _, act := range health.observe(a, d.items[a.Item]) {
				d.onHealth(act, res, requeue)
			}
		}
		if a.Outcome.Retryable() && !d.again[a.Item] && d.attempts[a.Item] <= d.cfg.Retries {
			d.note(fmt.Sprintf("retrying %s (attempt %d of %d %s with rc=%d on gpu%s)",
				d.items[a.Item].Key(), a.Number, d.cfg.Retries+1, ended(a.Outcome), a.RC, a.GPU))
			requeue(a.Item, a.Slot)
		}
	}
	res.Wall = time.Since(res.Started)
	// Only the caller's cancel is a cancelled run; stopping the items after a
	// panic is not.
	res.Cancelled = parent.Err() != nil && (d.q.Len() > 0 || anyCancelled(res.Attempts))
	if res.Cancelled && res.Stop == nil {
		res.Stop = stop(outcome.StopCancelled, fmt.Sprintf("the run was cancelled with %d item(s) left to run", d.q.Len()))
	}
	return res
}

// stopOnPanic handles a worker's panic: the other items are stopped first (TERM,
// then KILL after the grace period; their process groups would outlive this
// process), what they recorded is kept, and the panic goes back to the caller in
// the result, so phases 5–8 still write what was measured.
func (d *dispatcher) stopOnPanic(p *WorkerPanic, res *Result, stopAll context.CancelFunc, finished <-chan Attempt, busy int) {
	stopAll()
	for ; busy > 0; busy-- {
		if a := <-finished; a.panicked == nil {
			res.Attempts = append(res.Attempts, a)
		}
	}
	res.Panic = p
	msg := strings.Join(strings.Fields(p.Error()), " ")
	res.Stop = stop(outcome.StopInternal, fmt.Sprintf("internal error in sgpu-queue: %s; %d item(s) left unrun", msg, d.q.Len()))
	d.warn(res.Stop.Message)
}

// onHealth carries out what the GPU health tracker decided.
func (d *dispatcher) onHealth(act action, res *Result, requeue func(item, avoid int)) {
	switch act.kind {
	case actSuspect:
		d.warn(fmt.Sprintf("gpu%s suspended: %s; its failed items run again on other GPUs to tell a bad GPU from bad tests", d.cfg.GPUs[act.slot], act.reason))
	case actQuarantine:
		q := Quarantined{GPU: d.cfg.GPUs[act.slot], Reason: act.reason, At: time.Now()}
		res.Quarantined = append(res.Quarantined, q)
		d.warn(fmt.Sprintf("gpu%s quarantined: %s; no more items are scheduled on it", q.GPU, q.Reason))
	case actRelease:
		d.note(fmt.Sprintf("gpu%s back in the pool: %s", d.cfg.GPUs[act.slot], act.reason))
	case actRequeue:
		requeue(act.item, act.slot)
	}
}

func remove(s []int, v int) []int {
	out := s[:0]
	for _, x := range s {
		if x != v {
			out = append(out, x)
		}
	}
	return out
}

// queued counts an item into (+1) or out of (-1) the work not yet handed out.
func (d *dispatcher) queued(it Item, sign int) {
	if it.Known {
		d.queuedWork += float64(sign) * it.Weight
	} else {
		d.queuedUnknown += sign
	}
}

// ended says how a retried attempt ended, for the console.
func ended(o outcome.Outcome) string {
	switch o {
	case outcome.Timeout:
		return "timed out"
	case outcome.CutOff:
		return "was cut off"
	}
	return "failed"
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

// runItem runs one attempt and records it: log, rc file, timings row, console line.
func (d *dispatcher) runItem(ctx context.Context, t0 time.Time, slot, idx, n int) Attempt {
	it := d.items[idx]
	gpu := d.cfg.GPUs[slot]
	l := d.cfg.Layout
	a := Attempt{Item: idx, Number: n, Slot: slot, GPU: gpu}

	if n > 1 {
		// The canonical log holds the last attempt (the one the verdict is
		// from); earlier ones keep theirs beside it.
		keepAttempt(l, it.Label, it.Tag, n-1, d.warn)
	}
	log := openLog(l.ItemLog(it.Label, it.Tag), d.warn)
	cmd, cwd, cmdErr := d.command(it, gpu, log)

	ictx := ctx
	limit, why := d.deadline(it)
	if limit > 0 {
		var cancel context.CancelFunc
		ictx, cancel = context.WithTimeoutCause(ctx, limit, errHang)
		defer cancel()
	}

	a.Start = time.Now()
	var e evidence
	if cmdErr != nil {
		e.runErr = cmdErr
	} else if err := mkdir(cwd); err != nil {
		e.runErr = fmt.Errorf("cannot create the item's working directory: %w", err)
	} else {
		e.res, e.runErr = d.cfg.Exec.Run(ictx, cmd)
	}
	a.End = time.Now()
	e.hang = ctx.Err() == nil && errors.Is(context.Cause(ictx), errHang)
	if e.runErr == nil && !e.res.Cancelled {
		e.partial = d.partialLeft(it, a.Start)
		e.junit, e.wroteXML = d.junitEvidence(it, a.Start)
	}
	a.Outcome = decide(e)
	a.RC = e.res.ExitCode
	switch a.Outcome {
	case outcome.Unavailable:
		// Its container went away under it: 137, as TE's readers know a row
		// killed from outside.
		a.RC, a.Unavailable = sigkill, e.runErr
	case outcome.Timeout:
		a.RC = 124
	case outcome.Failed:
		if e.runErr != nil {
			a.RC = 127 // it could not start: that is its failure
		}
	}
	if msg := d.explain(it, a, e, limit, why); msg != "" {
		fmt.Fprintf(log, "\n%s\n", msg)
	}
	if err := log.Close(); err != nil {
		d.warn(err.Error())
	}
	if a.Failed() && a.Outcome.Exercised() {
		a.DeviceErr = deviceError(l.ItemLog(it.Label, it.Tag))
	}
	removeIfEmpty(cwd)
	if err := writeRC(l.ItemRC(it.Label, it.Tag), a.RC); err != nil {
		d.warn(fmt.Sprintf("%s: %v", l.ItemRC(it.Label, it.Tag), err))
	}
	a.Row = d.row(it, a, t0)
	if d.cfg.Timings != nil {
		if err := d.cfg.Timings.Append(a.Row); err != nil {
			d.warn(fmt.Sprintf("cannot record %s: %v", it.Key(), err))
		}
	}
	d.line(a, t0)
	return a
}

// row is the attempt's timings row (with its outcome), as the files hold it.
func (d *dispatcher) row(it Item, a Attempt, t0 time.Time) logdir.Timing {
	row := logdir.Timing{
		Label: it.Label, Item: logdir.ItemColumn(it.Tag), GPU: a.GPU,
		Secs: a.Seconds(), RC: a.RC,
		StartOff: a.Start.Sub(t0).Seconds(), EndOff: a.End.Sub(t0).Seconds(),
		Est: "unknown", Incomplete: a.Outcome.Incomplete(), Outcome: a.Outcome,
	}
	if it.Known {
		row.Est = logdir.Secs(it.Weight)
	}
	return row.Rounded()
}

func (d *dispatcher) mapPath(p string) (string, error) {
	if d.cfg.MapPath == nil {
		return p, nil
	}
	return d.cfg.MapPath(p)
}

func (d *dispatcher) warn(msg string) {
	if d.cfg.Warn != nil {
		d.cfg.Warn(msg)
	}
}

// note prints an informational line among the item lines.
func (d *dispatcher) note(msg string) {
	d.consoleM.Lock()
	fmt.Fprintf(d.cfg.Console, "  %s\n", msg)
	d.consoleM.Unlock()
}
