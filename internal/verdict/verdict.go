// Package verdict decides one pass/fail per suite from its items' outcomes, and the run's exit code, written in
// TransformerEngine's layout (suites/<logfile>, .rc) so the CI gates that read it keep working.
package verdict

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/rocm/sgpu-queue/internal/exitcode"
	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/record"
)

// Item is the one result of one queued item, decided once from its attempts (docs/outcomes.md); every reader reads it.
type Item struct {
	record.ItemID
	// Result is its last attempt's, or, when it never finished, RC and Failed as its run's stop decides.
	record.Result
	LogRel string // items/<label>.<safetag>.log
	// Attempts are its attempts in the order they ended; its verdict is the last one's. None: never
	// finished, or carried.
	Attempts []record.Attempt
	Finished bool // it has an attempt; false: never finished
	// Started: it has an attempt, or its log is there (running when its run died); one that never started has no log.
	Started bool
	GPU     string // its last attempt's GPUs, as the run names them ("2,3", "s2:0")
	// Estimate is what its last attempt was dispatched (or it was queued) with; Known when the table gave it.
	Estimate float64
	Known    bool
	Note     string // "never finished", "cancelled", "timed out", "cut off", "no-run: …", "flaky"...
	// Stop is why the run (or its shard's) stopped, for an item that never finished; "" when finished or unknown.
	Stop outcome.Stop
	// Shard is the shard that ran it (or should have) in a merged run; 0 otherwise.
	Shard int
	// Unclaimed: in a merge, other shards listed it and its own did not, so none ran it.
	Unclaimed bool
	// Carried: its shard's re-run did not run it again; its verdict is its earlier outcome.
	Carried bool
}

// Log is the item's log relative to the log dir, "" when it never started.
func (it Item) Log() string {
	if !it.Started {
		return ""
	}
	return it.LogRel
}

// Last is its last attempt in the run; the zero Attempt when it has none.
func (it Item) Last() record.Attempt {
	if len(it.Attempts) == 0 {
		return record.Attempt{}
	}
	return it.Attempts[len(it.Attempts)-1]
}

// Suite is one suite's verdict.
type Suite struct {
	Label, LogFile string
	Mode           string
	Items          []Item
	Failed         int
	Flaky          int
	RC             int     // the largest exit code of its failed items (at least 1); see Decide
	Seconds        float64 // its attempts' wall seconds
	GPUSeconds     float64 // its attempts' GPU time: seconds × GPUs
	// Unlisted: the run stopped before the suite's items were known; it fails with no items.
	Unlisted bool
	// Broken says why the suite's listing or setup failed (outcome.Stop.SuiteFailed); the suite then fails whatever
	// its items did. "" otherwise.
	Broken string
	// Skip says why the suite did not run and passes all the same (--suites, a re-run with nothing to
	// run); "" if it ran.
	Skip outcome.Skip
}

// Passed reports whether every item of the suite passed.
func (s Suite) Passed() bool { return s.Failed == 0 && !s.Unlisted && s.Broken == "" }

// BrokenLine is the line of suites/<logfile> that says why a broken suite failed.
func (s Suite) BrokenLine() string { return fmt.Sprintf("FAIL rc=%d (%s)", s.RC, s.Broken) }

// Decide computes every suite's verdict, each item by its last attempt's outcome (docs/outcomes.md). An item that
// never finished fails; a failed item whose exit code says nothing counts as rc 1, a cancelled unstarted one as
// exitcode.Interrupted.
func Decide(r *record.Run) []Suite {
	rows := map[record.ItemID][]record.Attempt{}
	for _, a := range r.Attempts {
		rows[a.ItemID] = append(rows[a.ItemID], a)
	}
	// A queued estimate of the default weight or more is none (docs/files.md).
	known := func(w float64) bool { return !(r.Meta.DefaultWeight > 0 && w >= r.Meta.DefaultWeight) }
	idx := map[string]int{}
	suites := make([]Suite, len(r.Meta.Suites))
	for i, ms := range r.Meta.Suites {
		suites[i] = Suite{Label: ms.Label, LogFile: ms.LogFile, Mode: ms.Mode, Skip: ms.Skip}
		idx[ms.Label] = i
	}
	d := newDecider(r)
	for _, q := range r.Queue {
		si, ok := idx[q.Label]
		if !ok {
			continue
		}
		s := &suites[si]
		rs := rows[q.ItemID]
		it := Item{
			ItemID:   q.ItemID,
			Result:   record.Result{Tries: len(rs)},
			LogRel:   logdir.ItemLogRel(q.Label, q.Tag),
			Attempts: rs,
			Estimate: q.Weight,
			Known:    known(q.Weight),
			Shard:    r.ShardOf[q.ItemID],
		}
		if len(rs) > 0 {
			d.finished(&it, rs)
			for _, e := range rs {
				s.Seconds += e.Secs
				s.GPUSeconds += e.GPUSeconds()
			}
		} else if c, ok := d.carried[q.ItemID]; ok {
			d.fromCarried(&it, c)
		} else {
			d.unfinished(&it)
			it.Started = d.logThere(q.Label, q.Tag)
		}
		if it.Flaky {
			s.Flaky++
		}
		if it.Failed {
			s.Failed++
			s.RC = max(s.RC, suiteRC(it))
		}
		s.Items = append(s.Items, it)
	}
	if r.Meta.ItemsUnknown() {
		for i := range suites {
			if len(suites[i].Items) == 0 {
				suites[i].Unlisted = true
				suites[i].RC = d.runStop().rc()
			}
		}
	}
	for _, st := range d.suiteStops() {
		if i, ok := idx[st.stop.Suite]; ok {
			suites[i].Broken = st.broken()
			suites[i].RC = max(suites[i].RC, exitcode.Failed)
		}
	}
	return suites
}

