package shard_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/rocm/sgpu-queue/internal/golden"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/schedule"
	"github.com/rocm/sgpu-queue/internal/shard"
)

// TestHashShardPinned: the hash rule must never change (shard jobs of one matrix
// may even run different builds): values computed independently (Python, FNV-1a
// 64 by its definition: offset 0xcbf29ce484222325, prime 0x100000001b3).
func TestHashShardPinned(t *testing.T) {
	tests := []struct {
		key  string
		want map[int]int // shards → shard
	}{
		{"core", map[int]int{1: 1, 2: 1, 3: 1, 4: 3, 7: 1, 256: 159}},
		{"torch/test_numerics.py", map[int]int{1: 1, 2: 1, 3: 3, 4: 1, 7: 5, 256: 85}},
		{"jax/test_fused_attn.auto", map[int]int{1: 1, 2: 1, 3: 3, 4: 3, 7: 5, 256: 59}},
		{"", map[int]int{1: 1, 2: 2, 3: 3, 4: 2, 7: 3, 256: 38}},
		{"a b/c*?[x]", map[int]int{1: 1, 2: 2, 3: 3, 4: 4, 7: 3, 256: 172}},
	}
	for _, tc := range tests {
		for k, want := range tc.want {
			if got := shard.HashShard(tc.key, k); got != want {
				t.Errorf("HashShard(%q, %d) = %d, want %d", tc.key, k, got, want)
			}
		}
	}
	if got := shard.HashShard("core", 0); got != 0 {
		t.Errorf("HashShard with no shards = %d, want 0", got)
	}
}

// plan makes the plan of spec on shards of gpus GPUs.
func plan(t testing.TB, its []schedule.Item, shards, gpus int) *shard.Plan {
	t.Helper()
	a, err := shard.Assign(its, shards, gpus)
	if err != nil {
		t.Fatal(err)
	}
	return shard.New(its, a, shard.Identity{Store: "t.weights", Arch: "gfx942", Level: "1", SHA256: "00", Keys: len(its)}, "weights")
}

func TestShardOf(t *testing.T) {
	its := items(t, "s/a 5\ns/b 4\ns/c 3\ns/d 3\ns/e 2\ns/f 1")
	p := plan(t, its, 3, 1)
	byPlan := 0
	for _, s := range p.Shards {
		for _, k := range s.Keys {
			if got := p.ShardOf(k); got != s.Shard {
				t.Errorf("ShardOf(%q) = %d, the plan lists it on %d", k, got, s.Shard)
			}
			if !p.Planned(k) {
				t.Errorf("Planned(%q) = false", k)
			}
			if got := (&shard.Job{Shards: 3, Plan: p}).Of(k); got != s.Shard {
				t.Errorf("Job{plan}.Of(%q) = %d, the plan lists it on %d", k, got, s.Shard)
			}
			if got, want := (&shard.Job{Shards: 3}).Of(k), shard.HashShard(k, 3); got != want {
				t.Errorf("Job{no plan}.Of(%q) = %d, want its hash shard %d", k, got, want)
			}
			if s.Shard != shard.HashShard(k, 3) {
				byPlan++
			}
		}
	}
	if byPlan == 0 {
		t.Fatal("every planned key is on its hash shard: Of's plan and no-plan cases cannot be told apart here")
	}
	// Items new since the plan go by the hash; every item has one shard of the plan.
	more := append(items(t, "new/x 1\nnew/y 1\nother 1"), its...)
	for _, k := range []string{"new/x", "new/y", "other"} {
		if got, want := p.ShardOf(k), shard.HashShard(k, 3); got != want || p.Planned(k) {
			t.Errorf("ShardOf(%q) = %d (planned %v), want its hash shard %d", k, got, p.Planned(k), want)
		}
	}
	for _, it := range more {
		if s := p.ShardOf(it.Key()); s < 1 || s > 3 {
			t.Errorf("ShardOf(%q) = %d, want a shard 1 … 3", it.Key(), s)
		}
	}
}

