package dispatch

import (
	"context"
	"fmt"
	"runtime/debug"
	"slices"
	"time"

	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/schedule"
	"github.com/rocm/sgpu-queue/internal/textfmt"
)

// loop is the dispatch loop's state. Only the loop's goroutine touches it; a
// worker gets its context and clock as values and sends its attempt on finished.
type loop struct {
	res      *Result
	ctx      context.Context // the items' context: cancelled by the caller or a panic
	stopAll  context.CancelFunc
	health   *health
	idle     []int // GPU positions not running an item, in the order they went idle
	running  []schedule.Running
	finished chan Attempt
	busy     int // attempts started and not yet received
}

func (d *dispatcher) run(parent context.Context) *Result {
	res := &Result{Started: d.cfg.Start}
	if res.Started.IsZero() {
		res.Started = time.Now()
	}
	ctx, stopAll := context.WithCancel(parent)
	defer stopAll()
	l := &loop{res: res, ctx: ctx, stopAll: stopAll, health: newHealth(d.cfg.Quarantine, len(d.cfg.GPUs)),
		idle: make([]int, len(d.cfg.GPUs)), finished: make(chan Attempt)}
	for i := range l.idle {
		l.idle[i] = i
	}
	for {
		if ctx.Err() == nil && res.Stop == nil && d.fill(l) {
			continue // GPUs came back to the pool: ask again
		}
		if ctx.Err() != nil || res.Stop != nil {
			d.progress.stop(d.sched.Len())
		}
		if l.busy == 0 {
			break
		}
		a := d.wait(l)
		l.busy--
		if a.panicked != nil {
			d.stopOnPanic(a.panicked, l)
			break
		}
		d.ended(l, a)
	}
	d.progress.close()
	res.Wall = time.Since(res.Started)
	// Only the caller's cancel is a cancelled run; stopping the items after a
	// panic is not.
	res.Cancelled = parent.Err() != nil && (d.sched.Len() > 0 || anyCancelled(res.Attempts))
	if res.Cancelled && res.Stop == nil {
		res.Stop = stop(outcome.StopCancelled, fmt.Sprintf("the run was cancelled with %d item(s) left to run", d.sched.Len()))
	}
	return res
}

// fill starts every item the scheduler hands out on the free GPUs. When nothing
// runs and nothing could start, it gives suspended GPUs back (and reports true: ask
// again), or stops the run: no usable GPU is left.
func (d *dispatcher) fill(l *loop) bool {
	for {
		free := l.free()
		if len(free) == 0 {
			break
		}
		now := time.Since(l.res.Started).Seconds()
		item, gpus, ok := d.sched.Next(now, free, l.running)
		d.noteHold(now)
		if !ok {
			break
		}
		d.launch(l, item, gpus, now)
	}
	if l.busy > 0 || d.sched.Len() == 0 {
		return false
	}
	// Nothing runs that could free a GPU, and what is left fits none of the free
	// ones: the suspended GPUs are all that could run it.
	if acts := l.health.releaseSuspended(); len(acts) > 0 {
		for _, act := range acts {
			d.onHealth(l, act)
		}
		return true
	}
	if l.health.left() == 0 {
		l.res.Stop = d.allQuarantined(l, d.sched.Len())
	} else {
		// The scheduler starts whatever fits when nothing runs, and drops what no
		// longer fits the pool: this is a bug, reported rather than hung on.
		l.res.Stop = stop(outcome.StopInternal, fmt.Sprintf("internal error in sgpu-queue: the scheduler holds %d item(s) but starts none on "+
			"%d free GPU(s)", d.sched.Len(), len(l.free())))
	}
	d.warn(l.res.Stop.Message)
	return false
}

// wait returns the next attempt to end. A cancel stops the count at once rather
// than at the next attempt's end, so the lines of the items it stops already count
// what will end.
func (d *dispatcher) wait(l *loop) Attempt {
	select {
	case a := <-l.finished:
		return a
	case <-l.ctx.Done():
		d.progress.stop(d.sched.Len())
		return <-l.finished
	}
}

