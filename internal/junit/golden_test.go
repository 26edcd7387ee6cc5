package junit

import (
	"bytes"
	"context"
	"flag"
	"github.com/rocm/sgpu-queue/internal/golden"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.xml from the current output")

// mixedItems is a TE-like suite run: every tool's format, and every way an
// item can end. Log paths are relative to the package so the output is stable.
func mixedItems() []Item {
	log := func(tag string) string { return "testdata/mixed-logs/te." + tag + ".log" }
	return []Item{
		{Tag: "test_numerics.ck.amax+triton", GPU: "0", Seconds: 52.4, Finished: true, RC: 1, Log: log("test_numerics.ck.amax+triton")},
		{Tag: "fused_attn/test_fused_attn.ck", GPU: "1", Seconds: 9.3, Finished: true, RC: 1, Log: log("fused_attn.test_fused_attn.ck")},
		{Tag: "cpp_operator", GPU: "2", Seconds: 61, Finished: true, RC: 8, Log: log("cpp_operator")},
		{Tag: "hipkit", GPU: "3", Seconds: 4.1, Finished: true, RC: 1, Log: log("hipkit")},
		{Tag: "test_gemm.hipblaslt", GPU: "0", Seconds: 1800.2, Finished: true, RC: 124, Note: "timed out", Incomplete: true, Log: log("test_gemm.hipblaslt")},
		{Tag: "test_sanity", GPU: "1", Seconds: 2.2, Finished: true, RC: 1, Log: log("test_sanity")},
		{Tag: "test_cast.mxfp8", GPU: "2", Seconds: 23.9, Finished: true, RC: 134, Log: log("test_cast.mxfp8")},
		{Tag: "test_fused_rope", GPU: "3", Seconds: 14.7, Finished: true, RC: 139, Log: log("test_fused_rope")},
		{Tag: "test_attention.bshd", GPU: "0", Seconds: 1800, Finished: true, RC: 124, Note: "timed out", Log: log("test_attention.bshd")},
		{Tag: "test_permutation", GPU: "1", Seconds: 311.5, Note: "cancelled", Log: log("test_permutation")},
		{Tag: "test_float8tensor", GPU: "2", Seconds: 40, Finished: true, RC: 0, Log: log("test_float8tensor")},
		{Tag: "test_jit.cutoff", GPU: "3", Seconds: 600, Finished: true, RC: 137, Log: log("test_jit.cutoff")},
		{Tag: "../../outside", GPU: "0", Seconds: 1, Finished: true, RC: 2},
	}
}

// copyMixed copies testdata/mixed to dir; stale.xml gets an mtime before since.
func copyMixed(t testing.TB, dir string, since time.Time) {
	t.Helper()
	err := filepath.WalkDir("testdata/mixed", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel("testdata/mixed", p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return err
		}
		mt := since.Add(time.Second)
		if filepath.Base(rel) == "stale.xml" {
			mt = since.Add(-24 * time.Hour)
		}
		return os.Chtimes(dst, mt, mt)
	})
	if err != nil {
		t.Fatal(err)
	}
	// Something the item with the hostile tag must never read.
	os.WriteFile(filepath.Join(dir, "..", "..", "outside.xml"), []byte(failXML), 0o644)
}

func TestGoldenMixed(t *testing.T) {
	since := time.Date(2024, 6, 3, 14, 0, 0, 0, time.UTC)
	dir := filepath.Join(t.TempDir(), "junit", "te")
	copyMixed(t, dir, since)

	d, err := Merge(context.Background(), "te", dir, "", mixedItems(), since)
	if err != nil {
		t.Fatal(err)
	}
	data, back := encode(t, d)
	golden.Check(t, filepath.Join("testdata", "golden", "mixed.xml"), data, *update)

	// The figures a reviewer of the golden file would check by hand.
	st := d.Stats()
	wantStats := Stats{Tests: 37, Failures: 7, Errors: 9, Skipped: 6, Files: 8, Malformed: 1}
	st.Seconds = 0
	if st != wantStats {
		t.Errorf("Stats = %+v, want %+v", st, wantStats)
	}
	for _, name := range []string{"test_gemm.hipblaslt", "test_cast.mxfp8", "test_fused_rope", "test_attention.bshd", "test_permutation", "test_jit.cutoff", "../../outside", "test_sanity.xml"} {
		if _, c := findCase(back, name); c == nil || c.Error == nil {
			t.Errorf("no error case for %s", name)
		}
	}
	for _, absent := range []string{"test_float8tensor", "test_from_an_earlier_run", "test_bad"} {
		if bytes.Contains(data, []byte(absent)) {
			t.Errorf("output mentions %s", absent)
		}
	}
	validateXSD(t, data)
}

// BenchmarkMergeMixed measures a whole merge of the mixed fixture.
func BenchmarkMergeMixed(b *testing.B) {
	since := time.Date(2024, 6, 3, 14, 0, 0, 0, time.UTC)
	dir := filepath.Join(b.TempDir(), "junit", "te")
	copyMixed(b, dir, since)
	items := mixedItems()
	b.ReportAllocs()
	for b.Loop() {
		d, err := Merge(context.Background(), "te", dir, "", items, since)
		if err != nil {
			b.Fatal(err)
		}
		if err := d.Encode(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
