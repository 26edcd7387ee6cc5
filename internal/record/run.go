package record

// Run is everything a run wrote that verdicts and reports are computed from.
type Run struct {
	// Dir is the run's log dir; "" for a run built in memory.
	Dir   string
	Meta  Meta
	Queue []QueueRow
	// Attempts are its ended attempts in the order they ended.
	Attempts []Attempt
	// ShardOf is, in a merged run, each queued item's shard (queue/shards.tsv); nil otherwise.
	ShardOf map[ItemID]int
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

// ItemOf is the item of a label and an item column of TE's files (the inverse of ItemID.Column).
func (r *Run) ItemOf(label, column string) ItemID {
	if column == Whole && r.Opaque(label) {
		return ItemID{Label: label}
	}
	return ItemID{Label: label, Tag: column}
}
