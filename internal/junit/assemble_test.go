package junit

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

// A cut-off item's cut says so in place of its note; an item that never started
// names no log.
func TestItemsOf(t *testing.T) {
	s := verdict.Suite{Label: "s", Items: []verdict.Item{
		{ItemID: record.ItemID{Tag: "a"}, Result: record.Result{RC: 0, Failed: true, Outcome: outcome.CutOff}, Finished: true, Started: true, Note: "cut off", LogRel: "items/s.a.log"},
		{ItemID: record.ItemID{Tag: "b"}, Result: record.Result{RC: 124, Failed: true, Outcome: outcome.Timeout}, Finished: true, Started: true, Note: "timed out", LogRel: "items/s.b.log"},
		{ItemID: record.ItemID{Tag: "c"}, Result: record.Result{RC: 130, Failed: true}, Note: "cancelled before it started"},
	}}
	items := itemsOf(s, Source{LogDir: "/logs", Named: true})
	if a := items[0]; !a.cut() || a.note() != "" || a.log != filepath.Join("/logs", "items/s.a.log") || !a.named {
		t.Errorf("cut off: %+v", a)
	}
	if b := items[1]; b.cut() || b.note() != "timed out" || b.RC != 124 {
		t.Errorf("timed out: %+v", b)
	}
	if c := items[2]; c.log != "" || c.Finished || c.note() != "cancelled before it started" {
		t.Errorf("never started: %+v", c)
	}
}

// A suite of a merged run with no shard file, no unreported item and no broken
// step has no document.
func TestCombineNone(t *testing.T) {
	s := verdict.Suite{Label: "s", Items: []verdict.Item{{ItemID: record.ItemID{Tag: "a"}, Finished: true}}}
	d, err := Combine(context.Background(), s, nil, func(verdict.Item) bool { return false })
	if d != nil || err != nil {
		t.Errorf("got %v, %v", d, err)
	}
	d, err = Combine(context.Background(), s, nil, func(verdict.Item) bool { return true })
	if err != nil || d == nil || d.Stats().Errors != 1 {
		t.Errorf("an unreported item: %+v, %v", d, err)
	}
}
