// Package adapter turns every suite into work items (docs/adapters.md): a suite's
// adapter lists its items by running the real tool or script through an
// executor.Executor, and builds the executor.Command that runs one item. A
// hook-contract suite (list, opaque) speaks the contract of docs/hooks.md; a pytest
// tree, a CTest build or a file of commands needs no hook layer at all.
//
// One interface, one file per implementation: list.go, opaque.go, pytest.go,
// ctest.go, cmd.go. New picks the implementation from the suite's mode. What only
// some adapters can do is an optional interface: Censuser (a census apart from the
// listing), Checker (verify), Narrower (re-runs of failed tests), JUnitWriter and
// Sized (how items write JUnit and take GPUs), SetUpper (a setup pass before the
// items).
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
	// It fails with ErrNoItems (wrapped) when the suite lists nothing, and bounds
	// its commands by in.Timeout.
	List(ctx context.Context, ex executor.Executor, in Listing) (*Listed, error)
	// Command is the command that runs one listed item. It does not run anything.
	Command(it Item, run Run) executor.Command
}

// Censuser is an adapter whose listing answers for this host only (a list suite's
// capability probes): Census lists the tags of everything that exists at this level,
// which phase 6 prunes the weight table against. An adapter without it has its
// listing for its census.
type Censuser interface {
	Census(ctx context.Context, ex executor.Executor, in Listing) ([]string, error)
}

// JUnit is how an adapter's items write their JUnit XML (docs/adapters.md, "JUnit
// files").
type JUnit int

const (
	// JUnitUnderPrefix: the suite's script names its files under the hook
	// contract's JUnit prefix (Run.JUnitDir), <prefix><label>/<tag><suffix>.
	JUnitUnderPrefix JUnit = iota
	// JUnitGiven: sgpu-queue names each item's file (junit.ItemFile) and gives it
	// to the command (Run.JUnit); the tool always writes it, so an item that exits
	// 0 without it ran nothing (docs/outcomes.md, no-run).
	JUnitGiven
	// JUnitOffered: given as JUnitGiven, but the command may write none.
	JUnitOffered
)

// JUnitWriter is an adapter whose items are given their JUnit file (JUnitGiven or
// JUnitOffered); one without it writes under the prefix.
type JUnitWriter interface {
	JUnit() JUnit
}

// JUnitOf is how a's items write their JUnit XML.
func JUnitOf(a Adapter) JUnit {
	if w, ok := a.(JUnitWriter); ok {
		return w.JUnit()
	}
	return JUnitUnderPrefix
}

// Sized is an adapter whose items' GPU counts are what its tool takes as given (a
// ctest test's RESOURCE_GROUPS, the suite's gpus=): an item wider than the pool
// cannot run on fewer and is refused. A hook-contract suite's item is run on the
// whole pool instead, and its cases that need more skip (TE's rule).
type Sized interface {
	sized()
}

// SetUpper is an adapter whose suite sets itself up once before its items run, on
// its first GPUs: a list suite's script with the contract's setup switch
// (docs/hooks.md), whose items then skip it. A tool's setup= runs before its
// listing instead (Setup); an opaque suite's setup is part of its one item.
type SetUpper interface {
	// SetupCommand is that one run, as run says (its environment, GPUs, JUnit
	// folder and output). It does not run anything.
	SetupCommand(run Run) executor.Command
}

// Checker is an adapter whose items' selection can be checked without running them
// (sgpu-queue verify; docs/adapters.md, "verify"): Selects lists what the item's own
// command would select, and returns the tags of that, in the listing's order, each
// as often as it would run it; exactly [it.Tag] is a round trip, nothing is an item
// that would run nothing. An adapter without it has nothing to check: its items are
// their own commands (cmd), or one item is the whole suite (opaque).
type Checker interface {
	Selects(ctx context.Context, ex executor.Executor, in Listing, it Item) ([]string, error)
}

// Item is one work item of an adapter suite.
type Item struct {
	// Tag names the item within its suite: a test file or node id for pytest, a
	// test name (or base name) for ctest, the first word of a cmd line.
	Tag string
	// GPUs is the GPU count the suite's own metadata asks for this item (ctest's
	// RESOURCE_GROUPS, a list line's count); 0 when it says nothing and the suite's
	// gpus= decides. AllGPUs: the line asks for every GPU (gpus=all).
	GPUs    int
	AllGPUs bool
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
	// Env is the tools' environment (the level, none of the hook contract's
	// switches), pinned to one GPU as for capability probes.
	Env []string
	Dir string    // the repo root: tools' commands run there
	Log io.Writer // the listing's stderr and any output worth keeping (expand.log); nil discards
	// Timeout bounds each listing command (0: none); one past it is stopped and
	// its error says so (Error.TimedOut).
	Timeout time.Duration
	// Hook is what a hook-contract suite's listing starts from.
	Hook Hook
}

// Hook is the hook contract's side of a listing or an item: its variable names, the
// test level, and the run's environment before the contract's variables.
type Hook struct {
	Names hook.Names
	Level string
	Base  hook.Env
	// Pin assigns the suite's listing its GPUs (a multi-GPU suite's first ones),
	// set over Base and the suite's env=.
	Pin []string
	// Census: a list suite's listing and re-entries answer their capability
	// probes "supported", as its census pass does (what sgpu-queue verify checks
	// unless --queue); unset, they list what this host runs (the queue).
	Census bool
}

