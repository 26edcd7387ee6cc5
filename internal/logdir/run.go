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

	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/record"
)

// FormatOutcomes is the run.json "format" of a run that records each attempt's
// outcome in queue/outcomes.tsv and a typed stop reason (docs/outcomes.md). Older
// log dirs have no format (0): their rows get outcome.Legacy.
const FormatOutcomes = 2

// OutcomesTSV is queue/outcomes.tsv, the outcome of each attempt of timings.tsv.
func (l Layout) OutcomesTSV() string { return filepath.Join(l.QueueDir(), "outcomes.tsv") }

// WriteMeta replaces run.json atomically.
func (l Layout) WriteMeta(m *record.Meta) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return l.WriteFile(l.Meta(), append(data, '\n'))
}

// Load reads a run back from its log dir. Rows that cannot be read are skipped with a
// warning. A path that is no run's log dir is a *LoadError, a log dir whose run
// still holds its lock an *InProgressError: both name the path and the fix.
func Load(root string) (*record.Run, []string, error) {
	l := Layout{Root: root}
	r := &record.Run{Dir: root}
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
		r.Meta.Stop = &record.Stop{Message: r.Meta.Stalled, Phase: 4}
	}
	q, err := readLogFile(l.QueueTSV())
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
		data, err := readLogFile(l.ShardsTSV())
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, nil, err
		}
		var sw []string
		r.ShardOf, sw = ParseShards(data, r)
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
func (l Layout) readMeta(m *record.Meta) error {
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
	data, err := readLogFile(l.Meta())
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return &LoadError{Path: l.Root, Problem: NoRun, Err: err}
	case err != nil:
		return err
	}
	if err := json.Unmarshal(data, m); err != nil {
		return &LoadError{Path: l.Root, Problem: BadRecord, Err: err}
	}
	return nil
}

// Attempts is what ReadAttempts read.
type Attempts struct {
	Rows     []record.Timing
	Warnings []string
}

// ReadAttempts reads timings.tsv and, when outcomes says the run recorded them,
// puts each attempt's outcome from outcomes.tsv on its row. A row without one keeps
// "" (record.Run.OutcomeOf derives it by outcome.Legacy, which is also what the warning
// names, given runCancelled) and is named in a warning: its outcome row was torn or
// lost. A missing file is no rows.
func (l Layout) ReadAttempts(outcomes, runCancelled bool) (Attempts, error) {
	var a Attempts
	data, err := readLogFile(l.TimingsTSV())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return a, err
	}
	a.Rows, a.Warnings = ParseTimings(bytes.NewReader(data))
	if !outcomes {
		return a, nil
	}
	data, err = readLogFile(l.OutcomesTSV())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return a, err
	}
	recorded, warns := ParseOutcomes(bytes.NewReader(data))
	a.Warnings = append(a.Warnings, warns...)
	for i := range a.Rows {
		t := &a.Rows[i]
		if o, ok := recorded[KeyOf(*t)]; ok {
			t.Outcome = o
			continue
		}
		a.Warnings = append(a.Warnings, fmt.Sprintf("outcomes.tsv: no outcome for %s/%s on %s at t+%ss (its row was torn or lost); taken from "+
			"its rc: %s",
			t.Label, t.Item, record.GPUName(t.GPU), Secs(t.StartOff), outcome.Legacy(t.RC, t.Incomplete, runCancelled)))
	}
	return a, nil
}
