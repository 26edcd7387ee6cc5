package weights

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/record"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		want  map[string]float64
		warns []string
	}{
		{name: "te format", in: "core 1251.0\ntorch/triton_kernels.test_norms.ck.autotune 675.0\ntorch/mxfp4..ck 241\n",
			want: map[string]float64{"core": 1251, "torch/triton_kernels.test_norms.ck.autotune": 675, "torch/mxfp4..ck": 241}},
		{name: "comments blanks crlf tabs", in: "# learned\n\njax/test_layer.auto\t239.5\r\n  torch/a   1.25  \n",
			want: map[string]float64{"jax/test_layer.auto": 239.5, "torch/a": 1.25}},
		{name: "key with spaces keeps them", in: "torch/a b  c 3\n", want: map[string]float64{"torch/a b  c": 3}},
		{name: "corrupt lines", in: "a 1\nb NaN\nc -3\nd 1e300\ne\nf abc\ng +Inf\nh 2\n",
			want:  map[string]float64{"a": 1, "h": 2},
			warns: []string{"t:2: skipped corrupt weight line (\"NaN\" is not a finite number)", "t:3: skipped corrupt weight line (negative seconds -3)", "t:4:", "t:5:", "t:6:", "t:7:"}},
		{name: "duplicate key later wins", in: "a 1\na 5\n", want: map[string]float64{"a": 5}, warns: []string{`t:2: duplicate key "a" (also at line 1)`}},
		{name: "binary garbage", in: "a 1\n\x00\x01\xff\xfe 7\nb 2\n", want: map[string]float64{"a": 1, "b": 2}, warns: []string{"t:2: skipped corrupt weight line (not text)"}},
		{name: "empty", in: "", want: map[string]float64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab, warns := Parse(strings.NewReader(tt.in), "t")
			if tab.Len() != len(tt.want) {
				t.Errorf("len = %d, want %d (%v)", tab.Len(), len(tt.want), tab.Keys())
			}
			for k, v := range tt.want {
				if got, ok := tab.Get(k); !ok || got != v {
					t.Errorf("%q = %v,%v want %v", k, got, ok, v)
				}
			}
			if len(warns) != len(tt.warns) {
				t.Fatalf("warnings %q, want %d", warns, len(tt.warns))
			}
			for i, w := range tt.warns {
				if !strings.HasPrefix(warns[i], w) {
					t.Errorf("warning %d = %q, want prefix %q", i, warns[i], w)
				}
			}
		})
	}
}

func TestParseHugeLine(t *testing.T) {
	in := "a 1\n" + strings.Repeat("k", 200<<10) + " 5\nb 2\n"
	tab, warns := Parse(strings.NewReader(in), "t")
	if tab.Len() != 2 || len(warns) != 1 || !strings.HasPrefix(warns[0], "t:2:") {
		t.Fatalf("keys %v warns %q", tab.Keys(), warns)
	}
}

// TE's measured table (testdata/simulate/te-gfx950-l3.weights, committed as TE
// wrote it) loads unchanged and writes back to the same lines.
func TestTETableRoundTrip(t *testing.T) {
	data, err := os.ReadFile("../../testdata/simulate/te-gfx950-l3.weights")
	if err != nil {
		t.Fatal(err)
	}
	tab, warns := Parse(bytes.NewReader(data), "te")
	if len(warns) != 0 || tab.Len() != 80 {
		t.Fatalf("%d keys, warnings %q", tab.Len(), warns)
	}
	total := 0.0
	for _, k := range tab.Keys() {
		v, _ := tab.Get(k)
		total += v
	}
	if total != 10497 {
		t.Errorf("total = %v, want 10497", total)
	}
	// Written back, it holds the same lines, largest first (TE orders ties its own way).
	var out bytes.Buffer
	tab.Format(&out)
	got, want := strings.Split(out.String(), "\n"), strings.Split(string(data), "\n")
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("format differs from the TE file:\n%s", out.String()[:200])
	}
	if !strings.HasPrefix(out.String(), "core 1251.0\ntorch/triton_kernels.test_norms.ck.autotune 675.0\n") {
		t.Errorf("not largest first: %s", out.String()[:100])
	}
}

func TestUpdate(t *testing.T) {
	tests := []struct {
		name    string
		old     float64
		had     bool
		m       Measurement
		want    float64
		changed bool
	}{
		{"new key takes measurement", 0, false, Measurement{Seconds: 42}, 42, true},
		{"slower moves half way", 100, true, Measurement{Seconds: 200}, 150, true},
		{"faster moves a tenth", 100, true, Measurement{Seconds: 0}, 90, true},
		{"equal stays", 100, true, Measurement{Seconds: 100}, 100, false},
		{"at-least never creates", 0, false, Measurement{Seconds: 500, AtLeast: true}, 0, false},
		{"at-least never lowers", 100, true, Measurement{Seconds: 30, AtLeast: true}, 100, false},
		{"at-least raises to the cut", 100, true, Measurement{Seconds: 300, AtLeast: true}, 300, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, changed := Update(tt.old, tt.had, tt.m)
			if got != tt.want || changed != tt.changed {
				t.Errorf("Update = %v,%v want %v,%v", got, changed, tt.want, tt.changed)
			}
		})
	}
}