// free is the idle GPUs the health tracker lets items run on.
func (l *loop) free() []int {
	var out []int
	for _, g := range l.idle {
		if l.health.usable(g) {
			out = append(out, g)
		}
	}
	return out
}

// launch starts attempt n of item on the GPUs at positions gpus.
func (d *dispatcher) launch(l *loop, item int, gpus []int, now float64) {
	l.busy++
	l.idle = slices.DeleteFunc(l.idle, func(g int) bool { return slices.Contains(gpus, g) })
	l.running = append(l.running, schedule.Running{Item: item, GPUs: gpus, Start: now})
	delete(d.again, item)
	d.attempts[item]++
	n := d.attempts[item]
	d.progress.started(item, d.items[item], time.Now())
	// The worker gets what it needs as values: the loop's state stays the loop's
	// (the deadline, from the calibration as it stands at the start).
	ctx, t0, finished := l.ctx, l.res.Started, l.finished
	limit := d.deadline(d.items[item], d.sched.Calibration().Factor(item))
	go func() {
		defer func() {
			if v := recover(); v != nil {
				finished <- Attempt{panicked: &WorkerPanic{Value: v, Stack: debug.Stack()}}
			}
		}()
		finished <- d.runItem(ctx, t0, gpus, item, n, limit)
	}()
}

// ended records a finished attempt and decides about its GPUs and its retry.
func (d *dispatcher) ended(l *loop, a Attempt) {
	l.running = slices.DeleteFunc(l.running, func(r schedule.Running) bool { return r.Item == a.Item })
	l.idle = append(l.idle, a.Slots...)
	res := l.res
	res.Attempts = append(res.Attempts, a)
	if a.Outcome == outcome.OK {
		// Only a complete attempt says how long the item takes (docs/performance.md).
		d.sched.Calibration().Observe(a.Item, a.Seconds())
	}
	if a.Unavailable != nil && res.Stop == nil {
		res.Stop = stop(outcome.StopUnavailable, fmt.Sprintf("%v; %d item(s) left unrun", a.Unavailable, d.sched.Len()))
		d.warn(res.Stop.Message)
	}
	if a.Outcome == outcome.Cancelled || l.ctx.Err() != nil || res.Stop != nil {
		return
	}
	// A GPU turning bad explains the failure better than flakiness: quarantine
	// is decided first, and its requeue is not counted as a retry.
	if a.Outcome.Exercised() {
		for _, act := range l.health.observe(a, d.items[a.Item]) {
			d.onHealth(l, act)
		}
	}
	if a.Outcome.Retryable() && d.attempts[a.Item] <= d.cfg.Retries && d.requeue(l, a.Item, a.Slots) {
		d.note(fmt.Sprintf("retrying %s (attempt %d of %d %s with rc=%d on gpu%s)",
			name(d.items[a.Item]), a.Number, d.cfg.Retries+1, a.Outcome.Ended(), a.RC, a.GPU()))
	}
}

// requeue queues item for another attempt, avoiding the GPUs avoid while others can
// take it; an item that no longer fits the pool is reported unfit.
func (d *dispatcher) requeue(l *loop, item int, avoid []int) bool {
	if d.again[item] || l.res.Stop != nil {
		// Already queued for another attempt, or the run stopped (every GPU
		// quarantined): nothing more is queued.
		return false
	}
	queued := d.sched.Requeue(item, avoid)
	d.progress.retried(item, d.items[item], queued)
	if !queued {
		d.unfit(l, item, "is not run again")
		return false
	}
	d.again[item] = true
	return true
}

// unfit records an item that needs more GPUs than are left in the pool.
func (d *dispatcher) unfit(l *loop, item int, what string) {
	it := d.items[item]
	u := record.Unfit{ItemID: it.ItemID, GPUs: it.Width(), Pool: l.health.left()}
	l.res.Unfit = append(l.res.Unfit, u)
	d.warn(fmt.Sprintf("%s %s: it needs %s and quarantine left %d in the pool (%s out)", name(it), what, textfmt.Count(u.GPUs, "GPU"), u.Pool,
		l.health.summary(d.cfg.GPUs)))
}

