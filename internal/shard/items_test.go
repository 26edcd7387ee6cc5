package shard_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/golden"
	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/schedule"
	"github.com/rocm/sgpu-queue/internal/shard"
	"github.com/rocm/sgpu-queue/internal/weights"
)

func TestParseItems(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []record.ItemID
	}{
		{"items.tsv", "torch\ttest_a.py\njax\ttest_b.auto\n", []record.ItemID{{Label: "torch", Tag: "test_a.py"}, {Label: "jax", Tag: "test_b.auto"}}},
		{"escaped tags come back whole", "s\ta\\tb\ns\tc\\\\d\ns\tx\\ny\n", []record.ItemID{{Label: "s", Tag: "a\tb"}, {Label: "s", Tag: `c\d`}, {Label: "s", Tag: "x\ny"}}},
		{"spaces, globs and brackets in tags", "s\tnot slow and [x]*?\n", []record.ItemID{{Label: "s", Tag: "not slow and [x]*?"}}},
		{"bare labels are opaque items, with or without the tab", "core\nexamples\t\n", []record.ItemID{{Label: "core", Tag: ""}, {Label: "examples", Tag: ""}}},
		{"BOM, CRLF, blank and comment lines, repeats once", "\xef\xbb\xbf# census\r\ns\ta\r\n\r\n   \ns\ta\n", []record.ItemID{{Label: "s", Tag: "a"}}},
		{"empty file", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := shard.ParseItems(strings.NewReader(tc.text), "items.tsv")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("items (-want +got):\n%s", diff)
			}
		})
	}
}

// The messages for bad item lists are pinned in testdata/items-errors.golden
// (go test -run TestParseItemsErrors -update rewrites it).
func TestParseItemsErrors(t *testing.T) {
	bad := []string{
		"s\ta\tb\n",
		"\ttag\n",
		"torch test_a.py\n",
		"ok\tx\ntorch/extra\tx\n",
		"a\x01b\tx\n",
		"ok\tx\n\ufeff\n",
		"t\u00e9st\tx\n",
		strings.Repeat("long label ", 20) + "\tx\n",
		"s\t" + strings.Repeat("x", 1<<20) + "\n",
	}
	var b strings.Builder
	for _, in := range bad {
		_, err := shard.ParseItems(strings.NewReader(in), "items.tsv")
		if err == nil {
			t.Errorf("ParseItems(%q): no error", in)
			continue
		}
		if len(in) > 80 {
			in = in[:40] + "…"
		}
		fmt.Fprintf(&b, "%q\n\t%v\n", in, err)
	}
	golden.Check(t, filepath.Join("testdata", "items-errors.golden"), []byte(b.String()), *update)
}

// TestItemsRoundTrip: what a run writes as queue/items.tsv reads back as the same
// items, hostile tags included.
func TestItemsRoundTrip(t *testing.T) {
	var rows []record.ItemID
	for _, r := range [][2]string{{"torch", "a b"}, {"torch", "tab\there"}, {"jax", `back\slash`}, {"jax", "cr\rlf\n"}, {"jax", "[*?]"}} {
		rows = append(rows, record.ItemID{Label: r[0], Tag: r[1]})
	}
	got, err := shard.ParseItems(bytes.NewReader(logdir.FormatItems(rows)), "items.tsv")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rows, got); diff != "" {
		t.Errorf("items (-written +read):\n%s", diff)
	}
}

// suites reads "label mode" lines as a config (the real parser, mode options
// included).
func suites(t *testing.T, text string) []config.Suite {
	t.Helper()
	var conf strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		f := strings.Fields(line)
		conf.WriteString(f[0] + " " + f[0] + ".log " + f[1] + " ci/x.sh\n")
	}
	out, err := config.Parse(strings.NewReader(conf.String()), "ci.conf")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestItems(t *testing.T) {
	ss := suites(t, "examples opaque\ntorch list\nmgpu list,gpus=2\njax-mgpu list,gpus=all\ncore opaque,gpus=4")
	keys := []record.ItemID{
		{Label: "torch", Tag: "b"}, {Label: "gone", Tag: "x"}, {Label: "mgpu", Tag: "d"}, {Label: "torch", Tag: "a"}, {Label: "examples", Tag: "tagged"}, {Label: "torch", Tag: ""},
		{Label: "jax-mgpu", Tag: "e"}, {Label: "gone", Tag: "y"}, {Label: "other", Tag: ""},
	}
	got, warns := shard.Items(ss, keys, 8, nil)
	want := []schedule.Item{
		{ItemID: record.ItemID{Label: "examples"}, Seq: 0, GPUs: 1},
		{ItemID: record.ItemID{Label: "torch", Tag: "b"}, Seq: 1, GPUs: 1},
		{ItemID: record.ItemID{Label: "torch", Tag: "a"}, Seq: 2, GPUs: 1},
		{ItemID: record.ItemID{Label: "mgpu", Tag: "d"}, Seq: 3, GPUs: 2},
		{ItemID: record.ItemID{Label: "jax-mgpu", Tag: "e"}, Seq: 4, GPUs: 8},
		{ItemID: record.ItemID{Label: "core"}, Seq: 5, GPUs: 4},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("items (-want +got):\n%s", diff)
	}
	wantWarns := []string{
		`suite "examples" is opaque (one whole item) but the list has 1 item(s) of it with a tag; they are left out`,
		`suite "torch" expands into items but the list has its bare label (an opaque item's key); it is left out`,
		`3 item(s) of suites not in the config are left out: gone, other`,
	}
	if diff := cmp.Diff(wantWarns, warns); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}

func TestTableKeys(t *testing.T) {
	tab, _ := weights.Parse(strings.NewReader("torch/a 5\ncore 9\njax/b 5\n"), "t")
	want := []record.ItemID{{Label: "core", Tag: ""}, {Label: "jax", Tag: "b"}, {Label: "torch", Tag: "a"}}
	if diff := cmp.Diff(want, shard.TableKeys(tab)); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
}

func FuzzParseItems(f *testing.F) {
	for _, s := range []string{"torch\ttest_a.py\njax\ttest_b\n", "core\n", "s\ta\\tb\r\n# x\n", "\ttag\n", "a\tb\tc\n", "a b\n", "\xef\xbb\xbf\n\n", "s\t\\\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := shard.ParseItems(bytes.NewReader(data), "items.tsv")
		if err != nil {
			if got != nil || strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "items.tsv") {
				t.Fatalf("error %q with items %v", err, got)
			}
			return
		}
		seen := map[record.ItemID]bool{}
		for _, k := range got {
			if k.Label == "" || strings.ContainsAny(k.Label, "\t\n /") || seen[k] {
				t.Fatalf("item %+v", k)
			}
			seen[k] = true
		}
		// What a run would write back reads the same.
		b := logdir.FormatItems(got)
		again, err := shard.ParseItems(bytes.NewReader(b), "items.tsv")
		if err != nil {
			t.Fatalf("re-reading %q: %v", b, err)
		}
		for i := range got {
			if i >= len(again) || again[i] != got[i] {
				t.Fatalf("round trip: %+v became %+v", got, again)
			}
		}
	})
}
