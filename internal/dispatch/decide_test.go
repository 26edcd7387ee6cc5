package dispatch

import (
	"errors"
	"fmt"
	"testing"

	"github.com/rocm/sgpu-queue/internal/executor"
	"github.com/rocm/sgpu-queue/internal/outcome"
)

// An attempt's evidence → its outcome and the rc it is recorded with
// (docs/outcomes.md): what sgpu-queue did to the item explains it first, then
// what the item left behind, then its own exit code.
func TestDecideAndRC(t *testing.T) {
	gone := fmt.Errorf("container x stopped: %w", executor.ErrUnavailable)
	notFound := fmt.Errorf("ci/x.sh: %w", executor.ErrNotFound)
	killed := executor.Result{ExitCode: 137, Signaled: true}
	tests := []struct {
		name string
		e    evidence
		want outcome.Outcome
		rc   int
	}{
		{"ok", evidence{}, outcome.OK, 0},
		{"its own failure", evidence{res: executor.Result{ExitCode: 3}}, outcome.Failed, 3},
		{"its own 124 is no timeout", evidence{res: executor.Result{ExitCode: 124}}, outcome.Failed, 124},
		{"could not start", evidence{runErr: notFound}, outcome.Failed, 127},
		{"where it ran went away", evidence{runErr: gone, res: executor.Result{ExitCode: 1}}, outcome.Unavailable, 137},
		{"hang deadline", evidence{hang: true, res: executor.Result{ExitCode: 143, Signaled: true, Cancelled: true}}, outcome.Timeout, 124},
		{"cancelled", evidence{res: executor.Result{ExitCode: 143, Signaled: true, Cancelled: true}}, outcome.Cancelled, 143},
		{"a SIGKILL not ours", evidence{res: killed}, outcome.CutOff, 137},
		{"a .partial left, rc 0", evidence{partial: true}, outcome.CutOff, 0},
		{"no JUnit file written", evidence{junit: true}, outcome.NoRun, 0},
		{"its JUnit file written", evidence{junit: true, wroteXML: true}, outcome.OK, 0},
		{"failed, no JUnit file", evidence{junit: true, res: executor.Result{ExitCode: 2}}, outcome.Failed, 2},
		{"its JUnit file cannot be parsed", evidence{junit: true, wroteXML: true, badXML: errors.New("XML syntax error")}, outcome.BadJUnit, 0},
		{"a file it may write cannot be parsed", evidence{wroteXML: true, badXML: errors.New("empty file")}, outcome.BadJUnit, 0},
		{"failed, with a file that cannot be parsed", evidence{wroteXML: true, badXML: errors.New("x"), res: executor.Result{ExitCode: 1}}, outcome.Failed, 1},
		{"cut off, with a file that cannot be parsed", evidence{partial: true, wroteXML: true, badXML: errors.New("x")}, outcome.CutOff, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := decide(tt.e)
			rc, unavailable := rcOf(got, tt.e)
			if got != tt.want || rc != tt.rc {
				t.Errorf("decide = %s, rc %d; want %s, rc %d", got, rc, tt.want, tt.rc)
			}
			if want := got == outcome.Unavailable; (unavailable != nil) != want || want && !errors.Is(unavailable, executor.ErrUnavailable) {
				t.Errorf("unavailable = %v", unavailable)
			}
		})
	}
}
