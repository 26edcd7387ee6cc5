// Package adapter turns every suite into work items (docs/adapters.md): it lists a suite's items by running its tool
// or script through an executor and builds the command that runs one item. New picks the implementation by mode;
// what only some adapters can do is an optional interface.
package adapter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/executor"
	"github.com/rocm/sgpu-queue/internal/hook"
	"github.com/rocm/sgpu-queue/internal/textfmt"
)

// Adapter lists one suite's items and builds the command of each.
type Adapter interface {
	// List runs the suite's listing through ex and returns its items in the tool's order, with stable tags, as the
	// weights key on them. Nothing listed is ErrNoItems; in.Timeout bounds its commands.
	List(ctx context.Context, ex executor.Executor, in Listing) (*Listed, error)
	// Command is the command that runs one listed item. It does not run anything.
	Command(it Item, run Run) executor.Command
}

// Censuser is an adapter whose listing answers for this host only: Census lists everything at this level,
// which the weight table is pruned against.
type Censuser interface {
	Census(ctx context.Context, ex executor.Executor, in Listing) ([]string, error)
}

// JUnit is how an adapter's items write their JUnit XML (docs/adapters.md, "JUnit files").
type JUnit int

const (
	// JUnitUnderPrefix: the script names its files under the contract's JUnit prefix.
	JUnitUnderPrefix JUnit = iota
	// JUnitGiven: sgpu-queue names the file and the tool always writes it, so exit 0 without it ran nothing (no-run).
	JUnitGiven
	// JUnitOffered: given as JUnitGiven, but the command may write none.
	JUnitOffered
)

// JUnitWriter is an adapter whose items are given their JUnit file; one without it writes under the prefix.
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

// Sized is an adapter whose tool takes its items' GPU counts as given, so an item wider than the pool is refused;
// a hook-contract item runs on the whole pool instead (TE's rule).
type Sized interface {
	sized()
}

// SetUpper is an adapter whose suite sets itself up once before its items, with the contract's setup
// switch (docs/hooks.md).
type SetUpper interface {
	// SetupCommand is that one run's command; it runs nothing.
	SetupCommand(run Run) executor.Command
}

// Checker is an adapter whose items' selection can be checked without running them (docs/adapters.md, "verify"):
// Selects returns the tags the item's command would run, each as often as it would.
type Checker interface {
	Selects(ctx context.Context, ex executor.Executor, in Listing, it Item) ([]string, error)
}

// Item is one work item of an adapter suite.
type Item struct {
	// Tag names the item in its suite: a pytest file or node id, a ctest name, a cmd line's first word.
	Tag string
	// GPUs is the count the suite's metadata asks for the item; 0 leaves it to gpus=. AllGPUs: gpus=all.
	GPUs    int
	AllGPUs bool
	// Timeout is the item's own time limit (ctest's TIMEOUT property); 0: none.
	Timeout time.Duration
	// Args is what Command needs besides the tag; read-only, as a suite's items may share it.
	Args []string
}

// Listed is what a listing found.
type Listed struct {
	Items    []Item
	Warnings []string // things the user should know, one line each
}

// Listing is where a suite is set up and listed.
type Listing struct {
	// Env is the tools' environment, pinned to one GPU as for capability probes.
	Env []string
	Dir string    // the repo root: tools' commands run there
	Log io.Writer // the listing's stderr and any output worth keeping (expand.log); nil discards
	// Timeout bounds each listing command (0: none); one past it fails with Error.TimedOut.
	Timeout time.Duration
	// Hook is what a hook-contract suite's listing starts from.
	Hook Hook
}

// Hook is the hook contract's side of a listing or an item.
type Hook struct {
	Names hook.Names
	Level string
	Base  hook.Env
	// Pin gives the listing its GPUs, over Base and the suite's env=.
	Pin []string
	// Census: capability probes answer "supported", as the census pass does; unset, they list this host's queue.
	Census bool
}

// Run is what one item's command needs.
type Run struct {
	Env []string // the tools' environment (Listing.Env), the item's GPUs pinned
	Dir string   // the repo root
	// Cwd is the item's own directory: a hook-contract item runs there.
	Cwd string
	// JUnit is the item's JUnit file where the command runs, for a JUnitWriter; JUnitDir and JUnitSuffix are the
	// prefix folder and suffix for one that writes under the prefix. "" when JUnit is off.
	JUnit, JUnitDir, JUnitSuffix string
	Stdout, Stderr               io.Writer
	// Hook is the hook contract's side: Pin is the item's GPU assignments.
	Hook Hook
	// Narrowed: a re-run runs only the tests in Only, listed in OnlyFile (docs/reruns.md). An adapter
	// that cannot narrow
	// runs the whole item: running more than asked is safe, fewer would pass untested tests.
	Narrowed bool
	Only     []string
	OnlyFile string
}

