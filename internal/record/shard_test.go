package record

import "testing"

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
	if g := ShardGPU(2, "2,3"); g != "s2:2,s2:3" || (Attempt{GPUs: []string{"2", "3"}, Shard: 2}).GPU() != g {
		t.Errorf("a multi-GPU attempt's ids: %q", g)
	}
	for _, g := range []string{"0", "s:0", "s0:1", "s01:1", "S1:0", "s-1:0", "s1", "gpu1:0", "s1:2,s2:3", "s1:2,3"} {
		if _, _, ok := SplitShardGPU(g); ok {
			t.Errorf("%q read as a shard's GPU", g)
		}
	}
}

func TestGPUName(t *testing.T) {
	for in, want := range map[string]string{"1": "gpu1", "2,3": "gpu2,3", "s2:1": "s2:1", "s2:2,s2:3": "s2:2,s2:3", ShardGPU(3, "0"): "s3:0"} {
		if got := GPUName(in); got != want {
			t.Errorf("GPUName(%q) = %q, want %q", in, got, want)
		}
	}
}
