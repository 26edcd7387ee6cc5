package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/rocm/sgpu-queue/internal/exitcode"

	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/report"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

const reportHelp = `Usage: sgpu-queue report LOGDIR

Rebuilds LOGDIR/report/schedule.md and timeline.svg from the files of a run (queue/, items/) and prints it.
Exit status: 0 written, 1 the report could not be written, 2 LOGDIR holds no readable run
(not there, a file, no queue/run.json) or one still in progress (a run holds its lock).
`

func reportCmd(e Env, args []string) int {
	fs := newFlags("report", e, reportHelp)
	pos, code, stop := parse(fs, args, e)
	if stop {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintln(e.Stderr, "sgpu-queue report: want exactly one LOGDIR")
		fs.Usage()
		return exitcode.Usage
	}
	run, warns, err := logdir.Load(pos[0])
	if err != nil {
		fmt.Fprintf(e.Stderr, "sgpu-queue: %v\n", err)
		return exitcode.Usage
	}
	for _, w := range warns {
		fmt.Fprintf(e.Stderr, "warning: %s\n", w)
	}
	suites := verdict.Decide(run)
	// The log dir is the user's to name: its trusted root (docs/bad-day.md).
	files, err := report.WriteFiles(logdir.Layout{Root: pos[0]}, run, suites, report.Compute(run, suites))
	if err != nil {
		fmt.Fprintf(e.Stderr, "sgpu-queue: %v\n", err)
		return exitcode.Failed
	}
	io.WriteString(e.Stdout, files.Markdown)
	return exitcode.OK
}

func splitLines(s string) []string { return strings.Split(strings.TrimRight(s, "\n"), "\n") }
