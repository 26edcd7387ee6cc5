package rerun

import (
	"cmp"
	"slices"

	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

// Ran is what one run did, for the state it leaves (Next).
type Ran struct {
	// Owns reports whether the run speaks for an item (suite selected, in its
	// shard); other items keep the state their owners left.
	Owns func(record.ItemID) bool
	// Listed reports whether the run listed an owned item; an unlisted one leaves
	// the state.
	Listed func(record.ItemID) bool
	// Items are the verdicts of the items it queued, in their order.
	Items []verdict.Item
}

// Next is the state a run leaves, given prior (this key's state, or nil): a run
// rewrites only what it owns (docs/reruns.md#what-a-run-rewrites).
func Next(prior *State, priorFailed []record.ItemID, ran Ran) (failed []record.ItemID, st *State) {
	st = &State{Version: StateVersion, Tests: map[string]string{}}
	seen := map[record.ItemID]bool{}
	queued := map[record.ItemID]bool{}
	for _, it := range ran.Items {
		queued[it.ItemID] = true
		st.Items = append(st.Items, it.Latest())
		if it.Failed && !seen[it.ItemID] {
			seen[it.ItemID] = true
			failed = append(failed, it.ItemID)
		}
	}
	for _, k := range priorFailed {
		if ran.Owns(k) || seen[k] {
			continue
		}
		seen[k] = true
		failed = append(failed, k)
		name := TestsName(k)
		if prior != nil && prior.Tests[name] != "" {
			st.Tests[name] = prior.Tests[name]
		}
	}
	if prior != nil {
		for _, c := range prior.Items {
			k := c.ItemID
			if !queued[k] && (!ran.Owns(k) || ran.Listed(k)) {
				queued[k] = true
				st.Items = append(st.Items, c)
			}
		}
	}
	slices.SortFunc(st.Items, func(a, b record.Carried) int {
		return cmp.Or(cmp.Compare(a.Label, b.Label), cmp.Compare(a.Tag, b.Tag))
	})
	return failed, st
}

// TestsName is the name of item k's tests file in the tests folder.
func TestsName(k record.ItemID) string { return logdir.ItemBase(k.Label, k.Tag) + ".txt" }
