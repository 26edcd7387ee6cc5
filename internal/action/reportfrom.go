package action

import (
	"context"
	"fmt"

	"github.com/rocm/sgpu-queue/internal/engine"
	"github.com/rocm/sgpu-queue/internal/exitcode"
	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/publish"
	"github.com/rocm/sgpu-queue/internal/report"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

// publishFrom publishes the report of the finished run whose log dir report-from
// names: a fork's pull request has a read-only token, so a workflow_run job
// publishes for it (docs/action.md#pull-requests-from-forks). The step succeeds
// whatever the tests did: they failed their own workflow already.
func (a *act) publishFrom(ctx context.Context, dir string) int {
	run, warns, err := logdir.Load(dir)
	if err != nil {
		return a.stop(&exitcode.Error{Code: exitcode.Usage, Err: fmt.Errorf("input report-from %s: %w (download the log dir of the run to "+
			"publish first)", a.rel(dir), err)})
	}
	for _, w := range warns {
		a.obs.Warn(w)
	}
	wr, err := publish.WorkflowRunFromEvent(a.e.Getenv("GITHUB_EVENT_PATH"))
	if err != nil {
		a.obs.Warn(fmt.Sprintf("publish: %v", err))
	}
	if a.pub.commit == "" {
		a.pub.commit = wr.HeadSHA
	}
	if a.pub.pr == 0 {
		a.pub.pr = wr.PR
	}
	if wr.HTMLURL != "" {
		a.runPage = wr.HTMLURL
	}
	suites := verdict.Decide(run)
	stats := report.Compute(run, suites)
	ro := report.Options{RunURL: a.runPage, Roots: []string{a.ws}}
	res := &engine.Result{
		ExitCode: outcome.RunExitCode(verdict.ExitCode(suites), false, run.Meta.Cancelled), LogDir: dir, Suites: suites, Stats: stats,
		Report: logdir.Layout{Root: run.Dir}.Report(), Cancelled: run.Meta.Cancelled, Quarantined: run.Meta.Quarantined,
		Markdown: report.Render(run, suites, stats, ro), Comment: report.Comment(run, suites, stats, ro),
	}
	fmt.Fprintf(a.e.Stdout, "  publishing the report of %s: %d suites, %d items, %d failed (commit %s, pull request %d)\n",
		a.rel(dir), len(suites), stats.Items, stats.Failed, orEvent(a.pub.commit), a.pub.pr)
	a.present(res)
	a.publishPR(ctx, res)
	a.obs.flushWarnings()
	return exitcode.OK
}

func orEvent(s string) string {
	if s == "" {
		return "from the event"
	}
	return s
}
