package junit

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

// Combine: two shards' merged files of one suite become one document whose counts
// are recomputed, each suite marked with its shard; a shard file that is missing
// or garbage is an error case naming it; an item of a shard that never reported is
// an error case of type sgpu-queue.never-ran. The result is schema-valid.
func TestCombine(t *testing.T) {
	dir := t.TempDir()
	// Each shard's file is what Merge writes for it: one item passed, one failed.
	var paths []string
	for i, item := range []verdict.Item{{ItemID: record.ItemID{Tag: "a"}, GPU: "0", Finished: true}, {ItemID: record.ItemID{Tag: "b"}, GPU: "1", Result: record.Result{RC: 3, Failed: true}, Finished: true}} {
		raw := filepath.Join(dir, "raw", string(rune('1'+i)))
		writeTree(t, raw, map[string]string{item.Tag + ".xml": `<testsuite name="pytest"><testcase classname="t" name="test_` + item.Tag + `" time="1"/></testsuite>`}, time.Now())
		d, err := Merge(context.Background(), verdict.Suite{Label: "torch", Items: []verdict.Item{item}}, Source{Dir: raw, Suffix: ".xml"}, time.Now().Add(-time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "s"+string(rune('1'+i)), "torch.xml")
		if err := d.WriteFile(filepath.Dir(p), p); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	garbage := filepath.Join(dir, "garbage.xml")
	os.WriteFile(garbage, []byte("<testsuite"), 0o644)
	parts := []Part{{Shard: "1/4", Path: paths[0]}, {Shard: "2/4", Path: paths[1]}, {Shard: "3/4", Path: filepath.Join(dir, "gone.xml")}, {Shard: "4/4", Path: garbage}}
	s := verdict.Suite{Label: "torch", Broken: "its listing failed on shard 5/5: exited with 4", Items: []verdict.Item{
		{ItemID: record.ItemID{Tag: "c"}, Result: record.Result{RC: 1, Failed: true}, Note: "never ran: shard 5/5 never reported", Stop: outcome.StopNotReported},
		{ItemID: record.ItemID{Tag: "a"}, Finished: true}, // its shard's file speaks for it
	}}
	d, err := Combine(context.Background(), s, parts, func(it verdict.Item) bool { return it.Stop == outcome.StopNotReported })
	if err != nil {
		t.Fatal(err)
	}
	st := d.Stats()
	// a, b (and b's item-failed error case), gone, garbage, the broken suite, c.
	if st.Tests != 7 || st.Errors != 5 || st.Failures != 0 || st.Files != 4 || st.Malformed != 2 {
		t.Errorf("stats %+v", st)
	}
	data, _ := encode(t, d)
	text := string(data)
	for _, want := range []string{
		`<property name="sgpu.shard" value="1/4">`, `<property name="sgpu.shard" value="2/4">`, `name="test_a"`, `name="test_b"`,
		`type="sgpu-queue.shard-junit"`, "shard 3/4: its merged JUnit file " + filepath.Join(dir, "gone.xml") + " cannot be read",
		`type="sgpu-queue.suite-failed"`, "suite torch: its listing failed on shard 5/5: exited with 4",
		`type="sgpu-queue.never-ran"`, "item c of suite torch: never ran: shard 5/5 never reported, never finished",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("combined document lacks %q:\n%s", want, text)
		}
	}
	validateXSD(t, data)
}
