// Package expand is phase 1: it asks every list suite for its work items through the
// hook contract, twice: what this host will run (the queue) and what exists at this
// level (the census, which phase 6 prunes the weight table against). An opaque suite
// is one item and is not asked: its census is its own bare label. An adapter suite
// (pytest, ctest, cmd; docs/adapters.md) is listed once through its adapter, after
// its setup= command: what its tool lists is what exists, so the listing is also its
// census.
package expand

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rocm/sgpu-queue/internal/adapter"
	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/executor"
	"github.com/rocm/sgpu-queue/internal/hook"
	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/schedule"
	"github.com/rocm/sgpu-queue/internal/textfmt"
	"github.com/rocm/sgpu-queue/internal/weights"
)

// Request is what expansion needs to run the listing passes.
type Request struct {
	Suites []config.Suite
	Exec   executor.Executor
	Hooks  hook.Names
	Env    hook.Env // base environment, already pinned to one GPU for capability probes
	// Pin, when set, gives the pin assignments of a suite's listings (a
	// multi-GPU suite's first GPUs), set over Env's.
	Pin   func(config.Suite) []string
	Level string
	Dir   string    // working directory of the listing commands (the repo root)
	Log   io.Writer // expand.log: the listings' stderr and any stray stdout
	// Timeout bounds each listing pass (0 = none): one past it is stopped, and the
	// error says so with the tail of its output.
	Timeout time.Duration
	// SetupTimeout bounds each setup= command of the adapter suites (0 = none).
	SetupTimeout time.Duration
	// SetupLog opens the log of a setup= command, for the first suite that gives it,
	// and returns the path to name in messages; nil keeps no log (a failure still
	// shows the tail of its output).
	SetupLog func(s config.Suite) (w io.WriteCloser, path string, err error)
}

// Result is the expanded work.
type Result struct {
	Items    []schedule.Item // queue, in config then listing order; an item's Seq is its index
	Census   weights.Census  // per suite: keys that exist; nil for a failed census; an opaque suite's is its label
	Rows     []logdir.CensusRow
	Warnings []string
	// Adapted are the items of adapter suites, by their Seq: the adapter that runs
	// each and the item as it listed it.
	Adapted map[int]Adapted
	// Setups are the setup= commands that ran, in the order they ran.
	Setups []SetupRun
}

