package weights

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

func TestPriors(t *testing.T) {
	own := table(
		"torch/test_numerics.ck", 200.0, "torch/test_numerics.flash", 220.0, "torch/test_sanity.ck", 150.0,
		"jax/test_layer.auto", 240.0, "core", 1000.0,
	)
	l1 := table( // the same machine's level 1: half the time of level 3
		"torch/test_numerics.ck", 100.0, "torch/test_numerics.flash", 110.0, "torch/test_sanity.ck", 75.0,
		"torch/test_new.ck", 50.0, "pt/test_a.x", 30.0, "pt/test_b.x", 50.0, "examples", 12.0,
	)
	few := table("torch/test_numerics.ck", 1.0, "core", 2.0, "solo/test_z.a", 7.0)
	tests := []struct {
		name   string
		others []Other
		key    string
		want   Prior // Kind NoPrior: none
	}{
		{"the same key in another table, scaled", []Other{{"l1", l1}}, "torch/test_new.ck",
			Prior{100, FromTable, "l1 ×2.00"}},
		{"an opaque suite too", []Other{{"l1", l1}}, "examples", Prior{24, FromTable, "l1 ×2.00"}},
		{"the first table that has it", []Other{{"few", few}, {"l1", l1}}, "torch/test_new.ck", Prior{100, FromTable, "l1 ×2.00"}},
		{"too few keys in common: unscaled", []Other{{"few", few}}, "solo/test_z.a",
			Prior{7, FromTable, "few (unscaled: 2 keys in common)"}},
		{"siblings in its own table", []Other{{"l1", l1}}, "torch/test_numerics.unfused",
			Prior{210, FromSibling, "median of its siblings torch/test_numerics.* (2)"}},
		{"siblings in another table", []Other{{"l1", l1}}, "torch/test_new.triton",
			Prior{100, FromSibling, "median of its siblings torch/test_new.* (1) in l1 ×2.00"}},
		{"its suite in its own table", []Other{{"l1", l1}}, "torch/test_other.ck", Prior{200, FromSuite, "median of its suite torch (3)"}},
		{"its suite in another table", []Other{{"l1", l1}}, "pt/test_c.y", Prior{80, FromSuite, "median of its suite pt (2) in l1 ×2.00"}},
		{"a tag that is its own stem has no siblings: its suite", nil, "torch/benchmark", Prior{200, FromSuite, "median of its suite torch (3)"}},
		{"nothing anywhere", []Other{{"l1", l1}}, "new/test_x.a", Prior{}},
		{"a key the table has needs none", []Other{{"l1", l1}}, "torch/test_sanity.ck", Prior{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Priors(own, tt.others, []string{tt.key})[tt.key]
			if tt.want.Kind == NoPrior {
				if ok {
					t.Errorf("prior %+v, want none", got)
				}
				return
			}
			if got != tt.want {
				t.Errorf("prior %+v, want %+v", got, tt.want)
			}
		})
	}
}

// Labels and tags with spaces and glob characters are only names: a sibling is
// the same stem to the letter, never a match of it as a pattern.
func TestPriorsHostileNames(t *testing.T) {
	own := table("my suite/test_[ab]*.x", 10.0, "my suite/test_[ab]*.y", 30.0, "my suite/test_ab.z", 500.0,
		"my suite/test_a?.q", 700.0, "my suite/test_ax.q", 900.0)
	got := Priors(own, nil, []string{"my suite/test_[ab]*.new", "my suite/test_a?.w", "my suite/t*"})
	want := map[string]Prior{
		"my suite/test_[ab]*.new": {20, FromSibling, "median of its siblings my suite/test_[ab]*.* (2)"},
		"my suite/test_a?.w":      {700, FromSibling, "median of its siblings my suite/test_a?.* (1)"},
		"my suite/t*":             {500, FromSuite, "median of its suite my suite (5)"},
	}
	if len(got) != len(want) {
		t.Errorf("priors %+v, want %+v", got, want)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%q: prior %+v, want %+v", k, got[k], w)
		}
	}
}

// A cold start: no table of its own, every estimate from another table, unscaled.
func TestPriorsColdStart(t *testing.T) {
	p := Priors(New(), []Other{{"prior", table("a/test_x.1", 10.0, "a/test_x.2", 30.0)}}, []string{"a/test_x.1", "a/test_x.3", "b"})
	want := map[string]Prior{
		"a/test_x.1": {10, FromTable, "prior (unscaled: 0 keys in common)"},
		"a/test_x.3": {20, FromSibling, "median of its siblings a/test_x.* (2) in prior (unscaled: 0 keys in common)"},
	}
	if len(p) != len(want) || p["a/test_x.1"] != want["a/test_x.1"] || p["a/test_x.3"] != want["a/test_x.3"] {
		t.Errorf("priors %+v, want %+v", p, want)
	}
}

