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

// learn is phase 6: blend this run's durations into the table, prune the keys of
// items that are gone, save. A shard learns nothing: merge learns once from every
// shard's rows (a shard that saved would have them learned twice). wait ends the
// wait for another run's lock on the table (weights.Rewrite).
func (r *run) learn(wait context.Context, o *ordered, e *expansion) ([]record.Change, []string) {
	if r.shard != nil {
		r.printf("  shard %d/%d: the weight table is left as it is: sgpu-queue merge learns once from every shard's rows\n", r.shard.Shard,
			r.shard.Shards)
		return nil, nil
	}
	if r.rerun != nil {
		// A narrowed item's time is not the item's, and a re-run's items ran on a
		// box mostly idle: the attempt being re-run already taught the table.
		r.printf("  a re-run: the weight table is left as it is (a re-run's times are not a full queue's)\n")
		return nil, nil
	}
	return r.saveLearned(wait, o.store, o.stored, func(stored *weights.Table) learned {
		return learnOver(stored, o, r.res.Suites, e.census)
	})
}

// learnOver is a run's learning applied to the table as stored when it saves
// (phase 6, under the table's lock): what another run saved since this one loaded
// stays, but for the keys this run measured (blended into it) and those of its own
// censused suites that are gone (pruned). TE's seeds fill the keys it lacks, as
// they filled the table phase 2 loaded.
func learnOver(stored *weights.Table, o *ordered, suites []verdict.Suite, census weights.Census) learned {
	stored.Fill(o.seeds)
	p := o.pool.Over(stored)
	changes, pruned := LearnRun(p.View, suites, census)
	table, aside := p.Join(census)
	return learned{table: table, changes: changes, pruned: append(pruned, aside...)}
}

// learned is what a run's learning made of a stored table.
type learned struct {
	table   *weights.Table
	changes []record.Change
	pruned  []string
}

// saveLearned applies a run's learning to the stored table and saves it, as a
// read-modify-write under the table's lock (weights.Rewrite, docs/weights.md "Runs
// at once"): a run that saved since this one loaded keeps what it learned. It names
// the pruned keys and says what changed. loaded is the table phase 2 loaded: what is
// learned when the table cannot be read again, so that run.json still says it. wait
// ends the wait for another run's lock: the table is then not written.
func (r *run) saveLearned(wait context.Context, store weights.Store, loaded *weights.Table,
	apply func(stored *weights.Table) learned) ([]record.Change, []string) {
	var l *learned
	var err error
	if r.unread == nil {
		var warns []string
		warns, err = weights.Rewrite(wait, store, loaded, func(stored *weights.Table) *weights.Table {
			got := apply(stored)
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
		got := apply(loaded)
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
		r.lost("the weight table", store.String(), errors.New("a signal stopped the wait for another sgpu-queue run's lock on it; "+
			"what this run measured stays in its log dir"))
	case err != nil:
		r.lost("the weight table", store.String(), err)
	default:
		r.printf("  %d weight(s) changed, %d pruned, %d keys → %s\n", len(l.changes), len(l.pruned), l.table.Len(), store)
	}
	return l.changes, l.pruned
}

// LearnRun is the learning of phase 6 on a run's verdicts, without saving: each
// attempt an item teaches by (learnable) teaches by its outcome (weights.Measure,
// docs/outcomes.md) a duration, only "at least this long", or nothing (no-run);
// then the keys of items that are gone by census are pruned. It returns the
// weights that changed and the keys pruned. A merge calls it once on every shard's
// items, so that the table is the one a single run of those attempts would learn.
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

// learnable are the attempts an item teaches by: its one attempt; of an item that
// ran several times (reruns, quarantine), its passing attempts (outcome ok), or
// its last one when none passed, so a flaky failure never teaches a duration.
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