// Adapted is an adapter suite's item: what dispatch needs to build its command.
type Adapted struct {
	Adapter adapter.Adapter
	Item    adapter.Item
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

// errDeadline is the cause of a listing's context ended by Request.Timeout.
var errDeadline = errors.New("listing deadline")

func (e *Error) Error() string {
	s := fmt.Sprintf("%s: suite %q: %s", e.Suite.Where(), e.Suite.Label, e.Msg)
	if e.Tail != "" {
		s += "\n" + textfmt.Indent(e.Tail)
	}
	return s
}

// maxListing bounds what one listing may print (100k items are about 5 MB).
const maxListing = 64 << 20

// Run runs the setup= commands of the adapter suites, then lists every suite in
// config order: both passes of a list suite, the adapter's listing of an adapter
// suite.
func Run(ctx context.Context, r Request) (*Result, error) {
	res := &Result{Census: weights.Census{}, Adapted: map[int]Adapted{}}
	var err error
	if res.Setups, err = Setups(ctx, r); err != nil {
		return nil, err
	}
	for _, s := range r.Suites {
		switch {
		case s.Adapter():
			err = res.addAdapted(ctx, r, s)
		case s.Mode == config.Opaque:
			res.addOpaque(s)
		default:
			err = res.addList(ctx, r, s)
		}
		if err != nil {
			return nil, err
		}
	}
	return res, nil
}

// addAdapted adds an adapter suite's items as its adapter lists them; the listing
// is its census.
func (res *Result) addAdapted(ctx context.Context, r Request, s config.Suite) error {
	a, l, err := ListAdapter(ctx, r, s)
	if err != nil {
		return err
	}
	for _, w := range l.Warnings {
		res.Warnings = append(res.Warnings, fmt.Sprintf("suite %q listing: %s", s.Label, w))
	}
	keys := map[string]bool{}
	for _, it := range l.Items {
		// GPUs: what the suite's own metadata asks for this item (ctest's
		// RESOURCE_GROUPS); 0 leaves it to the suite's gpus=.
		seq := len(res.Items)
		res.Items = append(res.Items, Listed{Tag: it.Tag, GPUs: it.GPUs}.item(s, seq))
		res.Adapted[seq] = Adapted{Adapter: a, Item: it}
		keys[weights.Key(s.Label, it.Tag)] = true
		res.Rows = append(res.Rows, logdir.CensusRow{Label: s.Label, Tag: it.Tag})
	}
	res.Census[s.Label] = keys
	return nil
}

// addOpaque adds an opaque suite: one item, the suite run whole.
func (res *Result) addOpaque(s config.Suite) {
	n, all := s.Width()
	res.Items = append(res.Items, schedule.Item{Label: s.Label, Seq: len(res.Items), GPUs: n, AllGPUs: all})
	// Its census is its bare label (an items.tsv row with an empty tag, as
	// TE writes it), so keys it left as a list suite are pruned.
	res.Census[s.Label] = map[string]bool{weights.Key(s.Label, ""): true}
	res.Rows = append(res.Rows, logdir.CensusRow{Label: s.Label})
}

// addList adds a list suite's items from its queue pass, then its census from the
// census pass; a census that fails or cannot be trusted only disables pruning for
// the suite.
func (res *Result) addList(ctx context.Context, r Request, s config.Suite) error {
	tags, tail, err := List(ctx, r, s, Pass{})
	if err != nil {
		return err
	}
	got, warns := ParseListing(tags, r.Hooks.ItemMarker)
	for _, w := range warns {
		res.Warnings = append(res.Warnings, fmt.Sprintf("suite %q listing: %s", s.Label, w))
	}
	if len(got) == 0 {
		return NoItems(r, s, tail)
	}
	for _, l := range got {
		if err := l.Err(s, r.Hooks.ItemMarker); err != nil {
			return err
		}
		res.Items = append(res.Items, l.item(s, len(res.Items)))
	}

	out, _, err := List(ctx, r, s, Pass{Census: true})
	if err != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("suite %q census (%s=1) failed, its weights are not pruned this run: %v", s.Label, r.Hooks.SkipCheckSupported, firstLine(err.Error())))
		res.Census[s.Label] = nil
		return nil
	}
	census, _ := ParseListing(out, r.Hooks.ItemMarker)
	keys, msg := censusKeys(s.Label, got, census)
	if msg != "" {
		res.Warnings = append(res.Warnings, fmt.Sprintf("suite %q census %s; its weights are not pruned this run", s.Label, msg))
	}
	if keys != nil {
		for _, l := range census {
			res.Rows = append(res.Rows, logdir.CensusRow{Label: s.Label, Tag: l.Tag})
		}
	}
	res.Census[s.Label] = keys
	return nil
}

// NoItems is the error of a list suite whose listing printed no item line; tail is
// the last lines of its output.
func NoItems(r Request, s config.Suite, tail string) *Error {
	return &Error{Suite: s, Tail: tail, Msg: fmt.Sprintf("its listing (%s=1) printed no %q line: check that the script honours the hook contract at level %s",
		r.Hooks.ListItems, r.Hooks.ItemMarker+" <tag>", r.Level)}
}

// censusKeys is the weight keys of a list suite's census, or nil (with why) when it
// cannot be trusted as everything that exists: it listed nothing, or it lacks a tag
// the queue pass listed (the census must be a superset: it only answers capability
// probes "supported"), which would prune a weight of an item that still runs.
func censusKeys(label string, queued, census []Listed) (map[string]bool, string) {
	if len(census) == 0 {
		return nil, "listed nothing"
	}
	keys := map[string]bool{}
	for _, l := range census {
		keys[weights.Key(label, l.Tag)] = true
	}
	var missing []string
	for _, l := range queued {
		if !keys[weights.Key(label, l.Tag)] {
			missing = append(missing, textfmt.Printable(l.Tag))
		}
	}
	if len(missing) > 0 {
		more := ""
		if len(missing) > 3 {
			more = fmt.Sprintf(" and %d more", len(missing)-3)
			missing = missing[:3]
		}
		return nil, fmt.Sprintf("lacks %s%s that the queue pass listed (it must list everything that exists)", strings.Join(missing, ", "), more)
	}
	return keys, ""
}

