// Package expand lists every suite's work items through its adapter
// (docs/adapters.md) into one list of items. What a suite lists is also its census,
// unless its adapter has its own (adapter.Censuser): a list suite's listing answers
// for this host, its census for every host.
package expand

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rocm/sgpu-queue/internal/adapter"
	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/runenv"
	"github.com/rocm/sgpu-queue/internal/schedule"
	"github.com/rocm/sgpu-queue/internal/textfmt"
	"github.com/rocm/sgpu-queue/internal/weights"
)

// Request is what expansion needs to run the listing passes.
type Request struct {
	Suites []config.Suite
	// Target is where the listings run, from its RepoRoot; its Env already pinned
	// to one GPU for capability probes.
	runenv.Target
	// Pin, when set, gives the pin assignments of a suite's listings (a
	// multi-GPU suite's first GPUs), set over Env's.
	Pin func(config.Suite) []string
	Log io.Writer // expand.log: the listings' stderr and any stray stdout
	// Timeout bounds each listing pass (0 = none).
	Timeout time.Duration
	// SetupTimeout bounds each setup= command of the adapter suites (0 = none).
	SetupTimeout time.Duration
	// Census lists the list suites as their census pass does (verify's default).
	Census bool
	// SetupLog opens the log of a setup= command and returns its path; nil keeps no
	// log.
	SetupLog func(s config.Suite) (w io.WriteCloser, path string, err error)
}

// Result is the expanded work.
type Result struct {
	Items  []Item         // queue, in config then listing order; an item's Seq is its index
	Census weights.Census // per suite: keys that exist; nil for a failed census; an opaque suite's is its label
	// OwnCensus are the suites whose census is a listing of its own
	// (adapter.Censuser), by label.
	OwnCensus map[string]bool
	Rows      []record.ItemID
	Warnings  []string
	// Setups are the setup= commands that ran, in the order they ran.
	Setups []SetupRun
}

// Item is one work item from its listing to its last attempt.
type Item struct {
	schedule.Item
	Suite   config.Suite
	Adapter adapter.Adapter
	Unit    adapter.Item
	// Narrowed: a re-run runs the item for what failed last time (docs/reruns.md);
	// OnlyTests ("" when whole) is the local file of Only.
	Narrowed  bool
	OnlyTests string
	Only      []string
}

// SetupRun is one setup= command that ran, once for every suite giving it.
type SetupRun struct {
	Suite  config.Suite // the first suite that gives it: its env= options were used
	Shared []string     // the labels of the other suites giving the same command
	Log    string       // its log, as SetupLog named it ("" when none)
	Secs   float64
}

// Error is a listing that failed or listed nothing: the run stops.
type Error struct {
	Suite    config.Suite
	Msg      string
	Tail     string // last lines of the listing's output
	TimedOut bool   // it was stopped at Request.Timeout
	Err      error  // the cause, when there is one (the executor's error, the cancel)
}

// Unwrap is the cause, so errors.Is sees executor.ErrNotFound or context.Canceled.
func (e *Error) Unwrap() error { return e.Err }

func (e *Error) Error() string {
	s := fmt.Sprintf("%s: suite %q: %s", e.Suite.Where(), e.Suite.Label, e.Msg)
	if e.Tail != "" {
		s += "\n" + textfmt.Indent(e.Tail)
	}
	return s
}

// Run runs the setup= commands of the suites that give one, then lists every suite
// in config order through its adapter.
func Run(ctx context.Context, r Request) (*Result, error) {
	res := &Result{Census: weights.Census{}, OwnCensus: map[string]bool{}}
	var err error
	if res.Setups, err = Setups(ctx, r); err != nil {
		return nil, err
	}
	for _, s := range r.Suites {
		if err := res.add(ctx, r, s); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// add adds a suite's items as its adapter lists them, and its census.
func (res *Result) add(ctx context.Context, r Request, s config.Suite) error {
	a, l, err := ListAdapter(ctx, r, s)
	if err != nil {
		return err
	}
	for _, w := range l.Warnings {
		res.Warnings = append(res.Warnings, fmt.Sprintf("suite %q listing: %s", s.Label, w))
	}
	tags := make([]string, len(l.Items))
	for i, it := range l.Items {
		tags[i] = it.Tag
		res.Items = append(res.Items, Item{Item: scheduled(s, it, len(res.Items)), Suite: s, Adapter: a, Unit: it})
	}
	census := tags
	if c, ok := a.(adapter.Censuser); ok {
		res.OwnCensus[s.Label] = true
		census = res.census(ctx, r, s, c, tags)
	}
	if census == nil {
		res.Census[s.Label] = nil
		return nil
	}
	keys := map[string]bool{}
	for _, t := range census {
		id := record.ItemID{Label: s.Label, Tag: t}
		keys[id.Key()] = true
		res.Rows = append(res.Rows, id)
	}
	res.Census[s.Label] = keys
	return nil
}

// scheduled is the scheduler's item of it in suite s: the count its listing gave,
// else the suite's.
func scheduled(s config.Suite, it adapter.Item, seq int) schedule.Item {
	n, all := s.Width()
	si := schedule.Item{ItemID: record.ItemID{Label: s.Label, Tag: it.Tag}, Seq: seq, GPUs: n, AllGPUs: all}
	if it.GPUs > 0 || it.AllGPUs {
		si.GPUs, si.AllGPUs = it.GPUs, it.AllGPUs
	}
	return si
}

// census is the census tags of a suite with a census of its own, or nil when it
// cannot be trusted: that only disables pruning for the suite, with a warning.
func (res *Result) census(ctx context.Context, r Request, s config.Suite, c adapter.Censuser, queued []string) []string {
	tags, err := c.Census(ctx, r.Exec, r.Listing(s, r.Log))
	if err != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("suite %q census (%s=1) failed, its weights are not pruned this run: %v",
			s.Label, r.Hooks.SkipCheckSupported, firstLine(FromAdapter(s, err).Error())))
		return nil
	}
	if msg := censusTrusted(queued, tags); msg != "" {
		res.Warnings = append(res.Warnings, fmt.Sprintf("suite %q census %s; its weights are not pruned this run", s.Label, msg))
		return nil
	}
	return tags
}

// censusTrusted says why a suite's census cannot be trusted ("" when it can): empty,
// or lacking a queued tag, which would prune the weight of an item that still runs.
func censusTrusted(queued, census []string) string {
	if len(census) == 0 {
		return "listed nothing"
	}
	has := map[string]bool{}
	for _, t := range census {
		has[t] = true
	}
	var missing []string
	for _, t := range queued {
		if !has[t] {
			missing = append(missing, textfmt.Printable(t))
		}
	}
	if len(missing) > 0 {
		more := ""
		if len(missing) > 3 {
			more = fmt.Sprintf(" and %d more", len(missing)-3)
			missing = missing[:3]
		}
		return fmt.Sprintf("lacks %s%s that the queue pass listed (it must list everything that exists)", strings.Join(missing, ", "), more)
	}
	return ""
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
