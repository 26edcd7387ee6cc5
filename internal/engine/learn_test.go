package engine

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/runenv"
	"github.com/rocm/sgpu-queue/internal/verdict"
	"github.com/rocm/sgpu-queue/internal/weights"
)

// tableOf is a table of "key=seconds" pairs.
func tableOf(kv ...string) *weights.Table {
	t := weights.New()
	for _, p := range kv {
		k, v, _ := strings.Cut(p, "=")
		secs, _ := strconv.ParseFloat(v, 64)
		t.Set(k, secs)
	}
	return t
}

// dumpTable is a table as "key=seconds" in key order.
func dumpTable(t *weights.Table) string {
	var out []string
	for _, k := range t.Keys() {
		v, _ := t.Get(k)
		out = append(out, k+"="+weights.FormatSeconds(v))
	}
	return strings.Join(out, " ")
}

// Two runs in one checkout that loaded one table and save it one after the other
// (docs/weights.md "Runs at once"): the second applies its learning to the table as
// the first saved it, so both runs' weights are there; it prunes only the keys of
// the suites it censused, and fills in its TE seeds.
func TestLearnOverAnotherRunsSave(t *testing.T) {
	phase2 := func() string { return "a/x=10 b/y=20 b/gone=5 c/z=3" } // what both loaded
	runOf := func(label, tag string, secs float64) []verdict.Suite {
		id := record.ItemID{Label: label, Tag: tag}
		return verdict.Decide(&record.Run{
			Meta:     record.Meta{Suites: []record.MetaSuite{{Label: label, Mode: "list"}}},
			Queue:    []record.QueueRow{{ItemID: id}},
			Attempts: []record.Attempt{{ItemID: id, GPUs: []string{"0"}, Secs: secs, Outcome: outcome.OK}},
		})
	}
	orderedOf := func(loaded *weights.Table, seeds *weights.Table) *ordered {
		return &ordered{stored: loaded, seeds: seeds, pool: weights.SplitPool(loaded, nil, 2)}
	}

	// Run A learns suite a and saves first.
	loadedA := tableOf(strings.Fields(phase2())...)
	a := learnOver(tableOf(strings.Fields(phase2())...), orderedOf(loadedA, weights.New()), runOf("a", "x", 20),
		weights.Census{"a": {"a/x": true}})
	if got := dumpTable(a.table); got != "b/y=20.0 a/x=15.0 b/gone=5.0 c/z=3.0" {
		t.Fatalf("run A saved %s", got)
	}

	// Run B loaded before A saved; it learns suite b over A's table.
	loadedB := tableOf(strings.Fields(phase2())...)
	b := learnOver(a.table, orderedOf(loadedB, tableOf("b/seeded=7")), runOf("b", "y", 10),
		weights.Census{"b": {"b/y": true, "b/seeded": true}})
	want := "b/y=19.0 a/x=15.0 b/seeded=7.0 c/z=3.0"
	if got := dumpTable(b.table); got != want {
		t.Errorf("run B saved %s, want %s (A's a/x=15 kept, b/gone pruned by B's census, c/z of no census kept)", got, want)
	}
	if len(b.pruned) != 1 || b.pruned[0] != "b/gone" || len(b.changes) != 1 || b.changes[0].Old != 20 {
		t.Errorf("run B: pruned %q, changes %+v", b.pruned, b.changes)
	}
}

// The wait of phases 5–7 on another run ends at the next signal: a cancel of the
// run's context when it has none yet; after one (a run cancelled while its items
// ran), only the second signal (Force), never the cancel already heard.
func TestNextSignal(t *testing.T) {
	for _, tc := range []struct {
		name            string
		cancelledBefore bool
		cancel, force   bool
		want            bool
	}{
		{"no signal", false, false, false, false},
		{"a first signal now", false, true, false, true},
		{"the first signal heard before: not again", true, false, false, false},
		{"the first signal heard before, then the second", true, false, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runCtx, cancel := context.WithCancel(context.Background())
			defer cancel()
			force := make(chan struct{})
			if tc.cancelledBefore {
				cancel()
			}
			r := &run{o: Options{Target: runenv.Options{Force: force}}}
			wait, stop := r.nextSignal(runCtx)
			defer stop()
			if tc.cancel {
				cancel()
			}
			if tc.force {
				close(force)
			}
			// A generous bound where the wait must end; a short look where it
			// must not (it cannot end by itself later either).
			within := 100 * time.Millisecond
			if tc.want {
				within = time.Minute
			}
			select {
			case <-wait.Done():
				if !tc.want {
					t.Error("the wait ended without a new signal")
				}
			case <-time.After(within):
				if tc.want {
					t.Error("the wait went on after the signal")
				}
			}
		})
	}
}
