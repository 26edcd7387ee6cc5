// Package executor is the seam between the engine and where a command runs: this machine (Local) or another
// container (the Docker executor). The engine never starts a process itself.
package executor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Command is one invocation of a suite script or tool.
type Command struct {
	Name   string    // what it is, for messages ("item torch/test_x"); "" = Path; see Label
	Path   string    // program; a bare name is looked up on PATH where it runs
	Args   []string  // arguments after the program
	Env    []string  // the complete environment, KEY=VALUE
	Dir    string    // working directory ("" = inherit)
	Stdout io.Writer // nil discards
	Stderr io.Writer // nil discards
}

// Result is how a command ended.
type Result struct {
	// ExitCode is the shell's: the exit status, or 128+N for signal N (a segfault is 139, a KILL 137).
	ExitCode int
	// Signaled is true when the process ended by a signal.
	Signaled bool
	// Cancelled: ctx ended before the command and the executor stopped it.
	Cancelled bool
}

// ErrNotFound is wrapped when the program does not exist or cannot run where the command runs.
var ErrNotFound = errors.New("command not found")

// ErrUnavailable is matched when nothing more can run where this executor runs (its container stopped),
// so the items not yet run are marked instead of each failing in turn.
var ErrUnavailable = errors.New("executor unavailable")

// Executor runs a command to completion. What the program left running is killed when it exits; on cancel, TERM,
// then KILL after the grace period. An error means it could not run at all; a failure is a non-zero Result.
type Executor interface {
	Run(ctx context.Context, c Command) (Result, error)
}

// Label names the command in messages, with control characters and invalid UTF-8 as '?'.
func (c Command) Label() string {
	name := c.Name
	if name == "" {
		name = c.Path
	}
	return strings.Map(func(r rune) rune {
		if r == utf8.RuneError || !unicode.IsPrint(r) && r != ' ' {
			return '?'
		}
		return r
	}, name)
}

// Note writes msg into the command's own output (its log) and to warn (nil: none), naming the command.
func (c Command) Note(warn func(string), msg string) {
	if c.Stderr != nil {
		fmt.Fprintf(c.Stderr, "\nsgpu-queue: %s\n", msg)
	}
	if warn != nil {
		warn(c.Label() + " " + msg)
	}
}

// UnfoundHolder is the note on a command whose output a process no sweep found held open; it was read for d more.
func UnfoundHolder(d time.Duration) string {
	return fmt.Sprintf("left a process holding its output that could not be found (it cleared its environment and left its process "+
		"group?); its output was read for %s more, then cut", d)
}
