package engine

import (
	"fmt"

	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

// verdicts is phase 5: each suite's verdict files, and one console line per suite.
func (r *run) verdicts(run *record.Run) {
	r.obs.Phase(5, "per-suite verdicts")
	r.res.Suites = verdict.Decide(run)
	for _, s := range r.res.Suites {
		v := "ok"
		switch {
		case s.Skip != "":
			v = s.Skip.Line()
		case s.Broken != "":
			v = s.BrokenLine()
		case s.Unlisted:
			v = fmt.Sprintf("FAIL rc=%d (cancelled before its items were listed)", s.RC)
		case !s.Passed():
			v = fmt.Sprintf("FAIL rc=%d (%d of %d items failed)", s.RC, s.Failed, len(s.Items))
		}
		// One suite at a time, so that the console says which verdicts a full disk
		// kept from being written.
		if err := verdict.Write(r.layout, []verdict.Suite{s}); err != nil {
			r.lost(fmt.Sprintf("the verdict of suite %q", s.Label), refusedPath(err, r.layout.SuiteRC(s.LogFile)), err)
			r.printf("  %-12s %s  (verdict NOT written)\n", s.Label, v)
			continue
		}
		r.printf("  %-12s %s  → %s\n", s.Label, v, r.rel(r.layout.SuiteRC(s.LogFile)))
	}
}
