package logdir

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestShardGPU(t *testing.T) {
	for _, tc := range []struct {
		s  int
		id string
	}{{1, "0"}, {12, "GPU-8d1457e2"}, {3, "MIG-GPU-a/1/0"}, {2, "s1:0"}, {2, "2,3"}} {
		g := ShardGPU(tc.s, tc.id)
		s, id, ok := SplitShardGPU(g)
		if !ok || s != tc.s || id != tc.id {
			t.Errorf("%q → %d %q %v", g, s, id, ok)
		}
	}
	if g := ShardGPU(2, "2,3"); g != "s2:2,s2:3" || GPUCount(g) != 2 {
		t.Errorf("a multi-GPU attempt's ids: %q", g)
	}
	for _, g := range []string{"0", "s:0", "s0:1", "s01:1", "S1:0", "s-1:0", "s1", "gpu1:0", "s1:2,s2:3", "s1:2,3"} {
		if _, _, ok := SplitShardGPU(g); ok {
			t.Errorf("%q read as a shard's GPU", g)
		}
	}
}

func TestShardsTSVRoundTrip(t *testing.T) {
	queue := []QueueRow{{Label: "torch", Tag: "a\tb"}, {Label: "core"}, {Label: "torch", Tag: "gone"}}
	rows := map[ItemRef]int{{"torch", "a\tb"}: 2, {"core", Whole}: 1}
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
			q := []QueueRow{{Label: ref.Label, Tag: ref.Item}}
			back, warns := ParseShards(FormatShards(map[ItemRef]int{{ref.Label, ItemColumn(ref.Item)}: s}, q))
			if len(warns) != 0 || len(back) != 1 || back[ItemRef{ref.Label, ItemColumn(ref.Item)}] != s {
				t.Fatalf("round trip %+v %d → %v %q", ref, s, back, warns)
			}
		}
	})
}

// A run's GPUs are "gpu1" wherever they are named, a merged run's "s2:1".
func TestGPUName(t *testing.T) {
	for in, want := range map[string]string{"1": "gpu1", "2,3": "gpu2,3", "s2:1": "s2:1", "s2:2,s2:3": "s2:2,s2:3", ShardGPU(3, "0"): "s3:0"} {
		if got := GPUName(in); got != want {
			t.Errorf("GPUName(%q) = %q, want %q", in, got, want)
		}
	}
}