// TestNonUTF8Key: JSON cannot carry a key that is not UTF-8, so Assign puts it on
// its hash shard, the plan does not list it, and ShardOf finds it there.
func TestNonUTF8Key(t *testing.T) {
	its := items(t, "s/a 50\ns/b 40\ns/c 30")
	its = append(its, schedule.Item{ItemID: record.ItemID{Label: "s", Tag: "bad\xff"}, Weight: 60, Known: true, Seq: 3, GPUs: 1})
	a, err := shard.Assign(its, 4, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := shard.HashShard("s/bad\xff", 4)
	if a.Of[3] != want-1 || a.Hashed != 1 {
		t.Fatalf("the non-UTF-8 item is on shard %d (hashed %d), want its hash shard %d", a.Of[3]+1, a.Hashed, want)
	}
	p := shard.New(its, a, shard.Identity{}, "weights")
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	if !utf8.Valid(b.Bytes()) {
		t.Errorf("the plan is not UTF-8:\n%s", b.String())
	}
	back, err := shard.Read(&b, "plan.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range back.Shards {
		for _, k := range s.Keys {
			if strings.Contains(k, "bad") {
				t.Errorf("shard %d lists %q", s.Shard, k)
			}
		}
	}
	if back.Largest != `"s/bad\xff"` {
		t.Errorf("largest item %q, want it quoted", back.Largest)
	}
	if got := back.ShardOf("s/bad\xff"); got != want {
		t.Errorf("ShardOf = %d, want %d", got, want)
	}
	if back.Shards[want-1].Items != len(back.Shards[want-1].Keys)+1 {
		t.Errorf("shard %d: items %d, keys %d: the count should include the unlisted item", want, back.Shards[want-1].Items, len(back.Shards[want-1].Keys))
	}
}

// TestPlanFile: the file's fields, and Read(Write(p)) is p, byte for byte again.
func TestPlanFile(t *testing.T) {
	its := items(t, "core 100\nt/a 10\nt/b 10 2\nt/<c>&d 10\nex ?")
	p := plan(t, its, 2, 2)
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "plan.golden"), b.Bytes(), *update)
	back, err := shard.Read(bytes.NewReader(b.Bytes()), "plan.json")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p, back, cmpopts.IgnoreUnexported(shard.Plan{})); diff != "" {
		t.Errorf("read back (-wrote +read):\n%s", diff)
	}
	var again bytes.Buffer
	back.Write(&again)
	if !bytes.Equal(b.Bytes(), again.Bytes()) {
		t.Error("writing the plan read back gives other bytes")
	}
}

// The messages for bad plan files are pinned in testdata/read-errors.golden
// (go test -run TestReadErrors -update rewrites it).
func TestReadErrors(t *testing.T) {
	bad := []string{
		``,
		`not json`,
		`{"version": 1, "gpus_per_shard": 2, "shards": [{"shard": 1, "keys": ["a"]}]`,
		`[]`,
		`{"version": "1"}`,
		`{"version": 2, "gpus_per_shard": 2, "shards": [{"shard": 1, "keys": ["a"]}]}`,
		`{"version": 1, "gpus_per_shard": 2, "shards": []}`,
		`{"version": 1, "gpus_per_shard": 0, "shards": [{"shard": 1, "keys": ["a"]}]}`,
		`{"version": 1, "gpus_per_shard": 2, "shards": [{"shard": 2, "keys": ["a"]}, {"shard": 1, "keys": []}]}`,
		`{"version": 1, "gpus_per_shard": 2, "shards": [{"shard": 1, "keys": ["a", ""]}]}`,
		`{"version": 1, "gpus_per_shard": 2, "shards": [{"shard": 1, "keys": ["a"]}, {"shard": 2, "keys": ["b", "a"]}]}`,
		`{"version": 1, "gpus_per_shard": 2, "shards": [{"shard": 1, "keys": ["a\nb"]}, {"shard": 2, "keys": ["a\nb"]}]}`,
		`{"version": 1, "gpus_per_shard": 2, "shards": [{"shard": 1, "keys": [7]}]}`,
	}
	var b strings.Builder
	for _, in := range bad {
		_, err := shard.Read(strings.NewReader(in), "plan.json")
		if err == nil {
			t.Errorf("Read(%q): no error", in)
			continue
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("Read(%q): a multi-line error %q", in, err)
		}
		fmt.Fprintf(&b, "%s\n\t%v\n", in, err)
	}
	ok := `{"version": 1, "gpus_per_shard": 2, "shards": [{"shard": 1, "keys": ["a"]}, {"shard": 2, "keys": []}], "later": "fields are ignored"}`
	if _, err := shard.Read(strings.NewReader(ok), "plan.json"); err != nil {
		t.Errorf("a plan with a field from a later version: %v", err)
	}
	golden.Check(t, filepath.Join("testdata", "read-errors.golden"), []byte(b.String()), *update)
}

