// Package adapter turns suites that have no hook scripts into work items: a pytest
// tree, a CTest build, or a file of commands (docs/adapters.md). An adapter lists a
// suite's items by running the real tool through an executor.Executor, and builds
// the executor.Command that runs one item, so a project adopts the queue without
// writing a hook layer first.
//
// One interface, one file per implementation: pytest.go, ctest.go, cmd.go. New picks
// the implementation from the suite's mode.
//
// The hook-contract suites can move behind the same interface (docs/adapters.md,
// "Part B"): a list adapter's List is the queue listing (TE_CI_LIST_ITEMS=1) and its
// census a second method that adapters whose listing is already the census do not
// need; its Command re-enters the script with the filter variable and runs in the
// item's own directory instead of the repo root (Run then carries both); its setup
// is the hook's setup pass. An opaque adapter lists one item with an empty tag and
// its Command is the script, run whole.
package adapter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/executor"
	"github.com/rocm/sgpu-queue/internal/hook"
	"github.com/rocm/sgpu-queue/internal/textfmt"
)

// Adapter lists one suite's items and builds the command of each.
type Adapter interface {
	// List runs the suite's listing through ex and returns its items, in the tool's
	// order; the same tree gives the same tags every time (weights key on them).
	// It fails with ErrNoItems (wrapped) when the suite lists nothing.
	List(ctx context.Context, ex executor.Executor, in Listing) (*Listed, error)
	// Command is the command that runs one listed item. It does not run anything.
	Command(it Item, run Run) executor.Command
}

// Checker is an adapter whose items' selection can be checked without running them
// (sgpu-queue verify; docs/adapters.md, "verify"): Selects lists what the item's own
// command would select, and returns the tags of that, in the listing's order, each
// once; exactly [it.Tag] is a round trip, nothing is an item that would run nothing.
type Checker interface {
	Selects(ctx context.Context, ex executor.Executor, in Listing, it Item) ([]string, error)
}

// Item is one work item of an adapter suite.
type Item struct {
	// Tag names the item within its suite: a test file or node id for pytest, a
	// test name (or base name) for ctest, the first word of a cmd line.
	Tag string
	// GPUs is the GPU count the suite's own metadata asks for this item (ctest's
	// RESOURCE_GROUPS); 0 when it says nothing and the suite's gpus= decides.
	GPUs int
	// Timeout is the item's own time limit (ctest's TIMEOUT property); 0: none.
	Timeout time.Duration
	// Args is what Command needs besides the tag (the pytest options, the ctest
	// names of a split=base item, a cmd line's command). Read-only: items of a
	// suite may share it.
	Args []string
}

// Listed is what a listing found.
type Listed struct {
	Items    []Item
	Warnings []string // things the user should know, one line each
}

// Listing is where a suite is set up and listed.
type Listing struct {
	Env []string  // the base environment (pinned to one GPU, as for capability probes)
	Dir string    // the repo root: adapter commands run there
	Log io.Writer // the listing's stderr and any output worth keeping (expand.log); nil discards
}

// Run is what one item's command needs.
type Run struct {
	Env []string // the item's environment, its GPUs pinned
	Dir string   // the repo root
	// JUnit is the file the item's JUnit XML goes to, where the command runs (a
	// container path under container exec); "" when JUnit is off.
	JUnit          string
	Stdout, Stderr io.Writer
	// Only narrows the item to these tests on a re-run, in the form its adapter's
	// Narrower gives them (docs/adapters.md, "Re-runs"); nil or empty: the whole
	// item. An adapter that cannot narrow, or ids that are not the item's, run the
	// whole item: running more than asked is safe, fewer would pass untested tests.
	Only []string
}

// Narrower is an adapter whose items can re-run only some of their tests
// (docs/adapters.md, "Re-runs"). TestIDs reads the JUnit file an attempt of item it
// wrote (a path on this machine) and returns its failed tests, each once, in the
// form Command takes in Run.Only, and how many test cases the file holds. An
// error means the item re-runs whole: a failed test that cannot be named wraps
// ErrCannotNarrow.
type Narrower interface {
	TestIDs(it Item, junit string) (failed []string, total int, err error)
}

// ErrCannotNarrow is wrapped by TestIDs when a failed test of the item has no id
// its command could select it by.
var ErrCannotNarrow = errors.New("a failed test cannot be named")

// Spec is an adapter suite's config line.
type Spec struct {
	Label   string
	Where   string // "file:line", for messages
	Mode    config.Mode
	Options config.Options
	Args    []string // the words after the mode field
}

// SpecOf is the adapter spec of a config line.
func SpecOf(s config.Suite) Spec {
	return Spec{Label: s.Label, Where: s.Where(), Mode: s.Mode, Options: s.Options, Args: s.Args}
}

