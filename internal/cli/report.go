package cli

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/report"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

const reportHelp = `Usage: sgpu-queue report LOGDIR

Rebuilds LOGDIR/report/schedule.md from the files of a run (queue/, items/) and prints it.

Flags:
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
		return 2
	}
	run, warns, err := logdir.Load(pos[0])
	if err != nil {
		fmt.Fprintf(e.Stderr, "sgpu-queue: %v\n", err)
		return 2
	}
	for _, w := range warns {
		fmt.Fprintf(e.Stderr, "warning: %s\n", w)
	}
	suites := verdict.Decide(run)
	var b bytes.Buffer
	if err := report.Markdown(&b, run, suites, report.Compute(run, suites)); err != nil {
		fmt.Fprintf(e.Stderr, "sgpu-queue: %v\n", err)
		return 1
	}
	if err := os.MkdirAll(run.Layout.ReportDir(), 0o755); err == nil {
		err = os.WriteFile(run.Layout.Report(), b.Bytes(), 0o644)
	}
	if err != nil {
		fmt.Fprintf(e.Stderr, "sgpu-queue: %v\n", err)
		return 1
	}
	e.Stdout.Write(b.Bytes())
	return 0
}

func splitLines(s string) []string { return strings.Split(strings.TrimRight(s, "\n"), "\n") }