func TestLearn(t *testing.T) {
	tab := New()
	tab.Set("a", 100)
	tab.Set("b", 10)
	changes := Learn(tab, []Measurement{
		{Key: "b", Seconds: 20}, {Key: "a", Seconds: 100}, {Key: "new", Seconds: 5},
		{Key: "cut", Seconds: 9, AtLeast: true}, {Key: "b", Seconds: 20},
	})
	want := []Change{
		{Key: "a", Old: 100, HadOld: true, New: 100, Kept: true},
		{Key: "b", Old: 10, HadOld: true, New: 17.5},
		{Key: "cut", Kept: true},
		{Key: "new", New: 5},
	}
	if len(changes) != len(want) {
		t.Fatalf("changes %+v", changes)
	}
	for i := range want {
		if changes[i] != want[i] {
			t.Errorf("change %d = %+v, want %+v", i, changes[i], want[i])
		}
	}
	if _, ok := tab.Get("cut"); ok {
		t.Error("an at-least row created a weight")
	}
}

func TestPrune(t *testing.T) {
	mk := func() *Table {
		tab := New()
		for _, k := range []string{"torch/a", "torch/b", "torch/gone", "jax/x", "jax/gone", "core", "other/z"} {
			tab.Set(k, 1)
		}
		return tab
	}
	tab := mk()
	census := Census{
		"torch": {"torch/a": true, "torch/b": true},
		"jax":   nil, // census failed: prunes nothing
		"core":  {},  // a list suite whose census lists nothing named core
	}
	pruned := Prune(tab, map[string]bool{"torch/b": true, "core": true}, census)
	if strings.Join(pruned, ",") != "torch/gone" {
		t.Errorf("pruned %v, want [torch/gone]", pruned)
	}
	for _, k := range []string{"torch/a", "torch/b", "jax/x", "jax/gone", "core", "other/z"} {
		if _, ok := tab.Get(k); !ok {
			t.Errorf("%s was pruned", k)
		}
	}
}

// What one attempt of each outcome does to a weight of 100 s and to an unknown key:
// ok and failed teach their duration; the stopped ones only raise; no-run nothing.
func TestLearnPerOutcome(t *testing.T) {
	tests := []struct {
		o              outcome.Outcome
		secs           float64
		known, unknown float64 // weight after, from 100 s / from none (0: none)
	}{
		{outcome.OK, 50, 95, 50},
		{outcome.OK, 200, 150, 200},
		{outcome.Failed, 50, 95, 50},
		{outcome.Timeout, 300, 300, 0},
		{outcome.Timeout, 50, 100, 0},
		{outcome.Cancelled, 300, 300, 0},
		{outcome.CutOff, 50, 100, 0},
		{outcome.CutOff, 120, 120, 0},
		{outcome.Unavailable, 10, 100, 0},
		{outcome.NoRun, 0.1, 100, 0},
		{outcome.NoRun, 900, 100, 0},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s %gs", tt.o, tt.secs), func(t *testing.T) {
			tab := New()
			tab.Set("known", 100)
			var ms []Measurement
			for _, k := range []string{"known", "new"} {
				if m, ok := Measure(k, tt.secs, tt.o); ok {
					ms = append(ms, m)
				} else if tt.o.Teaches() {
					t.Fatalf("Measure refused a %s", tt.o)
				}
			}
			Learn(tab, ms)
			if got, _ := tab.Get("known"); got != tt.known {
				t.Errorf("known: %v, want %v", got, tt.known)
			}
			got, had := tab.Get("new")
			if (tt.unknown == 0) == had || got != tt.unknown {
				t.Errorf("new: %v (%v), want %v", got, had, tt.unknown)
			}
		})
	}
}

// An opaque suite's census is its bare label: a suite that was a list suite before
// loses its old per-tag keys, its own key stays.
func TestPruneOpaqueCensus(t *testing.T) {
	tab := New()
	for _, k := range []string{"examples", "examples/old.a", "examples/old.b", "torch/a"} {
		tab.Set(k, 1)
	}
	pruned := Prune(tab, map[string]bool{"examples": true, "torch/a": true},
		Census{"examples": {"examples": true}, "torch": {"torch/a": true}})
	if strings.Join(pruned, ",") != "examples/old.a,examples/old.b" {
		t.Errorf("pruned %v", pruned)
	}
	if strings.Join(tab.Keys(), ",") != "examples,torch/a" && strings.Join(tab.Keys(), ",") != "torch/a,examples" {
		t.Errorf("left %v", tab.Keys())
	}
}

