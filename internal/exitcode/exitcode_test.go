package exitcode

import (
	"errors"
	"fmt"
	"syscall"
	"testing"
)

func TestFromItem(t *testing.T) {
	tests := []struct{ item, want int }{
		{1, 1}, {3, 3}, {124, 124}, {137, 137}, {139, 139}, {255, 255},
		{Usage, Failed}, {Internal, Failed}, // the tool's own codes keep one meaning
		{Interrupted, Failed}, {Terminated, Failed}, // an item's own 130/143 is no cancel
		{0, Failed}, {-1, Failed}, // a failed item whose code says nothing
		{256, 255}, {1000, 255},
	}
	for _, tt := range tests {
		if got := FromItem(tt.item); got != tt.want {
			t.Errorf("FromItem(%d) = %d, want %d", tt.item, got, tt.want)
		}
	}
}

// A suite's rc was mapped by FromItem already: the codes the tool gives items stay.
func TestFromSuite(t *testing.T) {
	tests := []struct{ suite, want int }{
		{1, 1}, {3, 3}, {Interrupted, Interrupted}, {Terminated, Terminated}, {Killed, Killed},
		{Usage, Failed}, {Internal, Failed}, {0, Failed}, {256, 255},
	}
	for _, tt := range tests {
		if got := FromSuite(tt.suite); got != tt.want {
			t.Errorf("FromSuite(%d) = %d, want %d", tt.suite, got, tt.want)
		}
	}
}

// The shell's codes that sgpu-queue writes into an item's rc are the ones TE's
// readers know (128 + the signal for a killed one).
func TestShellCodes(t *testing.T) {
	if Killed != 128+int(syscall.SIGKILL) || Interrupted != 128+int(syscall.SIGINT) || HangTimeout != 124 || Terminated != 128+int(syscall.SIGTERM) || NotFound != 127 || CannotRun != 126 {
		t.Errorf("Killed %d, Interrupted %d, HangTimeout %d, NotFound %d, CannotRun %d", Killed, Interrupted, HangTimeout, NotFound, CannotRun)
	}
}

// The code travels with the error through wrapping; an untyped error gets the
// face's own code.
func TestOf(t *testing.T) {
	cause := errors.New("bad input")
	wrapped := fmt.Errorf("input plan: %w", New(Usage, cause))
	if Of(wrapped, Failed) != Usage || !errors.Is(wrapped, cause) || wrapped.Error() != "input plan: bad input" {
		t.Errorf("Of(%v) = %d", wrapped, Of(wrapped, Failed))
	}
	if Of(nil, Failed) != OK || Of(cause, Failed) != Failed || Of(cause, Usage) != Usage {
		t.Error("Of of nil or an untyped error")
	}
}