// Narrower is an adapter whose items can re-run only their failed tests (docs/adapters.md, "Re-runs"). TestIDs reads
// an attempt's JUnit file; an error re-runs the item whole.
type Narrower interface {
	TestIDs(it Item, junit string) (failed []string, total int, err error)
}

// ErrCannotNarrow is wrapped by TestIDs when a failed test has no id its command could select.
var ErrCannotNarrow = errors.New("a failed test cannot be named")

// NotALineError is a failed test whose name holds a newline, CR or tab, so no tests file line can name it
// (docs/reruns.md). It is an ErrCannotNarrow.
type NotALineError struct{ Name string }

func (e *NotALineError) Error() string {
	return fmt.Sprintf("its failed test %q holds a newline, CR or tab, so it cannot be a line of a tests file", e.Name)
}

func (e *NotALineError) Unwrap() error { return ErrCannotNarrow }

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

// fail is an *Error of suite s.
func fail(s config.Suite, err error, tail, format string, a ...any) *Error {
	return &Error{Label: s.Label, Where: s.Where(), Msg: fmt.Sprintf(format, a...), Tail: tail, Err: err}
}

// New returns a suite's adapter, or an *Error when its arguments cannot work.
func New(s config.Suite) (Adapter, error) {
	switch s.Mode {
	case config.List:
		return listSuite{s: s}, nil
	case config.Opaque:
		return opaqueSuite{s: s}, nil
	case config.Pytest:
		return newPytest(s)
	case config.CTest:
		return newCTest(s)
	case config.Cmd:
		return newCmd(s)
	}
	return nil, fail(s, nil, "", "mode %q has no adapter", s.Mode)
}

// Check is every suite's New error at once, so a run refuses a bad line before anything runs.
func Check(suites []config.Suite) error {
	var errs []error
	for _, s := range suites {
		if _, err := New(s); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Setup is the command of the suite's setup= option, run once from the repo root before listing; false when none.
// Suites with the same command share one run.
func Setup(s config.Suite, in Listing) (c executor.Command, ok bool) {
	if s.Options.Setup == "" {
		return executor.Command{}, false
	}
	return executor.Command{
		Path: "sh", Args: []string{"-c", s.Options.Setup},
		Env: s.Environ(in.Env), Dir: in.Dir, Stdout: in.Log, Stderr: in.Log,
	}, true
}

// command is an item's command: path with args from the repo root, the suite's env= and then extra over the tools'
// environment.
func command(s config.Suite, run Run, path string, args []string, extra ...string) executor.Command {
	return executor.Command{
		Path: path, Args: args, Env: s.Environ(run.Env).With(extra...), Dir: run.Dir,
		Stdout: run.Stdout, Stderr: run.Stderr,
	}
}

// narrowTo is only when each of its names is the item's (in), else whole: running more than asked is safe.
func narrowTo(whole, only []string, in func(string) bool) []string {
	if len(only) == 0 || slices.ContainsFunc(only, func(n string) bool { return !in(n) }) {
		return whole
	}
	return only
}

// maxListing bounds what one listing may print (100k node ids are about 10 MB).
const maxListing = 64 << 20

// output is what a listing command printed and how it ended.
type output struct {
	stdout []byte
	tail   string
	res    executor.Result
}

// capture runs a listing command: stdout kept (up to maxListing), stderr to the log, the last lines as the tail.
// The log's header shows shown, else c's own words (docs/files.md, expand.log).
func capture(ctx context.Context, ex executor.Executor, in Listing, s config.Suite, c executor.Command, shown string) (*output, error) {
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
		return nil, fail(s, err, "", "cannot run its listing: %v", err)
	}
	if res.Cancelled || ctx.Err() != nil {
		return nil, fail(s, context.Canceled, "", "listing cancelled")
	}
	if out.Over() {
		return nil, fail(s, nil, "", "its listing printed more than %d MiB", maxListing>>20)
	}
	return &output{stdout: out.Bytes(), tail: tail.String(), res: res}, nil
}

// inDir resolves a relative program path against the command's directory; bare names stay for PATH lookup.
func inDir(prog, dir string) string {
	if dir == "" || filepath.IsAbs(prog) || !strings.Contains(prog, "/") {
		return prog
	}
	return filepath.Join(dir, prog)
}

// errDeadline is the cause of a listing's context ended by Listing.Timeout.
var errDeadline = errors.New("listing deadline")

// timed runs a listing under in.Timeout; a stopped one says so, with its log's last lines.
func timed(ctx context.Context, in Listing, s config.Suite, list func(context.Context, Listing) (*Listed, error)) (*Listed, error) {
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
		e := fail(s, nil, tail.String(), "its %s listing did not end within %s (list-timeout) and was stopped", s.Mode, in.Timeout)
		e.TimedOut = true
		return nil, e
	case ctx.Err() != nil:
		return nil, fail(s, context.Cause(ctx), "", "listing cancelled")
	}
	return nil, err
}
