// Package verify checks the round trip the queue rests on (docs/suites.md,
// docs/hooks.md): a tag a list suite lists, dispatched as an item's filter, selects
// exactly the call line that printed it. The re-entries only list, so they need no
// GPU and run in parallel. An adapter suite's items must each select exactly
// themselves (docs/adapters.md).
package verify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocm/sgpu-queue/internal/adapter"
	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/exitcode"
	"github.com/rocm/sgpu-queue/internal/expand"
	"github.com/rocm/sgpu-queue/internal/hook"
	"github.com/rocm/sgpu-queue/internal/optname"
	"github.com/rocm/sgpu-queue/internal/runenv"
	"github.com/rocm/sgpu-queue/internal/textfmt"
)

// Options are the settings of one verify: a run's configs and target, and its own.
type Options struct {
	// Face names the options in messages (flags, or the action's inputs).
	Face    optname.Face
	Configs config.Sources
	Target  runenv.Options
	// Queue verifies the queue listing (what this host runs) instead of the census
	// (every tag any host could dispatch, and no GPU needed).
	Queue bool
	// Jobs is how many re-entries run at once; ≤ 0 = the number of CPUs.
	Jobs int
	// Out receives each suite's verdict as it is known (nil = none).
	Out io.Writer
	// Progress receives a line every ProgressEvery while a suite's re-entries run
	// (nil = none; ProgressEvery ≤ 0 = every 2 s).
	Progress      io.Writer
	ProgressEvery time.Duration
}

// Kind is how a tag's re-entry turned out.
type Kind int

const (
	// RoundTrip: it printed exactly its own tag, once.
	RoundTrip Kind = iota
	// Nothing: it printed no tag, so the item would run no call line.
	Nothing
	// Several: it printed its own tag and others, or its own more than once: the
	// item would run several call lines.
	Several
	// Other: it printed only other tags: the item would run another item's call line.
	Other
	// Failed: it could not run, or exited non-zero.
	Failed
)