func TestScale(t *testing.T) {
	tests := []struct {
		own, other *Table
		want       float64
		shared     int
	}{
		{table("a", 2.0, "b", 4.0, "c", 6.0, "d", 1.0), table("a", 1.0, "b", 2.0, "c", 3.0), 2, 3},
		{table("a", 2.0, "b", 4.0), table("a", 1.0, "b", 2.0), 1, 2},
		{table("a", 1000.0, "b", 1000.0, "c", 1000.0), table("a", 1.0, "b", 1.0, "c", 1.0), 20, 3},
		{table("a", 0.0, "b", 4.0, "c", 6.0, "e", 8.0), table("a", 1.0, "b", 2.0, "c", 3.0, "e", 4.0), 2, 3},
	}
	for i, tt := range tests {
		if got, n := Scale(tt.own, tt.other); got != tt.want || n != tt.shared {
			t.Errorf("%d: scale %g over %d, want %g over %d", i, got, n, tt.want, tt.shared)
		}
	}
}

func TestStem(t *testing.T) {
	for tag, want := range map[string]string{
		"test_numerics.ck.amax+triton":                       "test_numerics",
		"triton_kernels.test_norms.ck.autotune":              "triton_kernels.test_norms",
		"distributed.test_numerics_exact.ck":                 "distributed.test_numerics_exact",
		"test_distributed_layernorm_mlp.auto.no_triton_gemm": "test_distributed_layernorm_mlp",
		"mxfp4..ck":                    "mxfp4",
		"benchmark":                    "benchmark",
		"tests/test_x.py::test_y[a.b]": "tests/test_x.py",
		"test_sanity_import.ck.mgpu":   "test_sanity_import",
		"":                             "",
	} {
		if got := Stem(tag); got != want {
			t.Errorf("Stem(%q) = %q, want %q", tag, got, want)
		}
	}
}

// The pool's other sizes: a pool-sized item new on this size takes its weight on
// another, scaled by the pool-sized items both sizes know.
func TestPoolOthers(t *testing.T) {
	stored := table("m/a@g4", 400.0, "m/b@g4", 300.0, "m/c@g4", 200.0, "m/d@g4", 100.0, "m/a@g8", 200.0, "m/b@g8", 150.0,
		"m/c@g8", 100.0, "s/x", 5.0)
	p := SplitPool(stored, map[string]bool{"m/a": true, "m/b": true, "m/c": true, "m/d": true}, 8)
	others := p.PoolOthers()
	if len(others) != 1 || others[0].Name != "the weights on 4 GPUs" {
		t.Fatalf("others %+v", others)
	}
	got := Priors(p.View, others, []string{"m/d"})["m/d"]
	if got != (Prior{50, FromTable, "the weights on 4 GPUs ×0.50"}) {
		t.Errorf("prior %+v", got)
	}
}

// The other tables under ci-weights/, closest first; the run's own, a directory,
// a FIFO (never blocked on), names of no table and a table of garbage (another
// level's: its corrupt lines are its own run's to warn of) are passed over.
func TestOtherTables(t *testing.T) {
	dir := t.TempDir()
	cw := filepath.Join(dir, "ci-weights")
	if err := os.Mkdir(cw, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(cw, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"test_weights.gfx942.l3.txt", "test_weights.gfx942.l1.txt", "test_weights.gfx950.l3.txt",
		"test_weights.gfx950.l1.txt", "test_weights.sgpu.gfx942.l3.g8.txt", "test_weights.mgpu.gfx942.l3.g4.txt", "notes.txt",
		"test_weights.gfx942.l3.txt.bak"} {
		write(n, "a/b 1\n")
	}
	write("test_weights.empty.l3.txt", "# nothing\n")
	write("test_weights.gfx942.l7.txt", "\x00\x01\xff garbage\nno number here\na/b -3\na/c NaN\n"+strings.Repeat("x", 70<<10)+" 1\n")
	if err := os.Mkdir(filepath.Join(cw, "test_weights.dir.l3.txt"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(cw, "test_weights.fifo.l3.txt"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("test_weights.gfx950.l1.txt", filepath.Join(cw, "test_weights.link.l2.txt")); err != nil {
		t.Fatal(err)
	}
	others, warns := OtherTables(dir, "gfx942", "3", []string{filepath.Join(cw, ".", "test_weights.gfx942.l3.txt")})
	var names []string
	for _, o := range others {
		names = append(names, o.Name)
	}
	want := []string{"test_weights.mgpu.gfx942.l3.g4.txt", "test_weights.sgpu.gfx942.l3.g8.txt", "test_weights.gfx942.l1.txt",
		"test_weights.gfx950.l3.txt", "test_weights.gfx950.l1.txt", "test_weights.link.l2.txt"}
	if !slices.Equal(names, want) {
		t.Errorf("tables %q, want %q", names, want)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "test_weights.fifo.l3.txt not used for priors") {
		t.Errorf("warnings %q, want one for the FIFO", warns)
	}
	if o, w := OtherTables(t.TempDir(), "gfx942", "3", nil); o != nil || w != nil {
		t.Errorf("no ci-weights: %v %v", o, w)
	}
}
