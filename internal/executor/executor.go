// Package executor is the seam between the engine and the place a suite command runs.
//
// The engine never starts a process itself: listing passes, setup, every item and the
// GPU detection tools all go through an Executor, so the same engine runs commands on
// this machine (Local) or inside another container (the Docker executor).
package executor

import (
	"context"
	"errors"
	"io"
	"strings"
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
	// ExitCode follows the shell convention: the process's exit status, or 128+N when
	// it was ended by signal N (a segfault is 139, a KILL 137).
	ExitCode int
	// Signaled is true when the process ended by a signal.
	Signaled bool
	// Cancelled is true when the context ended before the command did and the
	// executor stopped it.
	Cancelled bool
}

// ErrNotFound is returned (wrapped) when the program does not exist or cannot be
// executed where the command runs.
var ErrNotFound = errors.New("command not found")

// ErrUnavailable is matched (errors.Is) by errors saying that nothing more can run
// where this executor runs commands (its container stopped): dispatch stops, and the
// items not yet run are marked instead of each failing in turn.
var ErrUnavailable = errors.New("executor unavailable")

// Executor runs a command to completion.
//
// A command ends when its program exits: what it left running (background children,
// in its process group or not) is killed then, and its output is not waited for
// beyond a short bound. When ctx is cancelled, the executor ends everything the
// command started: TERM, then KILL after its grace period (none when zero). Run
// returns an error only when the command could not be run at all; a command that ran
// and failed is a Result with a non-zero code.
type Executor interface {
	Run(ctx context.Context, c Command) (Result, error)
}

// Label is how messages name the command: its Name (else Path), with control
// characters and invalid UTF-8 shown as '?' so that a hostile tag cannot rewrite the
// terminal.
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