// suiteStops are the run's and, in a merge, each shard's stops naming a suite whose listing or setup failed.
func (d decider) suiteStops() []stopped {
	var out []stopped
	if st := d.runStop(); st.reason().SuiteFailed() {
		out = append(out, st)
	}
	if m := d.r.Meta.Merge; m != nil {
		for _, p := range m.Parts {
			if p.Stop != nil && p.Stop.Reason.SuiteFailed() {
				out = append(out, stopped{cancelled: p.Cancelled, stop: p.Stop, shard: p.Shard, shards: m.Shards})
			}
		}
	}
	return out
}

// newDecider gathers what the items' verdicts need from run r's record.
func newDecider(r *record.Run) decider {
	d := decider{r: r, quarantined: map[string]bool{}, unfit: map[record.ItemID]record.Unfit{},
		carried: map[record.ItemID]record.Carried{}}
	for _, q := range r.Meta.Quarantined {
		d.quarantined[q.GPU] = true
	}
	for _, u := range r.Meta.Unfit {
		d.unfit[u.ItemID] = u
	}
	if r.Meta.Merge != nil {
		d.unclaimed = map[record.ItemID]record.Unclaimed{}
		for _, u := range r.Meta.Merge.Unclaimed {
			d.unclaimed[u.ItemID] = u
		}
		for _, c := range r.Meta.Merge.Carried {
			d.carried[c.ItemID] = c
		}
	}
	return d
}

// decider holds what the items' verdicts need from the run as a whole.
type decider struct {
	r           *record.Run
	quarantined map[string]bool
	unfit       map[record.ItemID]record.Unfit
	unclaimed   map[record.ItemID]record.Unclaimed
	carried     map[record.ItemID]record.Carried
}

// anyQuarantined returns the first GPU of an attempt's that was quarantined, or "".
func (d decider) anyQuarantined(gpus []string) string {
	for _, g := range gpus {
		if d.quarantined[g] {
			return g
		}
	}
	return ""
}

// logThere reports whether an item's log is in the log dir; an unfinished item has one only if it was running.
func (d decider) logThere(label, tag string) bool {
	if d.r.Dir == "" {
		return false // a run decided in memory, with no log dir to look in
	}
	info, err := os.Stat(logdir.Layout{Root: d.r.Dir}.ItemLog(label, tag))
	return err == nil && info.Mode().IsRegular()
}

// unfitNote says why quarantine left the item unrun, "" when it did not.
func (d decider) unfitNote(it *Item) string {
	u, ok := d.unfit[it.ItemID]
	if !ok {
		return ""
	}
	return fmt.Sprintf("needs %d GPUs, quarantine left %d", u.GPUs, u.Pool)
}

