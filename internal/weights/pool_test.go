package weights

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func table(kv ...any) *Table {
	t := New()
	for i := 0; i < len(kv); i += 2 {
		t.Set(kv[i].(string), kv[i+1].(float64))
	}
	return t
}

func dump(t *Table) string {
	var s []string
	for _, k := range t.Keys() {
		v, _ := t.Get(k)
		s = append(s, k+"="+strings.TrimSuffix(FormatSeconds(v), ".0"))
	}
	slices.Sort(s)
	return strings.Join(s, " ")
}

// A pool-sized item's weight is kept per pool size: a run on 8 GPUs sees and learns
// its 8-GPU weight, never its 4-GPU one, which it stores back untouched.
func TestPoolSplitJoin(t *testing.T) {
	stored := table(
		"torch/a", 10.0, // single-GPU item
		"torch-mgpu/fsdp@g4", 400.0, "torch-mgpu/fsdp@g8", 200.0, // pool-sized
		"torch-mgpu/fsdp", 999.0, // its plain key: pool size unknown, dropped
		"torch-mgpu/gone@g4", 50.0, // no longer listed: pruned with its suite's census
		"jax-mgpu/other@g4", 60.0, // another suite's, census unknown: kept
		"torch-mgpu/num", 30.0, "torch-mgpu/num@g4", 31.0, // declared now (not pooled): its plain key
		"odd@gx", 5.0, // not a pool key
	)
	pooled := map[string]bool{"torch-mgpu/fsdp": true, "torch-mgpu/new": true}
	p := SplitPool(stored, pooled, 8)
	if got, want := dump(p.View), "odd@gx=5 torch-mgpu/fsdp=200 torch-mgpu/num=30 torch/a=10"; got != want {
		t.Errorf("view %s\nwant %s", got, want)
	}
	// The run learns: fsdp on 8 GPUs took 220 s, new on 8 GPUs 90 s.
	p.View.Set("torch-mgpu/fsdp", 220)
	p.View.Set("torch-mgpu/new", 90)
	census := Census{"torch-mgpu": {"torch-mgpu/fsdp": true, "torch-mgpu/new": true, "torch-mgpu/num": true}}
	out, pruned := p.Join(census)
	want := "jax-mgpu/other@g4=60 odd@gx=5 torch-mgpu/fsdp@g4=400 torch-mgpu/fsdp@g8=220 torch-mgpu/new@g8=90 torch-mgpu/num=30 torch-mgpu/num@g4=31 torch/a=10"
	if got := dump(out); got != want {
		t.Errorf("stored %s\nwant   %s", got, want)
	}
	if strings.Join(pruned, " ") != "torch-mgpu/gone@g4" {
		t.Errorf("pruned %q", pruned)
	}
}

// TE's current table fills the keys the table lacks; a pool-sized item's goes under
// its key for the pool size TE's file is named by.
func TestSeed(t *testing.T) {
	dir := t.TempDir()
	path := TEPath(dir, "mgpu", "gfx942", "3", 8)
	if filepath.Base(path) != "test_weights.mgpu.gfx942.l3.g8.txt" {
		t.Fatalf("TEPath %s", path)
	}
	os.MkdirAll(filepath.Dir(path), 0o755)
	os.WriteFile(path, []byte("torch-mgpu/fsdp 300\ntorch-mgpu/num 40\ntorch-mgpu/mine 1\nbad line\n"), 0o644)
	tb := table("torch-mgpu/mine", 7.0)
	added, warns := Seed(context.Background(), tb, path, map[string]bool{"torch-mgpu/fsdp": true}, 8)
	if got := dump(tb); dump(added) != "torch-mgpu/fsdp@g8=300 torch-mgpu/num=40" || got != "torch-mgpu/fsdp@g8=300 torch-mgpu/mine=7 torch-mgpu/num=40" || len(warns) != 1 {
		t.Errorf("seeded %s: %s, warnings %q", dump(added), got, warns)
	}
	if added, warns := Seed(context.Background(), tb, filepath.Join(dir, "none.txt"), nil, 8); added.Len() != 0 || warns != nil {
		t.Errorf("a missing table: %s, %q", dump(added), warns)
	}
	// A table read again at phase 6 (weights.Rewrite) is filled with what was
	// seeded, for the keys it lacks.
	again := table("torch-mgpu/num", 55.0)
	if n := again.Fill(added); n != 1 || dump(again) != "torch-mgpu/fsdp@g8=300 torch-mgpu/num=55" {
		t.Errorf("Fill set %d: %s", n, dump(again))
	}
}
