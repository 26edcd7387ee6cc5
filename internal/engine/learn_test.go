package engine

import (
	"strconv"
	"strings"
	"testing"

	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/record"
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