// Run is what one item's command needs.
type Run struct {
	Env []string // the tools' environment (Listing.Env), the item's GPUs pinned
	Dir string   // the repo root
	// Cwd is the item's own directory: a hook-contract item runs there.
	Cwd string
	// JUnit is the file the item's JUnit XML goes to, where the command runs (a
	// container path under container exec), for an adapter that gives it
	// (JUnitWriter); "" when JUnit is off. JUnitDir is its suite's folder under the
	// JUnit prefix, with a trailing slash, for one that writes under the prefix,
	// and JUnitSuffix the suffix the run was given ("" for none).
	JUnit, JUnitDir, JUnitSuffix string
	Stdout, Stderr               io.Writer
	// Hook is the hook contract's side: Pin is the item's GPU assignments.
	Hook Hook
	// Narrowed: a re-run runs the item for what failed last time (docs/reruns.md).
	// Only narrows it to these tests, in the form its adapter's Narrower gives
	// them (docs/adapters.md, "Re-runs"), and OnlyFile is the file that holds them,
	// where the command runs; nil and "": the whole item. An adapter that cannot
	// narrow, or ids that are not the item's, run the whole item: running more than
	// asked is safe, fewer would pass untested tests.
	Narrowed bool
	Only     []string
	OnlyFile string
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

// NotALineError is a failed test whose name holds a newline, CR or tab: a tests
// file holds one test id a line, so no re-run can name it (docs/reruns.md). It is
// an ErrCannotNarrow.
type NotALineError struct{ Name string }

func (e *NotALineError) Error() string {
	return fmt.Sprintf("its failed test %q holds a newline, CR or tab, so it cannot be a line of a tests file", e.Name)
}

func (e *NotALineError) Unwrap() error { return ErrCannotNarrow }

// Spec is a suite's config line.
type Spec struct {
	Label   string
	Where   string // "file:line", for messages
	Mode    config.Mode
	Options config.Options
	Args    []string // the words after the mode field (after the script's, for a hook-contract suite)
	// Suite is the whole line: a hook-contract suite's script, queue and GPU switch.
	Suite config.Suite
}

// SpecOf is the adapter spec of a config line.
func SpecOf(s config.Suite) Spec {
	return Spec{Label: s.Label, Where: s.Where(), Mode: s.Mode, Options: s.Options, Args: s.Args, Suite: s}
}

// For is the adapter of a config line (New of its spec).
func For(s config.Suite) (Adapter, error) { return New(SpecOf(s)) }

// ErrNoItems is wrapped by a listing that found nothing to run.
var ErrNoItems = errors.New("no items")

// Error is a suite whose listing failed or whose config cannot work.
type Error struct {
	Label, Where string
	Msg          string
	Tail         string // last lines of the command's output
	Err          error  // a sentinel (ErrNoItems, ErrNoPytest), the executor's error or a parse error
	TimedOut     bool   // its listing was stopped at Listing.Timeout
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

// New returns the adapter of a suite, or an *Error when its arguments cannot work
// with it.
func New(s Spec) (Adapter, error) {
	switch s.Mode {
	case config.List:
		return listSuite{s: s.Suite}, nil
	case config.Opaque:
		return opaqueSuite{s: s.Suite}, nil
	case config.Pytest:
		return newPytest(s)
	case config.CTest:
		return newCTest(s)
	case config.Cmd:
		return newCmd(s)
	}
	return nil, s.fail(nil, "", "mode %q has no adapter", s.Mode)
}

// Check is every suite's New error at once (nil when all can work), so that a run
// refuses a bad line before anything runs, as it refuses a bad config.
func Check(suites []config.Suite) error {
	var errs []error
	for _, s := range suites {
		if _, err := For(s); err != nil {
			errs = append(errs, err)
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

// errDeadline is the cause of a listing's context ended by Listing.Timeout.
var errDeadline = errors.New("listing deadline")

// timed runs a tool's listing under in.Timeout: one stopped there, or cancelled,
// fails saying so, with the last lines of its log.
func (s Spec) timed(ctx context.Context, in Listing, list func(context.Context, Listing) (*Listed, error)) (*Listed, error) {
	tail := &textfmt.Tail{}
	if in.Log != nil {
		in.Log = io.MultiWriter(in.Log, tail)
	} else {
		in.Log = tail
	}
	lctx, cancel := executor.Deadline(ctx, in.Timeout, errDeadline)
	defer cancel()
	l, err := list(lctx, in)
	switch {
	case err == nil:
		return l, nil
	case executor.PastDeadline(ctx, lctx, errDeadline):
		e := s.fail(nil, tail.String(), "its %s listing did not end within %s (list-timeout) and was stopped", s.Mode, in.Timeout)
		e.TimedOut = true
		return nil, e
	case ctx.Err() != nil:
		return nil, s.fail(context.Cause(ctx), "", "listing cancelled")
	}
	return nil, err
}
