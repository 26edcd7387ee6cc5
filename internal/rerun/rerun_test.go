package rerun

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/record"
)

func TestFilesNames(t *testing.T) {
	f := Files{Root: "/repo", StateKey: StateKey{Queue: "mgpu", Arch: "gfx950", Level: "3"}}
	for _, c := range []struct{ got, want string }{
		{f.Failed(), "/repo/ci-rerun/mgpu/failed.gfx950.l3.tsv"},
		{f.TestsDir(), "/repo/ci-rerun/mgpu/tests"},
		{f.Tests(record.ItemID{Label: "torch", Tag: "test_numerics.ck"}), "/repo/ci-rerun/mgpu/tests/torch.test_numerics.ck.txt"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	// A hostile tag never leaves the tests folder.
	if got := f.Tests(record.ItemID{Label: "torch", Tag: "../../../etc/passwd"}); filepath.Dir(got) != f.TestsDir() {
		t.Errorf("tests file of a tag with slashes is %q, outside %s", got, f.TestsDir())
	}
}

func TestReadFailed(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, text string
		want       []record.ItemID
		err        string
	}{
		{name: "TE's file", text: "torch\ttest_numerics.ck\ncore\t\njax\ttest_x.auto\n",
			want: []record.ItemID{{Label: "torch", Tag: "test_numerics.ck"}, {Label: "core", Tag: ""}, {Label: "jax", Tag: "test_x.auto"}}},
		{name: "empty: green run", text: "", want: nil},
		{name: "opaque without tab, CRLF, blank lines, a duplicate", text: "core\r\n\n  \ntorch\ta b\ntorch\ta b\n",
			want: []record.ItemID{{Label: "core", Tag: ""}, {Label: "torch", Tag: "a b"}}},
		{name: "escaped tab in a tag round-trips", text: string(logdir.FormatItems([]record.ItemID{{Label: "s", Tag: "a\tb\\c"}})),
			want: []record.ItemID{{Label: "s", Tag: "a\tb\\c"}}},
		{name: "no label", text: "torch\tx\n\ty\n", err: ":2: a line with no suite label"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_"))
			if err := os.WriteFile(p, []byte(c.text), 0o644); err != nil {
				t.Fatal(err)
			}
			got, data, err := ReadFailed(p)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), p+c.err) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("err %v, want one line with %q", err, p+c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Error(diff)
			}
			if string(data) != c.text {
				t.Errorf("bytes %q, want the file's %q", data, c.text)
			}
		})
	}
	if got, data, err := ReadFailed(filepath.Join(dir, "missing")); got != nil || data != nil || err != nil {
		t.Errorf("missing file: %v, %q, %v; want no list and no error", got, data, err)
	}
}

func TestWriteFailedEmptiesWhenGreen(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "ci-rerun", "sgpu", "failed.gfx942.l1.tsv")
	if err := WriteFile(root, p, logdir.FormatItems([]record.ItemID{{Label: "torch", Tag: "t1"}, {Label: "core", Tag: ""}})); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "torch\tt1\ncore\t\n" {
		t.Errorf("failed list %q", b)
	}
	if err := WriteFile(root, p, logdir.FormatItems(nil)); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(p); err != nil || fi.Size() != 0 {
		t.Errorf("a green run leaves %v (err %v), want an empty file", fi, err)
	}
}

func TestNarrow(t *testing.T) {
	queued := []record.ItemID{{Label: "torch", Tag: "a"}, {Label: "torch", Tag: "b"}, {Label: "core", Tag: ""}}
	for _, c := range []struct {
		name     string
		failed   []record.ItemID
		narrowed bool
		keep     []record.ItemID
		missing  []record.ItemID
	}{
		{name: "no list", failed: nil},
		{name: "two of three here", failed: []record.ItemID{{Label: "torch", Tag: "b"}, {Label: "core", Tag: ""}}, narrowed: true,
			keep: []record.ItemID{{Label: "torch", Tag: "b"}, {Label: "core", Tag: ""}}},
		{name: "one here, one gone", failed: []record.ItemID{{Label: "torch", Tag: "gone"}, {Label: "torch", Tag: "a"}}, narrowed: true,
			keep: []record.ItemID{{Label: "torch", Tag: "a"}}, missing: []record.ItemID{{Label: "torch", Tag: "gone"}}},
		{name: "none here: run everything", failed: []record.ItemID{{Label: "jax", Tag: "x"}},
			missing: []record.ItemID{{Label: "jax", Tag: "x"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := Narrow(c.failed, queued)
			if n.Narrowed() != c.narrowed || n.Failed != len(c.failed) {
				t.Errorf("narrowed %v of %d, want %v of %d", n.Narrowed(), n.Failed, c.narrowed, len(c.failed))
			}
			for _, k := range c.keep {
				if !n.Keep[k] {
					t.Errorf("%v not kept", k)
				}
			}
			if len(n.Keep) != len(c.keep) {
				t.Errorf("kept %v, want %v", n.Keep, c.keep)
			}
			if diff := cmp.Diff(c.missing, n.Missing); diff != "" {
				t.Errorf("missing: %s", diff)
			}
		})
	}
}
