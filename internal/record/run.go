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
	ShardOf map[ItemID]int
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

// IDOf is the item of a timings row (ItemOf its columns).
func (r *Run) IDOf(t Timing) ItemID { return r.ItemOf(t.Label, t.Item) }

// ItemOf is the item of a label and an item column of the run's files (the inverse
// of ItemID.Column for its suite's mode).
func (r *Run) ItemOf(label, column string) ItemID {
	if column == Whole && r.Opaque(label) {
		return ItemID{Label: label}
	}
	return ItemID{Label: label, Tag: column}
}
