package logdir

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/rocm/sgpu-queue/internal/atomicfile"
	"github.com/rocm/sgpu-queue/internal/outcome"
)

// FormatOutcomes is the run.json "format" of a run that records each attempt's
// outcome in queue/outcomes.tsv and a typed stop reason (docs/outcomes.md). Older
// log dirs have no format (0): their rows get outcome.Legacy.
const FormatOutcomes = 2

// OutcomesTSV is queue/outcomes.tsv, the outcome of each attempt of timings.tsv.
func (l Layout) OutcomesTSV() string { return filepath.Join(l.QueueDir(), "outcomes.tsv") }

// Meta is queue/run.json: what a run's TSV files do not say (the GPUs, the suites and
// their modes, the weight changes), so a report can be rebuilt from the log dir alone.
type Meta struct {
	Tool string `json:"tool"`
	// Format is FormatOutcomes for runs that record outcomes, 0 before.
	Format        int         `json:"format,omitempty"`
	Suites        []MetaSuite `json:"suites"`
	GPUs          []string    `json:"gpus"`
	PinVar        string      `json:"pin_var"`
	Arch          string      `json:"arch"`
	Level         string      `json:"level"`
	DefaultWeight float64     `json:"default_weight"`
	Policy        string      `json:"policy,omitempty"`
	Weights       string      `json:"weights"`
	// Pooled are the keys of the items whose width was the pool (an undeclared mGPU
	// item, gpus=all), whose weights are kept per pool size: merge learns them so.
	Pooled    []string  `json:"pooled,omitempty"`
	Started   time.Time `json:"started"` // start of phase 4: the zero of the offsets
	Wall      float64   `json:"wall_seconds"`
	Finished  bool      `json:"finished"` // phases 5–8 ran: phase 4 ended (possibly cancelled), or the run stopped before it
	Cancelled bool      `json:"cancelled,omitempty"`
	Changes   []Change  `json:"weight_changes,omitempty"`
	// The bad-day policies in force, and what they did.
	Retries        int           `json:"retries,omitempty"`
	FlakyIsFailure bool          `json:"flaky_is_failure,omitempty"`
	TimeoutFactor  float64       `json:"item_timeout_factor,omitempty"`
	Quarantined    []Quarantined `json:"quarantined,omitempty"`
	// Unfit are the items quarantine left unrun: they need more GPUs than it left.
	Unfit []Unfit `json:"unfit,omitempty"`
	// Stop is why the run stopped before its queue was empty; nil when it did not.
	Stop   *Stop    `json:"stop,omitempty"`
	Pruned []string `json:"pruned,omitempty"`
	// Stalled is the stop message of log dirs written before Stop (read only).
	Stalled string `json:"stalled,omitempty"`
	// Shard is set when the run was one shard of a job matrix (run --shard I/K);
	// Merge when the log dir is the merge of such shards (sgpu-queue merge).
	Shard *ShardRun `json:"shard,omitempty"`
	Merge *Merge    `json:"merge,omitempty"`
	// JUnit are the merged JUnit files of a run that is not a shard (a shard's are
	// Shard.JUnit), relative to the log dir: the report shows each failed item's
	// test cases from them.
	JUnit []string `json:"junit,omitempty"`
	// Roots are the repo root and its path where the suites ran (a target
	// container's): the report shows paths under them relative, so that it names
	// no runner's path, and a rebuild of it reads the same.
	Roots []string `json:"roots,omitempty"`
	// ForeignCwd names the cwd/ entries that were there when the run claimed the
	// log dir, the earlier run's own deleted (a --log-dir-reuse run's, a user's):
	// an item that ran in one of them wrote beside files that are not the tool's,
	// so no later run deletes it (Owned). Claim sets it.
	ForeignCwd []string `json:"foreign_cwd,omitempty"`
	// Rerun is set when the run was a re-run narrowed to what failed the last
	// attempt (docs/reruns.md); nil for a full run.
	Rerun *Rerun `json:"rerun,omitempty"`
}

// Rerun is a re-run's narrowing: how many items the failed lists named, how many
// of them the run queued (the rest are gone or not run here), and how many of
// those ran only their failed tests.
type Rerun struct {
	Failed   int      `json:"failed"`
	Queued   int      `json:"queued"`
	Narrowed int      `json:"narrowed"`
	Lists    []string `json:"lists"` // the failed lists read, relative to the repo root
}

// JUnitFiles are the merged JUnit files the run wrote, relative to its log dir.
func (m Meta) JUnitFiles() []string {
	if m.Shard != nil {
		return m.Shard.JUnit
	}
	return m.JUnit
}

