// Package verdict is phase 5: one pass/fail per suite from its items' exit codes,
// written in TransformerEngine's layout (suites/<logfile> and suites/<logfile>.rc) so
// the CI gates that read those files keep working, and the run's exit code (phase 8).
package verdict

import (
	"fmt"
	"os"
	"strings"

	"github.com/rocm/sgpu-queue/internal/atomicfile"
	"github.com/rocm/sgpu-queue/internal/exitcode"
	"github.com/rocm/sgpu-queue/internal/logdir"
)

// Item is the outcome of one queued item: its last attempt.
type Item struct {
	Label, Tag string
	LogRel     string // items/<label>.<safetag>.log
	RC         int
	Finished   bool // it has a timings row; false: never finished
	Failed     bool
	Incomplete bool
	GPU        string
	Seconds    float64
	Attempts   int
	Flaky      bool   // failed, then passed on a rerun
	TimedOut   bool   // its last attempt was killed at its hang deadline
	Note       string // "never finished", "cancelled", "timed out", "cut off", "flaky"...
}

// Suite is one suite's verdict.
type Suite struct {
	Label, LogFile string
	Mode           string
	Items          []Item
	Failed         int
	Flaky          int
	RC             int // the largest exit code of its failed items; 1 if one never finished
	Seconds        float64
}

// Passed reports whether every item of the suite passed.
func (s Suite) Passed() bool { return s.Failed == 0 }

// Decide computes every suite's verdict from the run's files. An item with no timings
// row never finished and counts as failed.
func Decide(r *logdir.Run) []Suite {
	type key struct{ label, item string }
	rows := map[key][]logdir.Timing{}
	for _, t := range r.Timings {
		k := key{t.Label, t.Item}
		rows[k] = append(rows[k], t)
	}
	quarantined := map[string]bool{}
	for _, q := range r.Meta.Quarantined {
		quarantined[q.GPU] = true
	}
	idx := map[string]int{}
	suites := make([]Suite, len(r.Meta.Suites))
	for i, ms := range r.Meta.Suites {
		suites[i] = Suite{Label: ms.Label, LogFile: ms.LogFile, Mode: ms.Mode}
		idx[ms.Label] = i
	}
	for _, q := range r.Queue {
		si, ok := idx[q.Label]
		if !ok {
			continue
		}
		s := &suites[si]
		k := key{q.Label, logdir.ItemColumn(q.Tag)}
		rs := rows[k]
		it := Item{Label: q.Label, Tag: q.Tag, LogRel: logdir.ItemLogRel(q.Label, q.Tag), Attempts: len(rs)}
		if len(rs) > 0 {
			t := rs[len(rs)-1]
			it.Finished = true
			it.RC = t.RC
			it.GPU = t.GPU
			it.Seconds = t.Secs
			it.Incomplete = t.Incomplete
			it.Failed = t.RC != 0
			it.TimedOut = t.RC == 124
			switch {
			case t.RC == 124:
				it.Note = "timed out"
			case r.Meta.Cancelled && t.Incomplete && t.RC != 0:
				it.Note = "cancelled"
			case t.Incomplete:
				it.Note = "cut off"
			}
			earlierRC, badGPU, onlyBadGPUs := 0, "", true
			for _, e := range rs[:len(rs)-1] {
				if e.RC != 0 {
					earlierRC = max(earlierRC, e.RC)
					if quarantined[e.GPU] {
						badGPU = e.GPU
					} else {
						onlyBadGPUs = false
					}
				}
			}
			if t.RC == 0 && earlierRC != 0 {
				if onlyBadGPUs {
					it.Note = fmt.Sprintf("passed after gpu%s was quarantined", badGPU)
				} else {
					it.Flaky = true
					s.Flaky++
					it.Note = fmt.Sprintf("flaky: passed on attempt %d", len(rs))
					if r.Meta.FlakyIsFailure {
						it.Failed, it.RC = true, earlierRC
						it.Note += ", counted as a failure"
					}
				}
			}
			for _, e := range rs {
				s.Seconds += e.Secs
			}
		} else {
			it.Failed = true
			it.RC = 1
			it.Note = "never finished"
			switch {
			case r.Meta.Cancelled:
				it.Note = "cancelled before it started"
			case strings.Contains(r.Meta.Stalled, "every GPU is quarantined"):
				it.Note = "never ran: every GPU was quarantined"
			case r.Meta.Stalled != "":
				it.Note = "never ran: the run stopped early"
			}
		}
		if it.Failed {
			s.Failed++
			if it.RC > s.RC {
				s.RC = it.RC
			}
		}
		s.Items = append(s.Items, it)
	}
	return suites
}

// Line is the item's line in suites/<logfile>: "ok|FAIL rc=N items/<file>".
func (it Item) Line() string {
	word := "ok"
	if it.Failed {
		word = "FAIL"
	}
	rc := fmt.Sprint(it.RC)
	if !it.Finished {
		rc = "-"
	}
	s := fmt.Sprintf("%s rc=%s %s", word, rc, it.LogRel)
	if it.Note != "" {
		s += " (" + it.Note + ")"
	}
	return s
}

// Write writes suites/<logfile> and suites/<logfile>.rc for every suite.
func Write(l logdir.Layout, suites []Suite) error {
	if err := os.MkdirAll(l.SuitesDir(), 0o755); err != nil {
		return err
	}
	for _, s := range suites {
		var b strings.Builder
		for _, it := range s.Items {
			b.WriteString(it.Line())
			b.WriteByte('\n')
		}
		if err := atomicfile.Write(l.SuiteLog(s.LogFile), []byte(b.String()), 0o644); err != nil {
			return err
		}
		if err := atomicfile.Write(l.SuiteRC(s.LogFile), []byte(fmt.Sprintf("%d\n", s.RC)), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// ExitCode is the run's exit code (docs/exit-codes.md): OK when every suite passed,
// else the largest exit code among the failed items, each mapped by
// exitcode.FromItem (an item's 2 or 70 is reported as 1, so that the tool's own codes
// keep one meaning).
func ExitCode(suites []Suite) int {
	rc := exitcode.OK
	for _, s := range suites {
		if s.Failed > 0 {
			rc = max(rc, exitcode.FromItem(s.RC))
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
