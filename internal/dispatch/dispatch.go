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

	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/executor"
	"github.com/rocm/sgpu-queue/internal/hook"
	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/schedule"
)

// Item is one queued work item with the suite that runs it.
type Item struct {
	schedule.Item
	Suite config.Suite
}

// Opaque reports whether the item is a whole opaque suite.
func (it Item) Opaque() bool { return it.Suite.Mode == config.Opaque }

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
	Incomplete bool // a .partial sidecar outlived it, or it was cut off by a cancel
	Cancelled  bool // stopped because the run was cancelled
	TimedOut   bool // killed at its hang deadline (RC 124)
	DeviceErr  string
	// Unavailable is set when nothing more can run where commands run (the target
	// container stopped): the run stops dispatching.
	Unavailable error
	// Row is the attempt's timings row, as appended to timings.tsv: the engine
	// decides from these, so a row the disk refused is not lost.
	Row logdir.Timing

	panicked *WorkerPanic // the worker running this attempt panicked
}

// WorkerPanic is what Run panics with when a worker goroutine panicked: the value
// and the worker's own stack.
type WorkerPanic struct {
	Value any
	Stack []byte
}

func (p *WorkerPanic) Error() string { return fmt.Sprint(p.Value) }

// Seconds is the attempt's duration.
func (a Attempt) Seconds() float64 { return a.End.Sub(a.Start).Seconds() }

// Failed reports whether the attempt failed.
func (a Attempt) Failed() bool { return a.RC != 0 }

// Result is what phase 4 did.
type Result struct {
	Started  time.Time
	Wall     time.Duration
	Attempts []Attempt
	// Cancelled is true when ctx ended before the queue was empty.
	Cancelled bool
	// Quarantined lists the GPUs taken out of the pool, in order.
	Quarantined []Quarantined
	// Stalled is set when every GPU was quarantined with items left to run.
	Stalled error
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

func (d *dispatcher) run(ctx context.Context) *Result {
	res := &Result{Started: d.cfg.Start}
	if res.Started.IsZero() {
		res.Started = time.Now()
	}
	d.running = map[int]runningItem{}
	ctx, stopAll := context.WithCancel(ctx)
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
		if ctx.Err() == nil && res.Stalled == nil {
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
					res.Stalled = fmt.Errorf("every GPU is quarantined (%s) with %d item(s) left to run: check the runner's GPUs", health.summary(d.cfg.GPUs), d.q.Len())
					d.warn(res.Stalled.Error())
				}
			}
		}
		if busy == 0 {
			break
		}
		a := <-finished
		if a.panicked != nil {
			// Stop the other items first (TERM, then KILL after the grace period):
			// their process groups would outlive this process. Then raise it again
			// here, in the caller's goroutine, where the CLI turns it into one
			// line; left in the worker it would end the process with a raw stack.
			stopAll()
			for busy--; busy > 0; busy-- {
				<-finished
			}
			panic(a.panicked)
		}
		busy--
		idle = append(idle, a.Slot)
		res.Attempts = append(res.Attempts, a)
		if a.Unavailable != nil && res.Stalled == nil {
			res.Stalled = fmt.Errorf("%v; %d item(s) left unrun", a.Unavailable, d.q.Len())
			d.warn(res.Stalled.Error())
		}
		if a.Cancelled || ctx.Err() != nil || res.Stalled != nil {
			continue
		}
		// A GPU turning bad explains the failure better than flakiness: quarantine
		// is decided first, and its requeue is not counted as a retry.
		for _, act := range health.observe(a, d.items[a.Item]) {
			d.onHealth(act, res, requeue)
		}
		if a.Failed() && !d.again[a.Item] && d.attempts[a.Item] <= d.cfg.Retries {
			d.note(fmt.Sprintf("retrying %s (attempt %d of %d failed with rc=%d on gpu%s)",
				d.items[a.Item].Key(), a.Number, d.cfg.Retries+1, a.RC, a.GPU))
			requeue(a.Item, a.Slot)
		}
	}
	res.Wall = time.Since(res.Started)
	res.Cancelled = ctx.Err() != nil && (d.q.Len() > 0 || anyCancelled(res.Attempts))
	return res
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

