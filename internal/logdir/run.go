package logdir

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/record"
)

// FormatAttempts is the run.json format with queue/attempts.tsv (docs/files.md); older ones go through readLegacy.
const FormatAttempts = 3

// AttemptsTSV is queue/attempts.tsv, every ended attempt with its outcome.
func (l Layout) AttemptsTSV() string { return l.path("queue", "attempts.tsv") }

// WriteMeta replaces run.json atomically.
func (l Layout) WriteMeta(m *record.Meta) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return l.WriteFile(l.Meta(), append(data, '\n'))
}

// Load reads a run back from its log dir, skipping unreadable rows with a warning. Its errors are a *LoadError
// or an *InProgressError, naming the path and the fix.
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
		// A run killed while listing has none, and its log dir is still its record.
		warns = append(warns, "no queue/queue.tsv: the run stopped before it queued any item")
	} else if err != nil {
		return nil, nil, err
	}
	if r.Queue, err = ParseQueue(bytes.NewReader(q)); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", l.QueueTSV(), err)
	}
	rows, rowWarns, err := l.readAttempts(&r.Meta)
	if err != nil {
		return nil, nil, err
	}
	r.Attempts = rows
	warns = append(warns, rowWarns...)
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

// LoadError is a path Load reads no run from; report and merge exit 2 with it (docs/exit-codes.md).
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

// readMeta reads run.json, checking the lock first: a starting run takes it before writing run.json.
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

// readAttempts reads queue/attempts.tsv, or an old log dir's files; a missing file is no attempts.
func (l Layout) readAttempts(m *record.Meta) ([]record.Attempt, []string, error) {
	if m.Format < FormatAttempts {
		return l.readLegacy(m)
	}
	data, err := readLogFile(l.AttemptsTSV())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	rows, warns := ParseAttempts(bytes.NewReader(data))
	return rows, warns, nil
}