// Stop is a typed stop reason with the message the user saw.
type Stop struct {
	Reason  outcome.Stop `json:"reason"`
	Message string       `json:"message"`
	// Phase is the phase the run stopped in: 1 (listing) or 3 (setup) when it
	// stopped before any item ran, else 4.
	Phase int `json:"phase"`
	// Suite is the label of the suite whose listing or setup failed
	// (outcome.Stop.SuiteFailed); "" for any other stop.
	Suite string `json:"suite,omitempty"`
}

// BeforeItems reports whether the run stopped before its items were dispatched
// (a cancel during listing or setup).
func (m *Meta) BeforeItems() bool { return m.Stop != nil && m.Stop.Phase > 0 && m.Stop.Phase < 4 }

// ItemsUnknown reports whether the run stopped before its suites were listed, so
// its queue is empty for want of a listing, not because the suites had no items.
func (m *Meta) ItemsUnknown() bool { return m.Stop != nil && m.Stop.Phase == 1 }

// Quarantined is a GPU taken out of the pool during the run.
type Quarantined struct {
	GPU    string    `json:"gpu"`
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
}

// Unfit is an item not run (again) because it needs more GPUs than quarantine left
// in the pool.
type Unfit struct {
	Label string `json:"label"`
	Tag   string `json:"tag"` // "" for an opaque item
	GPUs  int    `json:"gpus"`
	Pool  int    `json:"pool"` // the GPUs left in the pool
}

// MetaSuite is one suite of the run.
type MetaSuite struct {
	Label   string `json:"label"`
	LogFile string `json:"logfile"`
	Mode    string `json:"mode"`
	// Skip: the suite did not run this time and passes (--suites left it out, a
	// re-run had none of its items to run again); "" when it ran.
	Skip outcome.Skip `json:"skip,omitempty"`
}

// Change is one weight that moved in phase 6.
type Change struct {
	Key    string  `json:"key"`
	Old    float64 `json:"old"`
	HadOld bool    `json:"had_old"`
	New    float64 `json:"new"`
}

// WriteMeta replaces run.json atomically.
func (l Layout) WriteMeta(m *Meta) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(l.Meta(), append(data, '\n'), 0o644)
}

// Run is everything a run wrote that verdicts and reports are computed from.
type Run struct {
	Layout  Layout
	Meta    Meta
	Queue   []QueueRow
	Timings []Timing
	// ShardOf is, in a merged run (Meta.Merge), the shard of each queued item
	// (queue/shards.tsv); nil otherwise.
	ShardOf map[ItemRef]int
}

// Load reads a run back from its log dir. Rows that cannot be read are skipped with a
// warning. A path that is no run's log dir is a *LoadError, a log dir whose run
// still holds its lock an *InProgressError: both name the path and the fix.
func Load(root string) (*Run, []string, error) {
	l := Layout{Root: root}
	r := &Run{Layout: l}
	if err := l.readMeta(&r.Meta); err != nil {
		return nil, nil, err
	}
	var warns []string
	if st := r.Meta.Stop; st != nil {
		if _, err := outcome.ParseStop(string(st.Reason)); err != nil {
			warns = append(warns, fmt.Sprintf("%s: %v; read as an early stop of unknown reason", l.Meta(), err))
			st.Reason = ""
		}
	} else if r.Meta.Stalled != "" {
		// A log dir from before typed stop reasons: the message is all it says.
		r.Meta.Stop = &Stop{Message: r.Meta.Stalled, Phase: 4}
	}
	q, err := os.ReadFile(l.QueueTSV())
	if errors.Is(err, fs.ErrNotExist) {
		// Written in phase 2: a run killed while listing has none, and its
		// log dir is still its record (a merge counts its items as never ran).
		warns = append(warns, "no queue/queue.tsv: the run stopped before it queued any item")
	} else if err != nil {
		return nil, nil, err
	}
	if r.Queue, err = ParseQueue(bytes.NewReader(q)); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", l.QueueTSV(), err)
	}
	tw, err := l.ReadAttempts(r.Meta.Format >= FormatOutcomes, r.Meta.Cancelled)
	if err != nil {
		return nil, nil, err
	}
	r.Timings = tw.Rows
	warns = append(warns, tw.Warnings...)
	if r.Meta.Merge != nil {
		data, err := os.ReadFile(l.ShardsTSV())
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, nil, err
		}
		var sw []string
		r.ShardOf, sw = ParseShards(data)
		warns = append(warns, sw...)
	}
	return r, warns, nil
}

// LoadProblem is why Load found no run at a path.
type LoadProblem int

const (
	NotThere  LoadProblem = iota + 1 // the path does not exist
	NotADir                          // the path is a file, not a directory
	NoRun                            // a directory without queue/run.json
	BadRecord                        // queue/run.json is not a run's record
)

