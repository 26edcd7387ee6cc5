package outcome

import (
	"strings"
	"testing"
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
		} else if !strings.Contains(err.Error(), "not one of ok, failed, timeout, cancelled, cut-off, unavailable, no-run") {
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