func anyCancelled(as []Attempt) bool {
	for _, a := range as {
		if a.Cancelled {
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
	cwd := l.ItemCwd(it.Label, it.Tag)
	log := openLog(l.ItemLog(it.Label, it.Tag), d.warn)
	env, envErr := d.env(it, gpu)

	ictx := ctx
	limit := d.cfg.Timeout.For(it.Item)
	if limit > 0 {
		var cancel context.CancelFunc
		ictx, cancel = context.WithTimeoutCause(ctx, limit, errHang)
		defer cancel()
	}

	a.Start = time.Now()
	var res executor.Result
	var runErr error
	if envErr != nil {
		runErr = envErr
	} else if err := mkdir(cwd); err != nil {
		runErr = fmt.Errorf("cannot create the item's working directory: %v", err)
	} else {
		res, runErr = d.cfg.Exec.Run(ictx, executor.Command{
			Path: it.Suite.Path, Args: it.Suite.Args, Env: env, Dir: cwd, Stdout: log, Stderr: log,
			Name: "item " + it.Key(),
		})
	}
	a.End = time.Now()
	a.RC = res.ExitCode
	switch {
	case errors.Is(runErr, executor.ErrUnavailable):
		// Its container went away under it: cut off, like a kill from outside.
		a.RC, a.Incomplete, a.Unavailable = 137, true, runErr
		fmt.Fprintf(log, "\nsgpu-queue: %v\n", runErr)
	case runErr != nil:
		// The item could not start: that is its failure, recorded like any other.
		a.RC = 127
		fmt.Fprintf(log, "\nsgpu-queue: %v\n", runErr)
	case res.Cancelled && ctx.Err() == nil && errors.Is(context.Cause(ictx), errHang):
		a.TimedOut, a.RC = true, 124
		fmt.Fprintf(log, "\nsgpu-queue: killed after %.1fs: past its hang deadline of %s (%s)\n", a.Seconds(), limit, d.cfg.Timeout.Explain(it.Item))
	case res.Cancelled:
		a.Cancelled, a.Incomplete = true, true
		fmt.Fprintf(log, "\nsgpu-queue: cancelled after %.1fs (run stopped)\n", a.Seconds())
	}
	if !a.Cancelled && a.Unavailable == nil {
		a.Incomplete = d.partialLeft(it, a.Start)
	}
	if err := log.Close(); err != nil {
		d.warn(err.Error())
	}
	if a.Failed() && !a.Cancelled {
		a.DeviceErr = deviceError(l.ItemLog(it.Label, it.Tag))
	}
	removeIfEmpty(cwd)
	if err := writeRC(l.ItemRC(it.Label, it.Tag), a.RC); err != nil {
		d.warn(fmt.Sprintf("%s: %v", l.ItemRC(it.Label, it.Tag), err))
	}
	row := logdir.Timing{
		Label: it.Label, Item: logdir.ItemColumn(it.Tag), GPU: gpu,
		Secs: a.Seconds(), RC: a.RC,
		StartOff: a.Start.Sub(t0).Seconds(), EndOff: a.End.Sub(t0).Seconds(),
		Est: "unknown", Incomplete: a.Incomplete,
	}
	if it.Known {
		row.Est = logdir.Secs(it.Weight)
	}
	row = row.Rounded()
	a.Row = row
	if d.cfg.Timings != nil {
		if err := d.cfg.Timings.Append(row); err != nil {
			d.warn(fmt.Sprintf("timings.tsv: cannot record %s: %v", it.Key(), err))
		}
	}
	d.line(a, t0)
	return a
}

// env is the item's environment: the hook contract, its GPU, its JUnit prefix.
func (d *dispatcher) env(it Item, gpu string) ([]string, error) {
	e := d.cfg.Hooks.ItemEnv(d.cfg.Env, d.cfg.Level, it.Tag, it.Opaque()).With(hook.Assign(gpu, append([]string{d.cfg.PinVar}, d.cfg.AlsoPin...)...)...)
	if d.cfg.JUnitPrefix != "" {
		p, err := d.mapPath(d.cfg.JUnitPrefix + it.Label)
		if err != nil {
			return nil, err
		}
		e = e.With(d.cfg.Hooks.JUnitPrefix + "=" + strings.TrimSuffix(p, "/") + "/")
		if d.cfg.JUnitSuffix != "" {
			// The suffix goes with the prefix: TE's scripts write
			// <prefix><tag><suffix> and add no extension of their own.
			e = e.With(d.cfg.Hooks.JUnitSuffix + "=" + d.cfg.JUnitSuffix)
		}
	}
	return e, nil
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
