package logdir

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rocm/sgpu-queue/internal/record"
)

func TestShardsTSVRoundTrip(t *testing.T) {
	queue := []record.QueueRow{{Label: "torch", Tag: "a\tb"}, {Label: "core"}, {Label: "torch", Tag: "gone"}}
	rows := map[record.ItemRef]int{{Label: "torch", Item: "a\tb"}: 2, {Label: "core", Item: record.Whole}: 1}
	data := FormatShards(rows, queue)
	if got := string(data); got != "torch\ta\\tb\t2\ncore\twhole\t1\n" {
		t.Errorf("shards.tsv %q", got)
	}
	back, warns := ParseShards(append(data, "x\ty\t0\nshort\n"...))
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
		got, _ := ParseShards([]byte(in))
		for ref, s := range got {
			if s < 1 || ref.Label == "" || ref.Item == "" {
				t.Fatalf("accepted shard %d for %+v", s, ref)
			}
			q := []record.QueueRow{{Label: ref.Label, Tag: ref.Item}}
			back, warns := ParseShards(FormatShards(map[record.ItemRef]int{{Label: ref.Label, Item: record.ItemColumn(ref.Item)}: s}, q))
			if len(warns) != 0 || len(back) != 1 || back[record.ItemRef{Label: ref.Label, Item: record.ItemColumn(ref.Item)}] != s {
				t.Fatalf("round trip %+v %d → %v %q", ref, s, back, warns)
			}
		}
	})
}

// A run's GPUs are "gpu1" wherever they are named, a merged run's "s2:1".
