package dispatch

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/rocm/sgpu-queue/internal/expand"
	"github.com/rocm/sgpu-queue/internal/schedule"
	"github.com/rocm/sgpu-queue/internal/textfmt"
)

// progress is what the console lines count. Workers and the loop both use it, so
// every method takes mu, which also makes a line's count and print one step, so
// lines come out in count order. A dropped attempt leaves total for notRun, so the
// last line reads M/M (docs/outcomes.md, "The console line").
type progress struct {
	out io.Writer

	mu            sync.Mutex
	gpus          int // GPUs not quarantined, over which the eta spreads the work
	done          int
	total         int                 // attempts to make: the items, plus each retry queued
	notRun        int                 // attempts that will not be made: dropped or refused
	running       map[int]runningItem // by item
	cal           *schedule.Calibration
	queuedWork    []float64 // by suite (cal.Suite): GPU-seconds of weight not yet handed out
	queuedUnknown int       // items without an estimate not yet handed out
	shown         [3]int    // done, total, notRun as the last line showed them
	stopped       bool      // the run stopped: what is queued will not run
}

type runningItem struct {
	width int
	start time.Time
	known bool
	// weight is the item's estimate (when it has one), before calibration.
	weight float64
}

// newProgress starts the count at total attempts to make; cal (or nil) calibrates
// the estimates.
func newProgress(out io.Writer, gpus, total int, items []expand.Item, cal *schedule.Calibration) *progress {
	p := &progress{out: out, gpus: gpus, total: total, running: map[int]runningItem{}, cal: cal,
		queuedWork: make([]float64, cal.Suites())}
	for i, it := range items {
		p.count(i, it, +1)
	}
	return p
}

// count counts item i into (+1) or out of (-1) the work not yet handed out.
// Caller holds p.mu (newProgress: p is not shared yet).
func (p *progress) count(i int, it expand.Item, sign int) {
	if it.Estimated() {
		p.queuedWork[p.cal.Suite(i)] += float64(sign*it.Width()) * it.Weight
	} else {
		p.queuedUnknown += sign
	}
}

// started moves item from the queued work to the running one.
func (p *progress) started(item int, it expand.Item, at time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running[item] = runningItem{width: it.Width(), start: at, known: it.Estimated(), weight: it.Weight}
	p.count(item, it, -1)
}

// retried counts another attempt of item that was due: queued, or refused (it no
// longer fits the pool) and counted as not run, as dropped counts a queued one.
func (p *progress) retried(item int, it expand.Item, queued bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !queued {
		p.notRun++
		return
	}
	p.count(item, it, +1)
	p.total++
}

// dropped counts a queued attempt that will not be made as not run.
func (p *progress) dropped(item int, it expand.Item) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.count(item, it, -1)
	p.total--
	p.notRun++
}

// stop counts the n queued attempts left when the run stops as not run, so the
// running items' lines count only what will end. Only the first call counts.
func (p *progress) stop(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	p.stopped = true
	p.total -= n
	p.notRun += n
	clear(p.queuedWork)
	p.queuedUnknown = 0
}

// shrank sets the GPUs the eta spreads the work over: quarantine took one out.
func (p *progress) shrank(gpus int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gpus = gpus
}

// finished counts item done at end and prints its line: head, then the count and
// the eta, then tail.
func (p *progress) finished(item int, end time.Time, head, tail string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.running, item)
	p.done++
	fmt.Fprintf(p.out, "%s  %s%s\n", head, p.counts(p.eta(end)), tail)
}

// close prints the final count when attempts were dropped after the last line, so
// the console never ends on a stale count.
func (p *progress) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown == [3]int{p.done, p.total, p.notRun} || p.notRun == 0 {
		return
	}
	fmt.Fprintf(p.out, "  %s\n", p.counts(""))
}

// counts is "[done/total<eta>, n not run]" (no "not run" when none), remembered as
// shown. Caller holds p.mu.
func (p *progress) counts(eta string) string {
	p.shown = [3]int{p.done, p.total, p.notRun}
	s := fmt.Sprintf("[%d/%d%s", p.done, p.total, eta)
	if p.notRun > 0 {
		s += fmt.Sprintf(", %d not run", p.notRun)
	}
	return s + "]"
}

// note prints an informational line among the item lines.
func (p *progress) note(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.out, "  %s\n", msg)
}

// eta is the calibrated GPU-seconds left spread over the GPUs left; items without
// an estimate are counted, not guessed. Caller holds p.mu.
func (p *progress) eta(now time.Time) string {
	work := 0.0
	unknown := 0
	for i, r := range p.running {
		if !r.known {
			unknown++
			continue
		}
		work += float64(r.width) * max(0, p.cal.Estimate(i, r.weight)-now.Sub(r.start).Seconds())
	}
	work += p.cal.Work(p.queuedWork)
	unknown += p.queuedUnknown
	left := textfmt.Dur(max(0, work/float64(max(p.gpus, 1))))
	s := " eta " + left
	if unknown > 0 {
		s = fmt.Sprintf(" eta ≥%s +%d unknown", left, unknown)
	}
	return s
}

// name is how console and warning lines name an item: quoted, so a hostile tag can
// neither break a line nor read as two words.
func name(it expand.Item) string { return textfmt.Printable(it.Key()) }

// ShownTag is how the console names an item's tag: "(whole)" for an opaque item,
// else the tag, quoted when needed (textfmt.Printable).
func ShownTag(tag string) string {
	if tag == "" {
		return "(whole)"
	}
	return textfmt.Printable(tag)
}

// line prints the console line of a finished attempt (docs/outcomes.md):
//
//	[14:03:07] gpu1 t+20m04s 260s rc=0 est=245s torch test_numerics.ck.amax+triton  [12/80 eta 21m04s]
//	[14:03:09] gpu2 t+20m06s 0.2s rc=0 est=31s torch test_gemm.ck  [13/80 eta 20m51s] no-run
//	[14:09:30] gpu2,3 t+20m10s 380s rc=0 est=360s torch-mgpu distributed.test_numerics  [14/80 eta 19m37s]
func (d *dispatcher) line(a Attempt, t0 time.Time) {
	it := d.items[a.Item]
	est := "unknown"
	switch {
	case it.Known:
		est = textfmt.Dur(it.Weight)
	case it.Estimated():
		est = "~" + textfmt.Dur(it.Weight) // a prior (docs/weights.md)
	}
	head := fmt.Sprintf("[%s] gpu%s t+%s %s rc=%d est=%s %s %s",
		a.End.Format("15:04:05"), a.GPU(), textfmt.Dur(a.Start.Sub(t0).Seconds()), textfmt.Dur(a.Seconds()), a.RC, est,
		it.Label, ShownTag(it.Tag))
	// The exit code says ok or failed; any other outcome is named.
	tail := ""
	if a.Outcome.Named() {
		tail = " " + string(a.Outcome)
	}
	d.progress.finished(a.Item, a.End, head, tail)
}