func (k Kind) String() string {
	switch k {
	case RoundTrip:
		return "round trip"
	case Nothing:
		return "selected nothing"
	case Several:
		return "selected several"
	case Other:
		return "selected another"
	case Failed:
		return "re-entry failed"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Classify says what it means for tag that its re-entry printed got (in order,
// repeats kept).
func Classify(tag string, got []string) Kind {
	own := 0
	for _, g := range got {
		if g == tag {
			own++
		}
	}
	switch {
	case len(got) == 0:
		return Nothing
	case own == 1 && len(got) == 1:
		return RoundTrip
	case own > 0:
		return Several
	}
	return Other
}

// Mismatch is a tag whose re-entry did not select exactly itself.
type Mismatch struct {
	Tag  string
	Kind Kind
	Got  []string // the tags the re-entry printed, repeats kept
	Err  error    // Failed: why, with the last lines of its output
}

// Suite is the verdict on one suite of the configs.
type Suite struct {
	Label string
	Where string // config file:line
	Mode  config.Mode
	// Skip says why the suite was not verified ("" = it was): its adapter has no
	// selection to check.
	Skip       string
	Tags       int // tags its listing printed, each re-entered once
	Mismatches []Mismatch
	Err        error // its listing failed or printed no tag: nothing was re-entered
}

// OK reports whether the suite round-trips (an opaque one has nothing to check).
func (s Suite) OK() bool { return s.Err == nil && len(s.Mismatches) == 0 }

// Result is what one verify found.
type Result struct {
	Suites []Suite
	// Warnings are the listings' (a malformed line) and their commands' (a process
	// left running after its script ended), as a run warns of them.
	Warnings  []string
	Cancelled bool
	mu        sync.Mutex // re-entries run at once and warn from their executors
}

func (r *Result) warn(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Warnings = append(r.Warnings, msg)
}

// ExitCode is 0 when every list suite round-trips.
func (r *Result) ExitCode() int {
	if r.Cancelled {
		return exitcode.Interrupted
	}
	for _, s := range r.Suites {
		if !s.OK() {
			return exitcode.Failed
		}
	}
	return exitcode.OK
}

// Run reads the configs and verifies every list suite in config order. The error is
// non-nil only for a problem with the settings or configs (nothing was verified).
func Run(ctx context.Context, o Options) (*Result, error) {
	res := &Result{}
	suites, req, closeExec, err := prepare(ctx, &o, res.warn)
	if err != nil {
		return nil, err
	}
	defer closeExec()
	setupErr := setups(ctx, req)
	for _, s := range suites {
		if ctx.Err() != nil {
			res.Cancelled = true
			break
		}
		v, warns := Suite{Label: s.Label, Where: s.Where(), Mode: s.Mode, Err: setupErr[s.Options.Setup]}, []string(nil)
		if v.Err == nil {
			v, warns = verifySuite(ctx, o, req, s)
		}
		for _, w := range warns {
			res.warn(fmt.Sprintf("suite %q listing: %s", s.Label, w))
		}
		if errors.Is(v.Err, context.Canceled) || ctx.Err() != nil {
			res.Cancelled = true
			break
		}
		res.Suites = append(res.Suites, v)
		if o.Out != nil {
			v.Write(o.Out, o.Target.Hooks.Filter)
		}
	}
	return res, nil
}

// prepare reads the configs and opens the target as a run does, and returns the
// listing request every pass starts from and what closes it.
func prepare(ctx context.Context, o *Options, warn func(string)) ([]config.Suite, expand.Request, func(), error) {
	none := func() {}
	to := &o.Target
	if err := runenv.Settle(o.Face, to); err != nil {
		return nil, expand.Request{}, none, err
	}
	suites, err := o.Configs.Load()
	if err = errors.Join(err, config.Resolve(suites, to.RepoRoot, to.Container == ""), adapter.Check(suites)); err != nil {
		return nil, expand.Request{}, none, err
	}
	t, err := runenv.Open(ctx, o.Face, *to, warn, to.RepoRoot)
	if err != nil {
		return nil, expand.Request{}, none, err
	}
	out := o.Out
	if out == nil {
		out = io.Discard
	}
	if err := runenv.ApplyEnvScript(ctx, o.Face, *to, t, out, warn); err != nil {
		t.Close()
		return nil, expand.Request{}, none, err
	}
	req := expand.Request{Suites: suites, Target: *t, Timeout: to.ListTimeout, SetupTimeout: to.SetupTimeout, Census: !o.Queue}
	return suites, req, t.Close, nil
}

// each runs check for 0 … n-1, Jobs at once, with progress lines, and returns the
// mismatches in that order, or the context's error when it ended first.
func each(ctx context.Context, o Options, label string, n int, check func(i int) *Mismatch) ([]Mismatch, error) {
	found := make([]*Mismatch, n)
	var done atomic.Int64
	stop := progress(o, label, n, &done)
	defer stop()
	jobs := o.Jobs
	if jobs <= 0 {
		jobs = runtime.NumCPU()
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < jobs && w < n; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				found[i] = check(i)
				done.Add(1)
			}
		}()
	}
	for i := 0; i < n; i++ {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	var ms []Mismatch
	for _, m := range found {
		if m != nil {
			ms = append(ms, *m)
		}
	}
	return ms, nil
}

// setups runs the setup= commands as a run does, and returns by command the error
// of each that failed or never ran.
func setups(ctx context.Context, req expand.Request) map[string]error {
	runs, err := expand.Setups(ctx, req)
	if err == nil {
		return nil
	}
	ok := map[string]bool{}
	for _, r := range runs {
		ok[r.Suite.Options.Setup] = true
	}
	failed := map[string]error{}
	for _, s := range req.Suites {
		if c := s.Options.Setup; c != "" && !ok[c] {
			failed[c] = err
		}
	}
	return failed
}

// unchecked says why a suite whose adapter has no selection to check
// (adapter.Checker) is not verified.
var unchecked = map[config.Mode]string{
	config.Opaque: "one item that runs the whole script: no tags to round-trip",
	config.Cmd:    "each line is its own command: no selection to check",
}

// verifySuite lists s, then checks that each item's own selection picks exactly that
// item (adapter.Checker), Jobs items at once.
func verifySuite(ctx context.Context, o Options, req expand.Request, s config.Suite) (Suite, []string) {
	v := Suite{Label: s.Label, Where: s.Where(), Mode: s.Mode}
	a, l, err := expand.ListAdapter(ctx, req, s)
	if err != nil {
		v.Err = err
		return v, nil
	}
	c, ok := a.(adapter.Checker)
	if !ok {
		v.Skip = unchecked[s.Mode]
		return v, l.Warnings
	}
	v.Tags = len(l.Items)
	in := req.Listing(s, nil)
	v.Mismatches, v.Err = each(ctx, o, s.Label, len(l.Items), func(i int) *Mismatch {
		it := l.Items[i]
		m := &Mismatch{Tag: it.Tag}
		m.Got, m.Err = c.Selects(ctx, req.Exec, in, it)
		if m.Err != nil {
			m.Kind, m.Err = Failed, expand.FromAdapter(s, m.Err)
			return m
		}
		if m.Kind = Classify(it.Tag, m.Got); m.Kind == RoundTrip {
			return nil
		}
		return m
	})
	return v, l.Warnings
}

// progress prints a line every ProgressEvery until the returned func is called, so
// a long suite shows it is moving without a line per tag.
func progress(o Options, label string, total int, done *atomic.Int64) func() {
	if o.Progress == nil {
		return func() {}
	}
	every := o.ProgressEvery
	if every <= 0 {
		every = 2 * time.Second
	}
	start := time.Now()
	quit := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				fmt.Fprintf(o.Progress, "verify: %s: %d of %d tags re-entered (%s)\n", label, done.Load(), total,
					textfmt.Dur(time.Since(start).Seconds()))
			case <-quit:
				return
			}
		}
	}()
	return func() {
		close(quit)
		<-finished
	}
}

