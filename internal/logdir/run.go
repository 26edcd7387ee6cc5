package logdir

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/rocm/sgpu-queue/internal/atomicfile"
)

// Meta is queue/run.json: what a run's TSV files do not say (the GPUs, the suites and
// their modes, the weight changes), so a report can be rebuilt from the log dir alone.
type Meta struct {
	Tool          string      `json:"tool"`
	Suites        []MetaSuite `json:"suites"`
	GPUs          []string    `json:"gpus"`
	PinVar        string      `json:"pin_var"`
	Arch          string      `json:"arch"`
	Level         string      `json:"level"`
	DefaultWeight float64     `json:"default_weight"`
	Policy        string      `json:"policy,omitempty"`
	Weights       string      `json:"weights"`
	Started       time.Time   `json:"started"` // start of phase 4: the zero of the offsets
	Wall          float64     `json:"wall_seconds"`
	Finished      bool        `json:"finished"` // phase 4 ran to its end (possibly cancelled)
	Cancelled     bool        `json:"cancelled,omitempty"`
	Changes       []Change    `json:"weight_changes,omitempty"`
	// The bad-day policies in force, and what they did.
	Retries        int           `json:"retries,omitempty"`
	FlakyIsFailure bool          `json:"flaky_is_failure,omitempty"`
	TimeoutFactor  float64       `json:"item_timeout_factor,omitempty"`
	Quarantined    []Quarantined `json:"quarantined,omitempty"`
	Stalled        string        `json:"stalled,omitempty"`
	Pruned         []string      `json:"pruned,omitempty"`
}

// Quarantined is a GPU taken out of the pool during the run.
type Quarantined struct {
	GPU    string    `json:"gpu"`
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
}

// MetaSuite is one suite of the run.
type MetaSuite struct {
	Label   string `json:"label"`
	LogFile string `json:"logfile"`
	Mode    string `json:"mode"`
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
}

// Load reads a run back from its log dir. Rows that cannot be read are skipped with a
// warning; a missing run.json or queue.tsv is an error (not a run's log dir).
func Load(root string) (*Run, []string, error) {
	l := Layout{Root: root}
	r := &Run{Layout: l}
	data, err := os.ReadFile(l.Meta())
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("%s: no run here (missing %s): give the --log-dir of a run", root, l.Meta())
		}
		return nil, nil, err
	}
	if err := json.Unmarshal(data, &r.Meta); err != nil {
		return nil, nil, fmt.Errorf("%s: %v", l.Meta(), err)
	}
	q, err := os.ReadFile(l.QueueTSV())
	if err != nil {
		return nil, nil, err
	}
	if r.Queue, err = ParseQueue(bytes.NewReader(q)); err != nil {
		return nil, nil, err
	}
	var warns []string
	t, err := os.ReadFile(l.TimingsTSV())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	r.Timings, warns = ParseTimings(bytes.NewReader(t))
	return r, warns, nil
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
