package engine

import (
	"path/filepath"
	"strings"

	"github.com/rocm/sgpu-queue/internal/dispatch"
	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

// NoLog stands for the log of an item that never started: there is no file to name.
const NoLog = "never started: no log"

// summary is phase 8: the failed items with their logs, and the exit code.
func (r *run) summary() {
	r.obs.Phase(8, "summary")
	failed := verdict.FailedItems(r.res.Suites)
	r.res.ExitCode = outcome.RunExitCode(verdict.ExitCode(r.res.Suites), r.res.Internal != nil || r.internalShard, r.res.Cancelled)
	var broken []verdict.Suite // failed before their items ran, on a shard of a merge
	for _, s := range r.res.Suites {
		if s.Broken != "" {
			broken = append(broken, s)
		}
	}
	r.printSkipped()
	clean := len(failed) == 0 && len(broken) == 0 && r.res.Stop == nil && len(r.res.Quarantined) == 0
	if clean && !r.res.Cancelled && len(verdict.FlakyItems(r.res.Suites)) == 0 {
		r.printf("all %d suites passed\n", len(r.res.Suites))
		r.printNotWritten()
		return
	}
	for _, s := range broken {
		r.printf("suite %s failed: %s\n", s.Label, s.Broken)
	}
	if len(failed) > 0 {
		r.printf("%d failed item(s):\n", len(failed))
	}
	for _, it := range failed {
		note := ""
		if it.Note != "" {
			note = " (" + it.Note + ")"
		}
		log := NoLog
		if it.Started {
			log = r.rel(filepath.Join(r.o.LogDir, it.LogRel))
		}
		r.printf("  FAIL rc=%s %s %s%s  %s\n", it.ShownRC(), it.Label, dispatch.ShownTag(it.Tag), note, log)
	}
	for _, it := range verdict.FlakyItems(r.res.Suites) {
		r.printf("  flaky: %s %s passed on attempt %d\n", it.Label, dispatch.ShownTag(it.Tag), it.Tries)
	}
	for _, q := range r.res.Quarantined {
		r.printf("  quarantined %s: %s\n", record.GPUName(q.GPU), q.Reason)
	}
	if st := r.res.Stop; st != nil && st.Reason != outcome.StopCancelled {
		r.printf("run stopped (%s): %s\n", st.Reason.Word(), st.Message)
	}
	if r.res.Cancelled {
		if clean {
			r.printf("all %d suites passed, but the run was cancelled\n", len(r.res.Suites))
		}
		r.printf("run cancelled\n")
	}
	r.printNotWritten()
	r.printf("exit code %d\n", r.res.ExitCode)
}

// printNotWritten names the files a full disk kept from being written.
func (r *run) printNotWritten() {
	if len(r.res.NotWritten) > 0 {
		r.printf("NOT written (see the warnings): %s\n", strings.Join(r.res.NotWritten, ", "))
	}
}
