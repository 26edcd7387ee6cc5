package outcome

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rocm/sgpu-queue/internal/exitcode"
)

func TestParse(t *testing.T) {
	for _, o := range All {
		got, err := Parse(o.String())
		if err != nil || got != o || !o.Valid() {
			t.Errorf("Parse(%q) = %q, %v", o, got, err)
		}
	}
	for _, bad := range []string{"", "OK", "timed out", "cutoff", "cut_off", " ok", "passed"} {
		if o, err := Parse(bad); err == nil || o != "" || Outcome(bad).Valid() {
			t.Errorf("Parse(%q) = %q, %v; want an error", bad, o, err)
		} else if !strings.Contains(err.Error(), "not one of ok, failed, timeout, cancelled, cut-off, unavailable, no-run, bad-junit") {
			t.Errorf("error %q does not list the outcomes", err)
		}
	}
}

// What each outcome means for the verdict, learning, quarantine and retries
// (docs/outcomes.md has the same table).
func TestPredicates(t *testing.T) {
	type row struct {
		passed, learnable, atLeast, teaches, exercised, retryable, incomplete bool
	}
	want := map[Outcome]row{
		OK:          {passed: true, learnable: true, teaches: true, exercised: true},
		Failed:      {learnable: true, teaches: true, exercised: true, retryable: true},
		Timeout:     {atLeast: true, teaches: true, exercised: true, retryable: true, incomplete: true},
		Cancelled:   {atLeast: true, teaches: true, incomplete: true},
		CutOff:      {atLeast: true, teaches: true, exercised: true, retryable: true, incomplete: true},
		Unavailable: {atLeast: true, teaches: true, exercised: true, retryable: true, incomplete: true},
		NoRun:       {incomplete: true},
		BadJUnit:    {learnable: true, teaches: true, exercised: true, retryable: true},
	}
	if len(want) != len(All) {
		t.Fatalf("the table covers %d of %d outcomes", len(want), len(All))
	}
	for o, w := range want {
		got := row{o.Passed(), o.Learnable(), o.AtLeast(), o.Teaches(), o.Exercised(), o.Retryable(), o.Incomplete()}
		if got != w {
			t.Errorf("%s: got %+v, want %+v", o, got, w)
		}
		if o.Failed() == o.Passed() {
			t.Errorf("%s: Failed and Passed agree", o)
		}
		if o.Learnable() && o.AtLeast() {
			t.Errorf("%s teaches both a duration and an at-least", o)
		}
	}
}

// The legacy rule is TE's own reading of the same row: 124 and 137 are "killed
// from outside" (cut-off), never a timeout.
func TestLegacy(t *testing.T) {
	tests := []struct {
		rc                    int
		incomplete, cancelled bool
		want                  Outcome
	}{
		{0, false, false, OK},
		{1, false, false, Failed},
		{139, false, false, Failed},
		{124, false, false, CutOff},
		{137, false, false, CutOff},
		{124, false, true, CutOff},
		{0, true, false, CutOff},
		{0, true, true, CutOff}, // rc 0: not stopped by the cancel
		{143, true, true, Cancelled},
		{143, true, false, CutOff},
		{143, false, true, Failed},
	}
	for _, tt := range tests {
		if got := Legacy(tt.rc, tt.incomplete, tt.cancelled); got != tt.want {
			t.Errorf("Legacy(%d, incomplete %v, cancelled %v) = %s, want %s", tt.rc, tt.incomplete, tt.cancelled, got, tt.want)
		}
		if got := Legacy(tt.rc, tt.incomplete, tt.cancelled); got == Timeout || got == NoRun {
			t.Errorf("Legacy never knows a %s", got)
		}
	}
}

func TestParseStop(t *testing.T) {
	for _, s := range Stops {
		if got, err := ParseStop(s.String()); err != nil || got != s {
			t.Errorf("ParseStop(%q) = %q, %v", s, got, err)
		}
	}
	if _, err := ParseStop("stalled"); err == nil {
		t.Error("ParseStop accepted an unknown reason")
	}
}

