package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/textfmt"
	"github.com/rocm/sgpu-queue/internal/verdict"
	"github.com/rocm/sgpu-queue/internal/weights"
)

// learning is phase 6 as a driver gives it: the table it loaded (from r.weights)
// and how to learn into it, or why nothing is learned.
type learning struct {
	title  string // after phase 6's: how it learns
	none   string // why the table is left as it is; "" learns
	loaded *weights.Table
	// apply learns into the table as stored (weights.Rewrite).
	apply func(stored *weights.Table) learned
}

// learning is a run's phase 6. A shard learns nothing, or merge would learn its
// rows twice.
func (r *run) learning(o *ordered, e *expansion) learning {
	var l learning
	switch {
	case r.shard != nil:
		l.none = fmt.Sprintf("shard %d/%d: the weight table is left as it is: sgpu-queue merge learns once from every shard's rows",
			r.shard.Shard, r.shard.Shards)
	case r.rerun != nil:
		// A narrowed item's time is not the item's, and a re-run's items ran on a
		// box mostly idle: the attempt being re-run already taught the table.
		l.none = "a re-run: the weight table is left as it is (a re-run's times are not a full queue's)"
	default:
		l.loaded = o.stored
		l.apply = func(stored *weights.Table) learned { return learnOver(stored, o, r.res.Suites, e.census) }
	}
	return l
}

// learnOver is a run's learning applied to the table as stored when it saves, under
// its lock: what another run saved since this one loaded stays, but for the keys
// this run measured or pruned.
func learnOver(stored *weights.Table, o *ordered, suites []verdict.Suite, census weights.Census) learned {
	stored.Fill(o.seeds)
	p := o.pool.Over(stored)
	changes, pruned := LearnRun(p.View, suites, census)
	table, aside := p.Join(census)
	return learned{table: table, changes: changes, pruned: append(pruned, aside...)}
}

type learned struct {
	table   *weights.Table
	changes []record.Change
	pruned  []string
}

// learn is phase 6: blend, prune, save, as a read-modify-write under the table's
// lock (docs/weights.md "Runs at once"). The loaded table is learned when the table
// cannot be read again, so run.json still says it; wait ends the wait and nothing
// is written.
func (r *run) learn(wait context.Context, in learning) ([]record.Change, []string) {
	r.obs.Phase(6, "learn the weights"+in.title)
	if in.none != "" {
		r.printf("  %s\n", in.none)
		return nil, nil
	}
	var l *learned
	var err error
	if r.unread == nil {
		var warns []string
		warns, err = weights.Rewrite(wait, r.weights, in.loaded, func(stored *weights.Table) *weights.Table {
			got := in.apply(stored)
			l = &got
			return got.table
		})
		for _, w := range warns {
			if !r.tableWarns[w] {
				r.warn(w)
			}
		}
	}
	if l == nil {
		got := in.apply(in.loaded)
		l = &got
	}
	for _, k := range l.pruned {
		r.printf("  pruned %s (no longer listed by its suite's census)\n", textfmt.Printable(k))
	}
	switch {
	case r.unread != nil:
		r.lost("the weight table", r.unread.Path, fmt.Errorf("not replaced, its keys kept: %w", r.unread))
	case errors.Is(err, context.Canceled):
		// Not the lock error's words: nobody held it past the wait.
		r.lost("the weight table", r.weights.String(), errors.New("a signal stopped the wait for another sgpu-queue run's lock on it; "+
			"what this run measured stays in its log dir"))
	case err != nil:
		r.lost("the weight table", r.weights.String(), err)
	default:
		r.printf("  %d weight(s) changed, %d pruned, %d keys → %s\n", len(l.changes), len(l.pruned), l.table.Len(), r.weights)
	}
	return l.changes, l.pruned
}

// LearnRun is phase 6's learning on a run's verdicts, without saving
// (docs/outcomes.md); it returns the weights that changed and the keys pruned.
func LearnRun(table *weights.Table, suites []verdict.Suite, census weights.Census) ([]record.Change, []string) {
	return learnItems(table, suites, census, nil)
}

// learnItems is LearnRun but for the attempts skip says were learned already: they
// teach nothing, and their items still count as dispatched for pruning.
func learnItems(table *weights.Table, suites []verdict.Suite, census weights.Census,
	skip func(record.Attempt) bool) ([]record.Change, []string) {
	var ms []weights.Measurement
	dispatched := map[string]bool{}
	for _, it := range verdict.Select(suites, func(it verdict.Item) bool { return len(it.Attempts) > 0 }) {
		dispatched[it.Key()] = true
		for _, a := range learnable(it) {
			if skip != nil && skip(a) {
				continue
			}
			if m, ok := weights.Measure(it.Key(), a.Secs, a.Outcome); ok {
				ms = append(ms, m)
			}
		}
	}
	var changes []record.Change
	for _, c := range weights.Learn(table, ms) {
		if c.Kept {
			continue
		}
		changes = append(changes, record.Change{Key: c.Key, Old: c.Old, HadOld: c.HadOld, New: c.New})
	}
	return changes, weights.Prune(table, dispatched, census)
}

// learnable are the attempts an item teaches by: its passing ones, else its last,
// so a flaky failure never teaches a duration.
func learnable(it verdict.Item) []record.Attempt {
	if len(it.Attempts) < 2 {
		return it.Attempts
	}
	var ok []record.Attempt
	for _, a := range it.Attempts {
		if a.Outcome.Passed() {
			ok = append(ok, a)
		}
	}
	if len(ok) == 0 {
		return it.Attempts[len(it.Attempts)-1:]
	}
	return ok
}