// stopOnPanic stops the other items first, as their process groups would outlive
// this process, and returns the panic so phases 5–8 still write what was measured.
func (d *dispatcher) stopOnPanic(p *WorkerPanic, l *loop) {
	l.stopAll()
	d.progress.stop(d.sched.Len())
	res := l.res
	for ; l.busy > 0; l.busy-- {
		if a := <-l.finished; a.panicked == nil {
			res.Attempts = append(res.Attempts, a)
		}
	}
	res.Panic = p
	msg := textfmt.OneLine(p.Error())
	res.Stop = stop(outcome.StopInternal, fmt.Sprintf("internal error in sgpu-queue: %s; %d item(s) left unrun", msg, d.sched.Len()))
	d.warn(res.Stop.Message)
}

// onHealth carries out what the GPU health tracker decided.
func (d *dispatcher) onHealth(l *loop, act action) {
	switch act.kind {
	case actSuspect:
		d.warn(fmt.Sprintf("gpu%s suspended: %s; its failed items run again on other GPUs to tell a bad GPU from bad tests",
			d.cfg.GPUs[act.slot], act.reason))
	case actQuarantine:
		q := record.Quarantined{GPU: d.cfg.GPUs[act.slot], Reason: act.reason, At: time.Now()}
		l.res.Quarantined = append(l.res.Quarantined, q)
		// Before the warning: every line printed after it has its eta over the
		// GPUs left.
		d.progress.shrank(l.health.left())
		d.warn(fmt.Sprintf("gpu%s quarantined: %s; no more items are scheduled on it", q.GPU, q.Reason))
		d.remove(l, act.slot)
	case actRelease:
		d.note(fmt.Sprintf("gpu%s back in the pool: %s", d.cfg.GPUs[act.slot], act.reason))
	case actRequeue:
		d.requeue(l, act.item, []int{act.slot})
	}
}

// remove takes a quarantined GPU out of the scheduler's pool; items that no longer
// fit are reported unfit, and with no GPU left the run stops.
func (d *dispatcher) remove(l *loop, slot int) {
	unfit := d.sched.Remove(slot)
	for _, i := range unfit {
		d.progress.dropped(i, d.items[i])
	}
	if l.health.left() == 0 {
		if len(unfit) > 0 && l.res.Stop == nil {
			l.res.Stop = d.allQuarantined(l, len(unfit))
			d.warn(l.res.Stop.Message)
		}
		return
	}
	for _, i := range unfit {
		what := "is not run"
		if d.again[i] {
			what = "is not run again"
			delete(d.again, i)
		}
		d.unfit(l, i, what)
	}
}

// allQuarantined is the stop of a run whose every GPU is quarantined with n items
// left to run.
func (d *dispatcher) allQuarantined(l *loop, n int) *record.Stop {
	return stop(outcome.StopQuarantined, fmt.Sprintf("every GPU is quarantined (%s) with %d item(s) left to run: check the runner's GPUs",
		l.health.summary(d.cfg.GPUs), n))
}

// noteHold prints, once per item, that GPUs are held for it, so idle GPUs are
// explained (docs/suites.md#multi-gpu-suites).
func (d *dispatcher) noteHold(now float64) {
	item, at, ok := d.sched.Hold()
	if !ok || d.held[item] {
		return
	}
	d.held[item] = true
	it := d.items[item]
	when := fmt.Sprintf("by the estimates it starts at t+%s", textfmt.Dur(at))
	if at <= now {
		when = "it starts when a running item that is unknown or past its estimate ends"
	}
	d.note(fmt.Sprintf("holding GPUs for %s (%d GPUs) since t+%s: %s; meanwhile only items expected to end by then run on the held GPUs",
		name(it), it.Width(), textfmt.Dur(now), when))
}