// The table's words and rcs are the ones docs/outcomes.md prints: its "rc recorded"
// column (a number, or the item's own code) and its "verdict" column's note.
func TestTableMatchesDocs(t *testing.T) {
	b, err := os.ReadFile("../../docs/outcomes.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `([a-z-]+)` \\|[^|]*\\| ([^|]*) \\| ([^|]*) \\|")
	quoted := regexp.MustCompile(`"([^"]*)"`)
	seen := map[Outcome]bool{}
	for _, m := range row.FindAllStringSubmatch(string(b), -1) {
		o, err := Parse(m[1])
		if err != nil {
			t.Fatal(err)
		}
		seen[o] = true
		const own = 5
		switch n, err := strconv.Atoi(m[2]); {
		case err != nil: // its own code, or as it ended
			if got := o.RC(own, true); got != own {
				t.Errorf("%s: RC(%d) = %d, the docs say %q", o, own, got, m[2])
			}
		case n == 0:
			if got := o.RC(0, true); got != 0 {
				t.Errorf("%s: RC(0) = %d", o, got)
			}
		case o.RC(own, true) != n && !(o == Failed && o.RC(own, false) == n):
			t.Errorf("%s: recorded with %d, the docs say %d", o, o.RC(own, true), n)
		}
		want := ""
		if q := quoted.FindStringSubmatch(m[3]); q != nil {
			want = q[1]
		}
		if o.Note() != want {
			t.Errorf("%s: note %q, the docs say %q", o, o.Note(), want)
		}
	}
	if len(seen) != len(All) {
		t.Errorf("the docs' table has %d of %d outcomes", len(seen), len(All))
	}
}

// What a failed attempt adds to its suite's rc: the tool's own codes keep their
// meaning, except those it gave an item it stopped.
func TestExitCode(t *testing.T) {
	tests := []struct {
		o        Outcome
		rc, want int
	}{
		{Failed, 3, 3}, {Failed, exitcode.Usage, exitcode.Failed}, {Failed, exitcode.Terminated, exitcode.Failed},
		{NoRun, 0, exitcode.Failed}, {CutOff, 0, exitcode.Failed}, {CutOff, exitcode.Killed, exitcode.Killed},
		{Timeout, exitcode.HangTimeout, exitcode.HangTimeout}, {Unavailable, exitcode.Killed, exitcode.Killed},
		{Cancelled, exitcode.Terminated, exitcode.Terminated}, {Cancelled, 0, exitcode.Failed}, {"", 2, exitcode.Failed},
	}
	for _, tt := range tests {
		if got := tt.o.ExitCode(tt.rc); got != tt.want {
			t.Errorf("%q.ExitCode(%d) = %d, want %d", tt.o, tt.rc, got, tt.want)
		}
	}
	if Timeout.RC(0, true) != exitcode.HangTimeout || Unavailable.RC(0, false) != exitcode.Killed || Failed.RC(0, false) != exitcode.NotFound {
		t.Error("the rcs sgpu-queue records are not exitcode's named codes")
	}
	if StopCancelled.NeverRanRC() != exitcode.Interrupted || StopQuarantined.NeverRanRC() != exitcode.Failed {
		t.Error("NeverRanRC")
	}
	for _, tt := range []struct {
		suites              int
		internal, cancelled bool
		want                int
	}{
		{0, false, false, 0}, {3, false, true, 3}, {0, false, true, exitcode.Interrupted}, {3, true, true, exitcode.Internal},
	} {
		if got := RunExitCode(tt.suites, tt.internal, tt.cancelled); got != tt.want {
			t.Errorf("RunExitCode(%d, %v, %v) = %d, want %d", tt.suites, tt.internal, tt.cancelled, got, tt.want)
		}
	}
}