// finished decides an item from its attempts (in the order they ended).
func (d decider) finished(it *Item, rs []record.Attempt) {
	t := rs[len(rs)-1]
	it.Finished, it.Started = true, true
	it.RC, it.GPU, it.Seconds, it.Outcome = t.RC, t.GPU(), t.Secs, t.Outcome
	it.Width = len(t.GPUs)
	it.Estimate, it.Known = t.Estimate, t.Known
	it.Failed = t.Outcome.Failed()
	it.Note = t.Outcome.Note()
	if u := d.unfitNote(it); u != "" && it.Failed {
		it.Note = joinNote(it.Note, "not run again: "+u)
	}
	earlierRC, failedBefore, badGPU, onlyBadGPUs := 0, false, "", true
	for _, e := range rs[:len(rs)-1] {
		if e.Outcome.Failed() {
			failedBefore = true
			earlierRC = max(earlierRC, e.RC)
			if g := d.anyQuarantined(e.GPUNames()); g != "" {
				badGPU = g
			} else {
				onlyBadGPUs = false
			}
		}
	}
	if it.Failed || !failedBefore {
		return
	}
	if onlyBadGPUs {
		it.Note = fmt.Sprintf("passed after %s was quarantined", record.GPUName(badGPU))
		return
	}
	it.Flaky = true
	it.Note = fmt.Sprintf("flaky: passed on attempt %d", len(rs))
	if d.r.Meta.FlakyIsFailure {
		it.Failed, it.RC = true, max(earlierRC, exitcode.Failed)
		it.Note += ", counted as a failure"
	}
}

// fromCarried decides an item its shard's re-run carried, as its latest attempt ended; its log is not here.
func (d decider) fromCarried(it *Item, c record.Carried) {
	it.Result, it.Finished, it.Carried = c.Result, true, true
	it.Note = joinNote(c.Outcome.Note(), fmt.Sprintf("carried: the re-run of shard %d/%d did not run it again; its log is the earlier attempt's",
		c.Shard, d.r.Meta.Merge.Shards))
}

// Latest is the item's latest outcome as the re-run state keeps it (docs/reruns.md).
func (it Item) Latest() record.Carried { return record.Carried{ItemID: it.ItemID, Result: it.Result} }

// stopped is what kept an item from finishing: a cancel, a typed stop reason, or neither.
type stopped struct {
	cancelled bool
	stop      *record.Stop
	shard     int // in a merged run, the item's shard; 0 otherwise
	shards    int
}

// runStop is what stopped the run itself.
func (d decider) runStop() stopped {
	return stopped{cancelled: d.r.Meta.Cancelled, stop: d.r.Meta.Stop}
}

// stopOf is the stop of the item's run: its shard's in a merge (docs/runners.md).
func (d decider) stopOf(it *Item) stopped {
	m := d.r.Meta.Merge
	if m == nil || it.Shard < 1 || it.Shard > len(m.Parts) {
		return d.runStop()
	}
	p := m.Parts[it.Shard-1]
	return stopped{cancelled: p.Cancelled, stop: p.Stop, shard: it.Shard, shards: m.Shards}
}

// where names the run that stopped: "shard 2/3" in a merged run, else "the run".
func (s stopped) where() string {
	if s.shard > 0 {
		return fmt.Sprintf("shard %d/%d", s.shard, s.shards)
	}
	return "the run"
}

// failedStep is what failed in a stop that names a suite: "listing" or "setup".
func (s stopped) failedStep() string {
	if s.reason() == outcome.StopSetupFailed {
		return "setup"
	}
	return "listing"
}

// broken is the Suite.Broken note of the suite a stop names.
func (s stopped) broken() string {
	on := ""
	if s.shard > 0 {
		on = " on " + s.where()
	}
	return fmt.Sprintf("its %s failed%s: %s", s.failedStep(), on, s.stop.Message)
}

func (s stopped) reason() outcome.Stop {
	if s.stop == nil {
		return ""
	}
	return s.stop.Reason
}

// interrupted reports whether the stop was a cancel; a log dir may record the flag or the reason.
func (s stopped) interrupted() bool { return s.cancelled || s.reason() == outcome.StopCancelled }

// rc is the rc an item that never ran counts with.
func (s stopped) rc() int {
	if s.interrupted() {
		return outcome.StopCancelled.NeverRanRC()
	}
	return s.reason().NeverRanRC()
}