// Pass is one listing pass of a suite.
type Pass struct {
	// Census asks what exists at this level (capability probes answered
	// "supported"); otherwise what this host will run (the queue).
	Census bool
	// Tag, when set, lists with the filter an item of this tag is dispatched with:
	// the re-entry of sgpu-queue verify, which shows the call lines that item runs.
	Tag string
}

func (p Pass) name() string {
	if p.Census {
		return "census"
	}
	return "queue"
}

// switches are the listing's variables as messages name them.
func (p Pass) switches(h hook.Names) string {
	s := h.ListItems + "=1"
	if p.Tag != "" {
		s += " " + h.Filter + "=" + hook.FilterPattern(p.Tag)
	}
	return s
}

// List runs one listing pass of s and returns its stdout and the last lines of its
// output. stderr, and stdout lines that are not items, go to r.Log: only the
// listing's stderr copier writes there while it runs, and the caller after, so
// passes that run at once need a Log of their own (or none).
func List(ctx context.Context, r Request, s config.Suite, p Pass) ([]byte, string, error) {
	pass := p.name()
	log := orDiscard(r.Log)
	// One line, shell-quoted as the config quotes it, as adapter listings' headers are.
	fmt.Fprintf(log, "### %s %s: %s\n", s.Label, pass, config.QuoteWords(append([]string{s.Path}, s.Args...)))
	base := s.Environ(r.Env)
	if r.Pin != nil {
		base = base.With(r.Pin(s)...)
	}
	env := r.Hooks.ListEnv(base, r.Level, s.GPUKind(), p.Census)
	if p.Tag != "" {
		env = r.Hooks.VerifyEnv(base, r.Level, s.GPUKind(), p.Tag, p.Census)
	}
	tail := &textfmt.Tail{}
	out := &textfmt.Capped{Max: maxListing}
	lctx, cancel := deadline(ctx, r.Timeout, errDeadline)
	defer cancel()
	res, err := r.Exec.Run(lctx, executor.Command{
		Name:   fmt.Sprintf("suite %q %s listing", s.Label, pass),
		Path:   s.Path,
		Args:   s.Args,
		Env:    env,
		Dir:    r.Dir,
		Stdout: io.MultiWriter(out, tail),
		Stderr: io.MultiWriter(log, tail),
	})
	if err != nil {
		return nil, "", &Error{Suite: s, Msg: fmt.Sprintf("cannot run its %s listing: %v", pass, err), Err: err}
	}
	for _, line := range strings.SplitAfter(string(out.Bytes()), "\n") {
		if line != "" && !strings.HasPrefix(line, r.Hooks.ItemMarker+" ") {
			io.WriteString(log, line)
		}
	}
	if res.Cancelled && pastDeadline(ctx, lctx, errDeadline) {
		return nil, tail.String(), &Error{Suite: s, TimedOut: true, Tail: tail.String(),
			Msg: fmt.Sprintf("its %s listing (%s=1) did not end within %s (list-timeout) and was stopped", pass, r.Hooks.ListItems, r.Timeout)}
	}
	if res.Cancelled || ctx.Err() != nil {
		return nil, "", &Error{Suite: s, Msg: pass + " listing cancelled", Err: context.Cause(ctx)}
	}
	if res.ExitCode != 0 {
		return nil, tail.String(), &Error{Suite: s, Msg: fmt.Sprintf("its %s listing (%s) exited with %d; it must list its items and exit 0", pass, p.switches(r.Hooks), res.ExitCode), Tail: tail.String()}
	}
	if out.Over() {
		return nil, "", &Error{Suite: s, Msg: fmt.Sprintf("its %s listing printed more than %d MiB", pass, maxListing>>20)}
	}
	return out.Bytes(), tail.String(), nil
}

// Listed is one item line of a listing.
type Listed struct {
	Tag string
	// GPUs is the count the line gave (gpus=N, or TE's bare N), 0 when it gave
	// none (the item takes its suite's); All is gpus=all.
	GPUs int
	All  bool
	// Bad is a last word that gives a width which is no GPU count ("0", "-1",
	// "gpus=02"), with why: the suite's listing is refused (Listed.Err).
	Bad string
}

