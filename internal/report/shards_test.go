package report

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

// Merged runs (testdata/merged: the files sgpu-queue merge wrote for the e2e
// fixture's job matrix of 3 shards of 2 GPUs, all of them, and without shard 2):
// the report draws a lane per shard and GPU, bounds over all six GPUs, and has a
// Shards section with each shard's wall against its own bound, the imbalance and
// the advice; a shard that never reported is said at once, with its items.
func TestMergedGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		want []string
		not  []string
	}{
		{"merged", []string{"### Shards", "on 6 GPUs", "**Imbalance**", "**One more runner**", "section GPU s1꞉0", "section GPU s3꞉1",
			"| 1 | 2 | `s1/logs` |", "1 item(s) of the plan were listed by no shard"}, []string{"never reported"}},
		{"merged-missing", []string{"**1 shard(s) never reported**", "2/3 (3 items)", "| 2 | – | – | 3 | 3 |", "| – | never ran\\: shard 2/3 never reported |", "(never ran on their shard; counted as failed)", "on 4 GPUs",
			"| never ran\\: shard 2/3 never reported | – | – | – (never started) |"},
			[]string{"**One more runner**", "[`items/north.n.one.log`]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, suites, s := loadRun(t, filepath.Join("testdata", "merged", tc.name))
			md, svg := renderBoth(t, r, suites, s)
			checkMarkdown(t, md)
			checkSVG(t, svg)
			for _, w := range tc.want {
				if !strings.Contains(string(md), w) {
					t.Errorf("report lacks %q", w)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(string(md), w) {
					t.Errorf("report has %q", w)
				}
			}
			if !strings.Contains(string(svg), ">GPU s2:0<") && tc.name == "merged" {
				t.Error("the SVG has no lane named s2:0")
			}
			goldenFile(t, tc.name+".md", md)
			goldenFile(t, tc.name+".svg", svg)
		})
	}
}

// A merged run's quarantined GPU is named with its shard wherever the report
// names a GPU (the headline, the Quarantined GPUs table, the GPUs table, the
// Mermaid lanes, the SVG lanes), and its time counts from its own shard's start,
// as the shard's rows do.
func TestMergedQuarantineNames(t *testing.T) {
	r, _, _ := loadRun(t, filepath.Join("testdata", "merged", "merged"))
	shard2 := r.Meta.Merge.Parts[1].Started
	// A constructed time, not a measured one: this far after shard 2's own start,
	// and the row says that offset (not one from the merged run's start).
	after := 500 * time.Millisecond
	r.Meta.Quarantined = []record.Quarantined{{GPU: "s2:1", Reason: "2 items failed in a row on it", At: shard2.Add(after)}}
	suites := verdict.Decide(r)
	md, svg := renderBoth(t, r, suites, Compute(r, suites))
	checkMarkdown(t, md)
	for _, w := range []string{
		"**1 GPU(s) quarantined** (s2\\:1)",
		"| s2\\:1 | t+" + strconv.FormatFloat(after.Seconds(), 'f', 1, 64) + "s | 2 items failed in a row on it |",
		"\n| s2\\:1 | 2 |",
		"    section GPU s2꞉1\n",
	} {
		if !strings.Contains(string(md), w) {
			t.Errorf("report lacks %q", w)
		}
	}
	if strings.Contains(string(md), "s2_1") || !strings.Contains(string(svg), ">GPU s2:1<") {
		t.Errorf("a lane is not named s2:1 (s2_1 in the report, or not in the SVG)")
	}
}
