package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/record"
)

// report and merge refuse, in one line naming the path and the fix and with exit
// 2, a path that is no log dir (not there, a file) and a log dir whose run is
// still in progress (it holds the lock): no stack trace, and nothing is written
// into the running run's log dir.
func TestReportRefuses(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "plan.json")
	if err := os.WriteFile(file, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	busy := logdir.Layout{Root: filepath.Join(dir, "busy")}
	lock, err := busy.Claim(&record.Meta{Tool: logdir.ToolName, Suites: []record.MetaSuite{{Label: "torch", LogFile: "torch.log", Mode: "list"}}}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	if err := os.WriteFile(busy.QueueTSV(), []byte("1\ttorch\tci/torch.sh\ta\t\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	nowhere := filepath.Join(dir, "nowhere")
	for _, tc := range []cmdCase{
		{name: "report: not there", args: []string{"report", nowhere}, code: 2, stderr: []string{"sgpu-queue: " + nowhere + " does not exist: give the log dir of a run"}},
		{name: "report: a file", args: []string{"report", file}, code: 2, stderr: []string{"sgpu-queue: " + file + " is a file, not a log dir: give the directory a run wrote"}},
		{name: "report: in progress", args: []string{"report", busy.Root}, code: 2, stderr: []string{"sgpu-queue: " + busy.Root + ": a run is still in progress there (pid ", "wait for it to end, then try again"}},
		{name: "merge: a file", args: []string{"merge", "--log-dir", filepath.Join(dir, "out"), file}, code: 2, stderr: []string{"sgpu-queue: " + file + " is a file, not a log dir"}},
		{name: "merge: in progress", args: []string{"merge", "--log-dir", filepath.Join(dir, "out"), busy.Root}, code: 2, stderr: []string{busy.Root + ": a run is still in progress there"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCommand(t, nil, tc.args...)
			tc.check(t, code, out, errs)
		})
	}
	if _, err := os.Stat(busy.Report()); err == nil {
		t.Error("report wrote into the log dir of a run in progress")
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); err == nil {
		t.Error("a refused merge claimed its --log-dir")
	}
}