func TestFileStore(t *testing.T) {
	dir := t.TempDir()
	f := File{Path: filepath.Join(dir, "sub", "w.txt")}
	tab, warns, err := f.Load(context.Background())
	if err != nil || len(warns) != 0 || tab.Len() != 0 {
		t.Fatalf("missing file: %v %v %d", err, warns, tab.Len())
	}
	tab.Set("torch/b", 2.25)
	tab.Set("torch/a", 10)
	if err := f.Save(context.Background(), tab); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(f.Path)
	if string(data) != "torch/a 10.0\ntorch/b 2.2\n" && string(data) != "torch/a 10.0\ntorch/b 2.3\n" {
		t.Errorf("file = %q", data)
	}
	entries, _ := os.ReadDir(filepath.Dir(f.Path))
	if len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
}

// A table that is there but cannot be read is an empty table and an
// *UnreadableError, and Save never writes over it: its keys are kept.
func TestFileStoreUnreadable(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name string
		make func(path string)
	}{
		{"mode 000", func(p string) { os.WriteFile(p, []byte("torch/a 10.0\n"), 0o000) }},
		{"a directory", func(p string) { os.Mkdir(p, 0o755) }},
		{"a symlink loop", func(p string) { os.Symlink(filepath.Base(p), p) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "mode 000" && os.Geteuid() == 0 {
				t.Skip("root reads a file of mode 000")
			}
			f := File{Path: filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_"))}
			tt.make(f.Path)
			before, _ := os.Lstat(f.Path)
			tab, warns, err := f.Load(context.Background())
			var ue *UnreadableError
			if !errors.As(err, &ue) || ue.Path != f.Path || tab == nil || tab.Len() != 0 || len(warns) != 0 {
				t.Fatalf("Load: %v (%T), %q, %v", err, err, warns, tab)
			}
			tab.Set("torch/b", 2)
			if err := f.Save(context.Background(), tab); !errors.As(err, &ue) {
				t.Errorf("Save over an unreadable table: %v, want an *UnreadableError", err)
			}
			after, err := os.Lstat(f.Path)
			if err != nil || after.Mode() != before.Mode() || after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime()) {
				t.Errorf("the unreadable table changed: %v → %v (%v)", before, after, err)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add("core 1251.0\ntorch/a 2\n# c\n")
	f.Add("a NaN\nb -1\nc 1e999\n\x00 1\n")
	f.Fuzz(func(t *testing.T, in string) {
		tab, _ := Parse(strings.NewReader(in), "fuzz")
		for _, k := range tab.Keys() {
			v, _ := tab.Get(k)
			if math.IsNaN(v) || v < 0 || v > MaxSeconds || k == "" {
				t.Fatalf("accepted %q = %v", k, v)
			}
		}
		// What we write, we read back the same (one decimal), key for key.
		var b bytes.Buffer
		tab.Format(&b)
		back, warns := Parse(&b, "back")
		if len(warns) != 0 || back.Len() != tab.Len() {
			t.Fatalf("round trip: %d → %d keys, %q", tab.Len(), back.Len(), warns)
		}
		for _, k := range tab.Keys() {
			if _, ok := back.Get(k); !ok {
				t.Fatalf("key %q lost in the round trip", k)
			}
		}
	})
}

// Every key an item can have (a label, and a tag as a listing prints it: trimmed,
// any bytes) is written so that the next run reads it back, through a real file.
func FuzzKeyRoundTrip(f *testing.F) {
	for _, tag := range []string{"test_numerics.ck.amax+triton", "a\rb", "bad\xffutf8", "esc\x1b[0m", `lit\x01`, `lit\x5C\x01`, `\\x7f`, "nul\x00", "é ü", "del\x7f", "tab\tin"} {
		f.Add("torch", tag)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, label, tag string) {
		if label == "" || strings.ContainsFunc(label, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-')
		}) {
			return // the config refuses such labels: letters, digits, '_' and '-' only (config.Load)
		}
		tag = strings.TrimSpace(tag)
		if tag == "" || strings.ContainsAny(tag, "\n") {
			return // a listing line cannot carry such a tag
		}
		key := record.ItemID{Label: label, Tag: tag}.Key()
		tab := New()
		tab.Set(key, 12.5)
		tab.Set("core", 3)
		store := File{Path: filepath.Join(dir, "w.txt")}
		if err := store.Save(context.Background(), tab); err != nil {
			t.Fatal(err)
		}
		back, warns, err := store.Load(context.Background())
		if err != nil || len(warns) != 0 {
			t.Fatalf("key %q: written, then %v %q", key, err, warns)
		}
		if v, ok := back.Get(key); !ok || v != 12.5 || back.Len() != 2 {
			t.Fatalf("key %q came back as %q", key, back.Keys())
		}
	})
}

func TestEscapeKey(t *testing.T) {
	tests := []struct{ key, file string }{
		{"torch/test_numerics.ck.amax+triton", "torch/test_numerics.ck.amax+triton"}, // TE's keys unchanged
		{"torch/a b\tc", "torch/a b\tc"},
		{"torch/é", "torch/é"},
		{"torch/a\rb", `torch/a\x0Db`},
		{"torch/\x1b[31mred", `torch/\x1B[31mred`},
		{"torch/\xff\xfe", `torch/\xFF\xFE`},
		{`torch/lit\x01`, `torch/lit\x5Cx01`}, // a literal escape stays literal
		{`torch/lit\x41`, `torch/lit\x41`},    // \x41 is no escape: it names 'A', which needs none
		{`torch/back\slash`, `torch/back\slash`},
	}
	for _, tt := range tests {
		if got := EscapeKey(tt.key); got != tt.file {
			t.Errorf("EscapeKey(%q) = %q, want %q", tt.key, got, tt.file)
		}
		if back := UnescapeKey(tt.file); back != tt.key {
			t.Errorf("UnescapeKey(%q) = %q, want %q", tt.file, back, tt.key)
		}
	}
}

// A table that is a symlink (a shared table, a table kept in another checkout) is
// updated through the link: the next load sees what was learned, the link is still
// a link, and the target keeps its mode.
func TestFileStoreSymlink(t *testing.T) {
	dir := t.TempDir()
	shared := filepath.Join(dir, "shared", "w.txt")
	os.MkdirAll(filepath.Dir(shared), 0o755)
	os.WriteFile(shared, []byte("torch/a 1.0\n"), 0o644)
	os.Chmod(shared, 0o664) // past the umask
	link := filepath.Join(dir, "ci-weights", "test_weights.gfx942.l1.txt")
	os.MkdirAll(filepath.Dir(link), 0o755)
	if err := os.Symlink("../shared/w.txt", link); err != nil {
		t.Fatal(err)
	}
	f := File{Path: link}
	tab, _, _ := f.Load(context.Background())
	Learn(tab, []Measurement{{Key: "torch/a", Seconds: 3}, {Key: "torch/\x1bnew", Seconds: 5}})
	if err := f.Save(context.Background(), tab); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the table is no longer a symlink: %v", err)
	}
	data, _ := os.ReadFile(shared)
	if string(data) != "torch/\\x1Bnew 5.0\ntorch/a 2.0\n" {
		t.Errorf("target holds %q", data)
	}
	if fi, _ := os.Stat(shared); fi.Mode().Perm() != 0o664 {
		t.Errorf("target mode %v, want 0664 kept", fi.Mode().Perm())
	}
	again, warns, _ := File{Path: link}.Load(context.Background())
	if v, _ := again.Get("torch/\x1bnew"); v != 5 || len(warns) != 0 {
		t.Errorf("reloaded %v %q", again.Keys(), warns)
	}
}

