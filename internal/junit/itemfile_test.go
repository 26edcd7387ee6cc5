package junit

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

func TestItemFile(t *testing.T) {
	hashed := func(tag string) string { return logdir.SafeTag(tag) + ".xml" }
	long := strings.Repeat("x", maxPlainComponent+1)
	tests := []struct {
		tag   string
		named bool
		want  string // "" = no file
	}{
		// List items: the script writes <tag><suffix>, cleaned; outside: none.
		{"test_gemm.ck", false, "test_gemm.ck.xml"},
		{"fused_attn/test_x.ck", false, "fused_attn/test_x.ck.xml"},
		{"a//b", false, "a/b.xml"},
		{"../evil", false, ""},
		{"/abs", false, ""},
		{"", false, ""},
		{"", true, ""},
		// Adapter items: a plain path is itself, in its folder.
		{"tests/a/test_x.py", true, "tests/a/test_x.py.xml"},
		{"tests/dir with space/test_with space.py", true, "tests/dir with space/test_with space.py.xml"},
		{"OperatorTest/CastTestSuite.TestCast", true, "OperatorTest/CastTestSuite.TestCast.xml"},
		{"core#2", true, hashed("core#2")},
		// Anything else is a flat hashed name in the suite's folder.
		{`Weird.Name(1)|[x]*?+$^\`, true, hashed(`Weird.Name(1)|[x]*?+$^\`)},
		{`back\slash`, true, hashed(`back\slash`)},
		{"tests/test_x.py::test_a[1]", true, hashed("tests/test_x.py::test_a[1]")},
		{"tests/../x.py", true, hashed("tests/../x.py")},
		{"..", true, "...xml"},
		{"a//b", true, hashed("a//b")},
		{"/abs", true, hashed("/abs")},
		{"a~1", true, hashed("a~1")},
		{"line\nbreak", true, hashed("line\nbreak")},
		{"tests/" + long + ".py", true, hashed("tests/" + long + ".py")},
		// A folder named like another item's file (tag "a" writes a.xml) or sidecar.
		{"a.xml/b", true, hashed("a.xml/b")},
		{"a.xml.partial/b", true, hashed("a.xml.partial/b")},
		{"x.xml", true, "x.xml.xml"},
	}
	for _, tt := range tests {
		got, ok := ItemFile(tt.tag, ".xml", tt.named)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("ItemFile(%q, named=%v) = %q, %v; want %q", tt.tag, tt.named, got, ok, tt.want)
		}
		if ok && tt.named && (strings.HasPrefix(got, "/") || strings.Contains("/"+got+"/", "/../") || strings.ContainsAny(got, "\\:?*\"<>|\n")) {
			t.Errorf("ItemFile(%q) = %q: not a safe relative name", tt.tag, got)
		}
	}
	if got, _ := ItemFile("a", "", true); got != "a.xml" {
		t.Errorf("empty suffix: %q, want the default .xml", got)
	}
}

// Two adapter tags never share a file, and one's file is never a folder of the
// other's: a plain tag never holds '~', a hashed name always does and is flat, and a
// plain tag's folders never end like a file.
func FuzzItemFileInjective(f *testing.F) {
	for _, s := range [][2]string{{"a", "a~x"}, {"tests/x.py", `tests\x.py`}, {"..", "."}, {"a b", "a_b"}, {"x::y", "x__y"}} {
		f.Add(s[0], s[1])
	}
	f.Add("a", "a.xml/b")
	f.Fuzz(func(t *testing.T, a, b string) {
		if a == b || a == "" || b == "" {
			return
		}
		fa, _ := ItemFile(a, ".xml", true)
		fb, _ := ItemFile(b, ".xml", true)
		if fa == fb {
			t.Errorf("tags %q and %q share the JUnit file %q", a, b, fa)
		}
		// Neither file (nor its .partial) is a folder the other needs.
		for _, p := range [][2]string{{fa, fb}, {fb, fa}} {
			for _, f := range []string{p[0], p[0] + ".partial"} {
				if strings.HasPrefix(p[1], f+"/") {
					t.Errorf("tags %q and %q: %q is a folder of %q", a, b, f, p[1])
				}
			}
		}
	})
}

// The merge finds an adapter item's XML where ItemFile put it, and does not give a
// list item's file to an adapter item that would have another name.
func TestMergeFindsNamedFiles(t *testing.T) {
	since := time.Date(2024, 6, 3, 14, 0, 0, 0, time.UTC)
	back := `Weird\Name`
	file := func() *fstest.MapFile {
		return &fstest.MapFile{Data: []byte(failXML), Mode: 0o644, ModTime: since.Add(time.Minute)}
	}
	hashedName, _ := ItemFile(back, "", true)
	fsys := fstest.MapFS{
		"tests/a/test_x.py.xml": file(),
		hashedName:              file(),
		// What CMake would have made of <dir>/Weird\Name.xml: not the item's.
		"Weird/Name.xml": file(),
	}
	items := []verdict.Item{
		{ItemID: record.ItemID{Tag: "tests/a/test_x.py"}, Result: record.Result{RC: 1, Failed: true}, Finished: true},
		{ItemID: record.ItemID{Tag: back}, Result: record.Result{RC: 8, Failed: true}, Finished: true},
	}
	d, err := merge(context.Background(), "s", fsys, "", itemsOf(verdict.Suite{Items: items}, Source{Named: true}), since, defaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := d.Encode(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, w := range []string{
		`<property name="sgpu.source" value="tests/a/test_x.py.xml">`,
		`<property name="sgpu.source" value="` + hashedName + `">`,
	} {
		if !strings.Contains(out, w) {
			t.Errorf("merged output lacks %s", w)
		}
	}
	// The stray file is kept, but for the suite only: no item claims it.
	if strings.Count(out, `name="sgpu.item" value="Weird\Name"`) != 1 {
		t.Errorf("item %s should own exactly its own file:\n%s", back, out)
	}
	if st := d.Stats(); st.Files != 3 || st.Failures != 3 {
		t.Errorf("stats %+v, want 3 files with one failure each", st)
	}
}