// unfinished decides an item that never finished, for the reason its run stopped.
func (d decider) unfinished(it *Item) {
	if u, ok := d.unclaimed[it.ItemID]; ok {
		// Its shard's stop is not why: that shard never had it to run.
		it.Failed, it.RC, it.Unclaimed = true, exitcode.Failed, true
		k := d.r.Meta.Merge.Shards
		it.Note = fmt.Sprintf("never ran: listed by %s, not by its own shard %d/%d", shardList(u.ListedBy, k), u.Shard, k)
		return
	}
	st := d.stopOf(it)
	it.Failed = true
	it.RC = st.rc()
	it.Stop = st.reason()
	switch u := d.unfitNote(it); {
	case u != "":
		it.Note = "never ran: " + u
	case st.interrupted():
		it.Note = "cancelled before it started"
		it.Stop = outcome.StopCancelled
	case st.reason() == outcome.StopNotReported:
		it.Note = fmt.Sprintf("never ran: shard %d/%d never reported", st.shard, st.shards)
	case st.reason() == outcome.StopQuarantined:
		it.Note = "never ran: every GPU was quarantined"
	case st.reason() == outcome.StopUnavailable:
		it.Note = "never ran: where items run went away"
	case st.reason().SuiteFailed():
		it.Note = fmt.Sprintf("never ran: %s stopped when suite %q's %s failed", st.where(), st.stop.Suite, st.failedStep())
	case st.reason() == outcome.StopInternal:
		it.Note = "not recorded: sgpu-queue stopped on an internal error"
	case st.stop != nil:
		it.Note = "never ran: the run stopped early"
	case st.shard > 0:
		it.Note = fmt.Sprintf("never ran: shard %d/%d wrote no row for it", st.shard, st.shards)
	default:
		it.Note = "never finished"
	}
}

// shardList names shards: "shard 1/3", "shards 1/3 and 3/3".
func shardList(ns []int, k int) string {
	names := make([]string, len(ns))
	for i, n := range ns {
		names[i] = fmt.Sprintf("%d/%d", n, k)
	}
	switch len(names) {
	case 0:
		return "another shard" // a run.json that does not say which
	case 1:
		return "shard " + names[0]
	}
	return "shards " + strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// joinNote adds b to a verdict note a.
func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// suiteRC is what a failed item adds to its suite's rc: its exit code, or 1 when that says nothing. An item's own
// code that is one of the tool's (exitcode.Reserved) counts as 1, so the suite's rc and the exit code
// keep their meaning.
func suiteRC(it Item) int {
	if it.Finished {
		return it.Outcome.ExitCode(it.RC)
	}
	return max(it.RC, exitcode.Failed) // never finished: its stop's rc
}

// Line is the item's line in suites/<logfile>: "ok|FAIL rc=N items/<file>".
func (it Item) Line() string {
	word := "ok"
	if it.Failed {
		word = "FAIL"
	}
	s := fmt.Sprintf("%s rc=%s %s", word, it.ShownRC(), it.LogRel)
	if it.Note != "" {
		s += " (" + it.Note + ")"
	}
	return s
}

// ShownRC is the item's rc as lines show it: "-" when it never finished.
func (it Item) ShownRC() string {
	if !it.Finished {
		return "-"
	}
	return strconv.Itoa(it.RC)
}

// UnlistedLine is suites/<logfile> of a suite whose items were never listed.
const UnlistedLine = "FAIL rc=- (cancelled before its items were listed: none ran)"

// Write writes every suite's suites/<logfile> and .rc, never through a link.
func Write(l logdir.Layout, suites []Suite) error {
	if err := l.MkdirAll(l.SuitesDir()); err != nil {
		return err
	}
	for _, s := range suites {
		var b strings.Builder
		for _, it := range s.Items {
			b.WriteString(it.Line())
			b.WriteByte('\n')
		}
		switch {
		case s.Broken != "":
			b.WriteString(s.BrokenLine() + "\n")
		case s.Unlisted:
			b.WriteString(UnlistedLine + "\n")
		case s.Skip != "":
			b.WriteString(s.Skip.Line() + "\n")
		}
		if err := l.WriteFile(l.SuiteLog(s.LogFile), []byte(b.String())); err != nil {
			return err
		}
		if err := l.WriteFile(l.SuiteRC(s.LogFile), []byte(fmt.Sprintf("%d\n", s.RC))); err != nil {
			return err
		}
	}
	return nil
}

// ExitCode is the run's exit code (docs/exit-codes.md): OK, else the largest failed suite's rc.
func ExitCode(suites []Suite) int {
	rc := exitcode.OK
	for _, s := range suites {
		if !s.Passed() {
			rc = max(rc, exitcode.FromSuite(s.RC))
		}
	}
	return rc
}

// FlakyItems lists every item that passed only on a rerun, in suite order.
func FlakyItems(suites []Suite) []Item { return Select(suites, func(it Item) bool { return it.Flaky }) }

// FailedItems lists every failed item across suites, in suite order.
func FailedItems(suites []Suite) []Item {
	return Select(suites, func(it Item) bool { return it.Failed })
}

// Select lists the items of every suite that keep accepts, in suite order.
func Select(suites []Suite, keep func(Item) bool) []Item {
	var out []Item
	for _, s := range suites {
		for _, it := range s.Items {
			if keep(it) {
				out = append(out, it)
			}
		}
	}
	return out
}