// LoadError is a path Load reads no run from; its one-line message names the path
// and the fix (report and merge exit 2 with it, docs/exit-codes.md).
type LoadError struct {
	Path    string
	Problem LoadProblem
	Err     error // the cause, when there is one
}

func (e *LoadError) Unwrap() error { return e.Err }

func (e *LoadError) Error() string {
	switch e.Problem {
	case NotThere:
		return fmt.Sprintf("%s does not exist: give the log dir of a run (the directory its --log-dir named)", e.Path)
	case NotADir:
		return fmt.Sprintf("%s is a file, not a log dir: give the directory a run wrote (its --log-dir, which holds queue/run.json)", e.Path)
	case BadRecord:
		return fmt.Sprintf("%s: queue/run.json is not a run's record (%v): give the log dir as the run left it", e.Path, e.Err)
	}
	return fmt.Sprintf("%s: no run here (no queue/run.json): give the log dir of a run (the directory its --log-dir named)", e.Path)
}

// readMeta reads run.json into m, telling a path that is not a log dir from one
// whose run is still in progress (looked at first: a starting run takes the lock
// before it writes run.json) and from one whose record cannot be read.
func (l Layout) readMeta(m *Meta) error {
	info, err := os.Stat(l.Root)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR): // under a file
		return &LoadError{Path: l.Root, Problem: NotThere, Err: err}
	case err != nil:
		return fmt.Errorf("%s: %w", l.Root, err)
	case !info.IsDir():
		return &LoadError{Path: l.Root, Problem: NotADir}
	}
	holder, busy, err := l.inProgress()
	if err != nil {
		return err
	}
	if busy {
		return &InProgressError{Dir: l.Root, Holder: holder}
	}
	data, err := os.ReadFile(l.Meta())
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return &LoadError{Path: l.Root, Problem: NoRun, Err: err}
	case err != nil:
		return fmt.Errorf("%s: %w", l.Meta(), err)
	}
	if err := json.Unmarshal(data, m); err != nil {
		return &LoadError{Path: l.Root, Problem: BadRecord, Err: err}
	}
	return nil
}

// Attempts is what ReadAttempts read.
type Attempts struct {
	Rows     []Timing
	Warnings []string
}

// ReadAttempts reads timings.tsv and, when outcomes says the run recorded them,
// puts each attempt's outcome from outcomes.tsv on its row. A row without one keeps
// "" (Run.OutcomeOf derives it by outcome.Legacy, which is also what the warning
// names, given runCancelled) and is named in a warning: its outcome row was torn or
// lost. A missing file is no rows.
func (l Layout) ReadAttempts(outcomes, runCancelled bool) (Attempts, error) {
	var a Attempts
	data, err := os.ReadFile(l.TimingsTSV())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return a, err
	}
	a.Rows, a.Warnings = ParseTimings(bytes.NewReader(data))
	if !outcomes {
		return a, nil
	}
	data, err = os.ReadFile(l.OutcomesTSV())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return a, err
	}
	recorded, warns := ParseOutcomes(bytes.NewReader(data))
	a.Warnings = append(a.Warnings, warns...)
	for i := range a.Rows {
		t := &a.Rows[i]
		if o, ok := recorded[t.Key()]; ok {
			t.Outcome = o
			continue
		}
		a.Warnings = append(a.Warnings, fmt.Sprintf("outcomes.tsv: no outcome for %s/%s on %s at t+%ss (its row was torn or lost); taken from "+
			"its rc: %s",
			t.Label, t.Item, GPUName(t.GPU), Secs(t.StartOff), outcome.Legacy(t.RC, t.Incomplete, runCancelled)))
	}
	return a, nil
}

// OutcomeOf is the outcome of a timings row: the one recorded, else the legacy
// rule on its rc and incomplete columns (outcome.Legacy, docs/outcomes.md).
func (r *Run) OutcomeOf(t Timing) outcome.Outcome {
	if t.Outcome.Valid() {
		return t.Outcome
	}
	return outcome.Legacy(t.RC, t.Incomplete, r.Meta.Cancelled)
}

// Opaque reports whether label is an opaque suite of the run.
func (r *Run) Opaque(label string) bool {
	for _, s := range r.Meta.Suites {
		if s.Label == label {
			return s.Mode == "opaque"
		}
	}
	return false
}

// ItemColumn is the timings "item" column of an item: its tag, or Whole.
func ItemColumn(tag string) string {
	if tag == "" {
		return Whole
	}
	return tag
}

// TagOf is the tag of a timings row (the inverse of ItemColumn for its suite's mode).
func (r *Run) TagOf(t Timing) string {
	if t.Item == Whole && r.Opaque(t.Label) {
		return ""
	}
	return t.Item
}
