package verdict

import (
	"os"
	"testing"

	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/record"
)

// A suite --suites left out has no items, passes, and its verdict files say so with
// rc 0 (TE's gate reads them); the exit code stays 0.
func TestNotSelected(t *testing.T) {
	l := logdir.Layout{Root: t.TempDir()}
	r := &record.Run{Dir: l.Root, Meta: record.Meta{Suites: []record.MetaSuite{
		{Label: "torch", LogFile: "torch.log", Mode: "list"},
		{Label: "jax-mgpu", LogFile: "jax_mgpu.log", Mode: "list", Skip: outcome.NotSelected},
	}}}
	suites := Decide(r)
	if len(suites) != 2 || suites[0].Skip != "" || suites[1].Skip != outcome.NotSelected || !suites[1].Passed() || ExitCode(suites) != 0 {
		t.Fatalf("suites %+v", suites)
	}
	if err := Write(l, suites[1:]); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{l.SuiteLog("jax_mgpu.log"): "not run: not selected\n", l.SuiteRC("jax_mgpu.log"): "0\n"} {
		if got, err := os.ReadFile(path); err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q", path, got, err, want)
		}
	}
}