// The shard runs a merge learned from are kept in one comment line (TE's readers
// skip it), read back and written again unchanged; a table read back and written
// again is the same bytes even where weights that differ below a tenth tie as
// written; the oldest ids go beyond MaxLearned, and an id that cannot be read back
// is not kept.
func TestLearnedRoundTrip(t *testing.T) {
	tb := New()
	tb.Set("a/x", 0.63)
	tb.Set("a/b", 0.58) // 0.6 as written, like a/x: a/b comes first as written
	tb.Set("c", 2)
	tb.MarkLearned("0011", "bad id", "2233", "0011")
	var b bytes.Buffer
	if err := tb.Format(&b); err != nil {
		t.Fatal(err)
	}
	want := "# sgpu-queue learned from shard runs: 0011 2233\nc 2.0\na/b 0.6\na/x 0.6\n"
	if b.String() != want {
		t.Fatalf("Format:\n%s\nwant\n%s", b.String(), want)
	}
	back, warns := Parse(strings.NewReader(b.String()), "t")
	var again bytes.Buffer
	back.Clone().Format(&again)
	if len(warns) != 0 || again.String() != want || !back.Learned("2233") || back.Learned("bad id") || back.Learned("4455") {
		t.Errorf("read back: %q, warnings %q", again.String(), warns)
	}
	for i := range MaxLearned + 3 {
		back.MarkLearned(fmt.Sprintf("id%d", i))
	}
	if back.Learned("0011") || back.Learned("id2") || !back.Learned("id3") || !back.Learned(fmt.Sprintf("id%d", MaxLearned+2)) {
		t.Errorf("after %d more ids, the oldest are not the ones forgotten", MaxLearned+3)
	}
}