// TestEveryKeyOnOneShard is the property a job matrix rests on: every key of a
// table, and every key the plan never saw, is run by exactly one shard, whatever
// the shard count, and the plan says the same after a round trip through its file.
func TestEveryKeyOnOneShard(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(14, 14))
	tables := [][]schedule.Item{loadTable(t, teTable, 8), loadTable(t, mixedTable, 8), loadTable(t, splitTable, 8)}
	for range 10 {
		n := 1 + rng.IntN(40)
		var its []schedule.Item
		for i := range n {
			its = append(its, schedule.Item{ItemID: record.ItemID{Label: fmt.Sprintf("s%d", rng.IntN(5)), Tag: fmt.Sprintf("t %d/%x", i, rng.Uint32())},
				Weight: float64(1 + rng.IntN(900)), Known: rng.IntN(10) > 0, Seq: i, GPUs: 1 + rng.IntN(4)*rng.IntN(2)})
		}
		tables = append(tables, its)
	}
	for ti, its := range tables {
		for _, k := range []int{1, 3, 64} {
			p := plan(t, its, k, 8)
			var b bytes.Buffer
			if err := p.Write(&b); err != nil {
				t.Fatal(err)
			}
			back, err := shard.Read(&b, "plan.json")
			if err != nil {
				t.Fatal(err)
			}
			unseen := []schedule.Item{{ItemID: record.ItemID{Label: "new", Tag: fmt.Sprint(ti, k)}}, {ItemID: record.ItemID{Label: "opaque-new"}}}
			all := append(append([]schedule.Item(nil), its...), unseen...)
			for _, it := range all {
				if s := back.ShardOf(it.Key()); s < 1 || s > k {
					t.Fatalf("table %d, %d shards: %q runs on shard %d", ti, k, it.Key(), s)
				}
				if p.ShardOf(it.Key()) != back.ShardOf(it.Key()) {
					t.Fatalf("table %d, %d shards: %q moves shard through the file", ti, k, it.Key())
				}
			}
			listed := 0
			for _, s := range back.Shards {
				listed += len(s.Keys)
			}
			if listed != len(its) {
				t.Fatalf("table %d, %d shards: %d keys listed, want %d", ti, k, listed, len(its))
			}
		}
	}
}

func FuzzRead(f *testing.F) {
	for _, s := range []string{
		`{"version": 1, "gpus_per_shard": 2, "shards": [{"shard": 1, "keys": ["a", "b/c"]}, {"shard": 2, "keys": []}]}`,
		`{"version": 1, "gpus_per_shard": 1, "shards": [{"shard": 1, "keys": ["a"]}, {"shard": 2, "keys": ["a"]}]}`,
		`{"version": 1}`, `null`, `{"shards": null}`, "{\"version\": 1, \"gpus_per_shard\": 2, \"shards\": [{\"shard\": 1, \"keys\": [\"\\u0000\"]}]}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := shard.Read(bytes.NewReader(data), "fuzz.json")
		if err != nil {
			if p != nil || strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "plan fuzz.json: ") {
				t.Fatalf("error %q with plan %v", err, p)
			}
			return
		}
		for _, s := range p.Shards {
			for _, k := range s.Keys {
				if p.ShardOf(k) != s.Shard {
					t.Fatalf("key %q listed on %d, ShardOf says %d", k, s.Shard, p.ShardOf(k))
				}
			}
		}
		if s := p.ShardOf("never/listed\x00"); !p.Planned("never/listed\x00") && (s < 1 || s > len(p.Shards)) {
			t.Fatalf("hash shard %d of %d", s, len(p.Shards))
		}
	})
}