// ErrNoItems is wrapped by a listing that found nothing to run.
var ErrNoItems = errors.New("no items")

// Error is a suite whose listing failed or whose config cannot work.
type Error struct {
	Label, Where string
	Msg          string
	Tail         string // last lines of the command's output
	Err          error  // a sentinel (ErrNoItems, ErrNoPytest), the executor's error or a parse error
}

func (e *Error) Error() string {
	s := fmt.Sprintf("%s: suite %q: %s", e.Where, e.Label, e.Msg)
	if e.Tail != "" {
		s += "\n" + textfmt.Indent(e.Tail)
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

func (s Spec) fail(err error, tail, format string, a ...any) *Error {
	return &Error{Label: s.Label, Where: s.Where, Msg: fmt.Sprintf(format, a...), Tail: tail, Err: err}
}

// New returns the adapter of an adapter suite, or an *Error when its arguments
// cannot work with it.
func New(s Spec) (Adapter, error) {
	switch s.Mode {
	case config.Pytest:
		return newPytest(s)
	case config.CTest:
		return newCTest(s)
	case config.Cmd:
		return newCmd(s)
	}
	return nil, s.fail(nil, "", "mode %q has no adapter (list and opaque suites use the hook contract)", s.Mode)
}

// WritesJUnit reports whether every item of an adapter mode writes the JUnit file
// it is given (pytest, ctest), so that one that exits 0 without writing it ran
// nothing (docs/outcomes.md, no-run); a cmd item's command may write none.
func WritesJUnit(m config.Mode) bool { return m == config.Pytest || m == config.CTest }

// Check is every adapter suite's New error at once (nil when all can work), so that
// a run refuses a bad line before anything runs, as it refuses a bad config.
func Check(suites []config.Suite) error {
	var errs []error
	for _, s := range suites {
		if s.Adapter() {
			if _, err := New(SpecOf(s)); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// Setup is the command of the suite's setup= option: a shell command run once from
// the repo root, with the suite's environment, before the suite is listed (a build
// its listing needs). ok is false when the suite has none. Suites giving the same
// setup command share one run of it (the caller keeps track).
func Setup(s Spec, in Listing) (c executor.Command, ok bool) {
	if s.Options.Setup == "" {
		return executor.Command{}, false
	}
	return executor.Command{
		Path: "sh", Args: []string{"-c", s.Options.Setup},
		Env: s.env(in.Env), Dir: in.Dir, Stdout: in.Log, Stderr: in.Log,
	}, true
}

// env is the base environment with the suite's env= settings on top.
func (s Spec) env(base []string) []string {
	return hook.Env(base).With(s.Options.Env...)
}

// maxListing bounds what one listing may print (100k node ids are about 10 MB).
const maxListing = 64 << 20

// output is what a listing command printed and how it ended.
type output struct {
	stdout []byte
	tail   string
	res    executor.Result
}

// capture runs a listing command: its stdout is kept (up to maxListing), its
// stderr goes to the log, and the last lines of both make the tail for messages.
// The log's header names the command on one line, shell-quoted as a list suite's
// is (docs/files.md, expand.log): shown when given (a command one line cannot
// hold as run, the pytest probe's), else c's own words.
func (s Spec) capture(ctx context.Context, ex executor.Executor, in Listing, c executor.Command, shown string) (*output, error) {
	log := in.Log
	if log == nil {
		log = io.Discard
	}
	if shown == "" {
		shown = config.QuoteWords(append([]string{c.Path}, c.Args...))
	}
	fmt.Fprintf(log, "### %s listing: %s\n", s.Label, shown)
	out := &textfmt.Capped{Max: maxListing}
	tail := &textfmt.Tail{}
	c.Stdout = io.MultiWriter(out, tail)
	c.Stderr = io.MultiWriter(log, tail)
	res, err := ex.Run(ctx, c)
	if err != nil {
		return nil, s.fail(err, "", "cannot run its listing: %v", err)
	}
	if res.Cancelled || ctx.Err() != nil {
		return nil, s.fail(context.Canceled, "", "listing cancelled")
	}
	if out.Over() {
		return nil, s.fail(nil, "", "its listing printed more than %d MiB", maxListing>>20)
	}
	return &output{stdout: out.Bytes(), tail: tail.String(), res: res}, nil
}

// inDir resolves a program named by a relative path (.venv/bin/python) against the
// directory the command runs in; bare names stay for PATH lookup where it runs.
func inDir(prog, dir string) string {
	if dir == "" || filepath.IsAbs(prog) || !strings.Contains(prog, "/") {
		return prog
	}
	return filepath.Join(dir, prog)
}