// Err is the error of an item whose line gives a width that is no GPU count (nil
// when it is fine): it names the item, its suite and the word.
func (l Listed) Err(s config.Suite, marker string) error {
	if l.Bad == "" {
		return nil
	}
	return &Error{Suite: s, Msg: fmt.Sprintf("item %s: its listing line (%s %s …) gives the width %s; print a GPU count from 1 to %d after the tag, or none",
		textfmt.Printable(l.Tag), marker, textfmt.Printable(l.Tag), l.Bad, config.MaxGPUs)}
}

// Tags are the tags of ls, in order.
func Tags(ls []Listed) []string {
	tags := make([]string, len(ls))
	for i, l := range ls {
		tags[i] = l.Tag
	}
	return tags
}

// item is the work item of l in suite s: the line's GPU count, else the suite's.
func (l Listed) item(s config.Suite, seq int) schedule.Item {
	n, all := s.Width()
	it := schedule.Item{Label: s.Label, Tag: l.Tag, Seq: seq, GPUs: n, AllGPUs: all}
	if l.GPUs > 0 || l.All {
		it.GPUs, it.AllGPUs = l.GPUs, l.All
	}
	return it
}

// ParseListing returns the items of "<marker> <tag>" and "<marker> <tag> gpus=N"
// lines in order (ItemLine), the first of any duplicate tag kept. The tag is
// otherwise kept byte for byte (hostile tags are the log layout's problem, not a
// reason to run a different item).
func ParseListing(out []byte, marker string) (items []Listed, warnings []string) {
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		l, item := ItemLine(sc.Text(), marker)
		switch {
		case !item:
		case l.Tag == "":
			warnings = append(warnings, fmt.Sprintf("line %d: %q without a tag, ignored", n, marker))
		case seen[l.Tag]:
			warnings = append(warnings, fmt.Sprintf("line %d: duplicate tag %q, queued once (its dispatch runs every call line of that tag)", n, l.Tag))
		default:
			seen[l.Tag] = true
			items = append(items, l)
		}
	}
	if err := sc.Err(); err != nil {
		warnings = append(warnings, fmt.Sprintf("line %d: %v; the rest of the listing is ignored", n+1, err))
	}
	return items, warnings
}

// gpusWord starts the word of a listing line that gives the item's GPU count.
const gpusWord = "gpus="

// ItemLine reads one listing line (the hook contract, docs/hooks.md "Listing"): item
// is false for a line that is not "<marker> <tag>" (another word that starts with the
// marker included). The tag is the rest of the line with surrounding white space
// removed, and may hold spaces, except that a last word after the tag that gives a
// width is the item's GPU count, not part of the tag: "gpus=<count>" (a whole number
// from 1 to config.MaxGPUs, or "all"), or a bare whole number, TE's "TE_CI_ITEM <tag>
// <N>". So a tag that itself ends in such a word is listed with a count after it
// ("<marker> my tag 3 gpus=1" is tag "my tag 3" on one GPU). A last word "gpus=…" or
// a signed or zero-led number that is no GPU count sets Listed.Bad. Tag is "" for a
// marker without one (a count alone included).
func ItemLine(line, marker string) (l Listed, item bool) {
	rest, ok := strings.CutPrefix(line, marker)
	if !ok || rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return Listed{}, false
	}
	rest = strings.TrimSpace(rest)
	cut := strings.LastIndexAny(rest, " \t\r\n\v\f")
	word := rest[cut+1:]
	count, isGPUs := strings.CutPrefix(word, gpusWord)
	if !isGPUs && (cut < 0 || !numberWord(word)) {
		return Listed{Tag: rest}, true
	}
	l.Tag = strings.TrimSpace(rest[:max(cut, 0)])
	if !isGPUs {
		count = word
	}
	n, all, err := config.ParseGPUs(count)
	if err != nil {
		l.Bad = fmt.Sprintf("%q (%v)", word, err)
		return l, true
	}
	l.GPUs, l.All = n, all
	return l, true
}

// numberWord reports whether w is written as a whole number, signed or not ("4",
// "0", "-1", "+2", "007"): a last word TE's scripts print as a width.
func numberWord(w string) bool {
	w = strings.TrimLeft(w, "+-")
	if w == "" {
		return false
	}
	for _, r := range w {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// ItemTag reads one listing line as ItemLine does and returns its tag alone.
func ItemTag(line, marker string) (tag string, item bool) {
	l, item := ItemLine(line, marker)
	return l.Tag, item
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
