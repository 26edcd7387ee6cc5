package record

import "github.com/rocm/sgpu-queue/internal/outcome"

// Run is everything a run wrote that verdicts and reports are computed from.
type Run struct {
	// Dir is the log dir the run was read from (logdir.Load) or is written to;
	// "" for a run built in memory.
	Dir     string
	Meta    Meta
	Queue   []QueueRow
	Timings []Timing
	// ShardOf is, in a merged run (Meta.Merge), the shard of each queued item
	// (queue/shards.tsv); nil otherwise.
	ShardOf map[ItemRef]int
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

// TagOf is the tag of a timings row (the inverse of ItemColumn for its suite's mode).
func (r *Run) TagOf(t Timing) string {
	if t.Item == Whole && r.Opaque(t.Label) {
		return ""
	}
	return t.Item
}
