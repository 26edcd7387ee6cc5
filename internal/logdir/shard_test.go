package logdir

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rocm/sgpu-queue/internal/record"
)

func TestShardsTSVRoundTrip(t *testing.T) {
	queue := []record.QueueRow{{ItemID: record.ItemID{Label: "torch", Tag: "a\tb"}}, {ItemID: record.ItemID{Label: "core"}}, {ItemID: record.ItemID{Label: "torch", Tag: "gone"}}}
	rows := map[record.ItemID]int{{Label: "torch", Tag: "a\tb"}: 2, {Label: "core"}: 1}
	data := FormatShards(rows, queue)
	if got := string(data); got != "torch\ta\\tb\t2\ncore\twhole\t1\n" {
		t.Errorf("shards.tsv %q", got)
	}
	run := &record.Run{Meta: record.Meta{Suites: []record.MetaSuite{{Label: "torch", Mode: "list"}, {Label: "core", Mode: "opaque"}}}}
	back, warns := ParseShards(append(data, "x\ty\t0\nshort\n"...), run)
	if diff := cmp.Diff(rows, back); diff != "" || len(warns) != 2 {
		t.Errorf("round trip (-want +got):\n%s\nwarnings %q", diff, warns)
	}
}

// FuzzParseShards: whatever shards.tsv holds, only rows of three columns with a
// shard from 1 are accepted, and each comes back from its own formatting.
func FuzzParseShards(f *testing.F) {
	f.Add("torch\ta\t2\ncore\twhole\t1\n")
	f.Add("torch\ta\t0\nx\t\t\t\n")
	f.Add("a\\tb\tc\\n\t99999999999999999999\r\n")
	f.Fuzz(func(t *testing.T, in string) {
		run := &record.Run{}
		got, _ := ParseShards([]byte(in), run)
		for ref, s := range got {
			if s < 1 || ref.Label == "" || ref.Tag == "" {
				t.Fatalf("accepted shard %d for %+v", s, ref)
			}
			q := []record.QueueRow{{ItemID: ref}}
			back, warns := ParseShards(FormatShards(map[record.ItemID]int{ref: s}, q), run)
			if len(warns) != 0 || len(back) != 1 || back[ref] != s {
				t.Fatalf("round trip %+v %d → %v %q", ref, s, back, warns)
			}
		}
	})
}

// A run's GPUs are "gpu1" wherever they are named, a merged run's "s2:1".