// maxShown is how many tags a "selected several" line names.
const maxShown = 8

// Write prints the verdict on s: one line, then one line per mismatch.
func (s Suite) Write(w io.Writer, filterVar string) {
	switch {
	case s.Skip != "":
		fmt.Fprintf(w, "%s: %s, skipped (%s)\n", s.Label, s.Mode, s.Skip)
		return
	case s.Err != nil:
		fmt.Fprintf(w, "%s: listing failed, nothing round-tripped:\n%s\n", s.Label, textfmt.Indent(s.Err.Error()))
		return
	case s.Mode == config.List:
		// Tags counts every re-entry: the ones that round-tripped are the rest.
		fmt.Fprintf(w, "%s: %d tags round-tripped, %d mismatches\n", s.Label, s.Tags-len(s.Mismatches), len(s.Mismatches))
	default:
		fmt.Fprintf(w, "%s: %d %s items each select exactly themselves, %d mismatches\n", s.Label, s.Tags-len(s.Mismatches), s.Mode,
			len(s.Mismatches))
	}
	for _, m := range s.Mismatches {
		fmt.Fprintf(w, "  %s", textfmt.Printable(m.Tag))
		if s.Mode == config.List {
			// The filter value it was re-entered (and is dispatched) with.
			fmt.Fprintf(w, " (%s=%s)", filterVar, textfmt.Printable(hook.FilterPattern(m.Tag)))
		}
		fmt.Fprintf(w, ": %s", m.Kind)
		switch m.Kind {
		case Several, Other:
			fmt.Fprintf(w, ": %s\n", names(m.Got))
		case Failed:
			fmt.Fprintf(w, ": %s\n", failure(m.Err))
		default:
			fmt.Fprintln(w)
		}
	}
}

// failure says why a re-entry failed, without the suite's name and config line (its
// verdict names them).
func failure(err error) string {
	var le *expand.Error
	if !errors.As(err, &le) {
		return err.Error()
	}
	if le.Tail == "" {
		return le.Msg
	}
	return le.Msg + "\n" + textfmt.Indent(le.Tail)
}

// names lists the tags a re-entry printed, the first maxShown of them.
func names(tags []string) string {
	var parts []string
	for i, t := range tags {
		if i == maxShown {
			parts = append(parts, fmt.Sprintf("… and %d more", len(tags)-maxShown))
			break
		}
		parts = append(parts, textfmt.Printable(t))
	}
	return strings.Join(parts, ", ")
}
