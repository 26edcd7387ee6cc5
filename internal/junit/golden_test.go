package junit

import (
	"bytes"
	"context"
	"flag"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rocm/sgpu-queue/internal/golden"
	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.xml from the current output")

// mixedItems is a TE-like suite run: every tool's format, and every way an
// item can end. Log paths are relative to the package so the output is stable.
func mixedItems() []verdict.Item {
	log := func(tag string) string { return "testdata/mixed-logs/te." + tag + ".log" }
	return []verdict.Item{
		{ItemID: record.ItemID{Tag: "test_numerics.ck.amax+triton"}, GPU: "0", Result: record.Result{Seconds: 52.4, RC: 1, Failed: true}, Finished: true, LogRel: log("test_numerics.ck.amax+triton"), Started: true},
		{ItemID: record.ItemID{Tag: "fused_attn/test_fused_attn.ck"}, GPU: "1", Result: record.Result{Seconds: 9.3, RC: 1, Failed: true}, Finished: true, LogRel: log("fused_attn.test_fused_attn.ck"), Started: true},
		{ItemID: record.ItemID{Tag: "cpp_operator"}, GPU: "2", Result: record.Result{Seconds: 61, RC: 8, Failed: true}, Finished: true, LogRel: log("cpp_operator"), Started: true},
		{ItemID: record.ItemID{Tag: "hipkit"}, GPU: "3", Result: record.Result{Seconds: 4.1, RC: 1, Failed: true}, Finished: true, LogRel: log("hipkit"), Started: true},
		{ItemID: record.ItemID{Tag: "test_gemm.hipblaslt"}, GPU: "0", Result: record.Result{Seconds: 1800.2, RC: 124, Outcome: outcome.Timeout, Failed: true}, Finished: true, LogRel: log("test_gemm.hipblaslt"), Started: true, Note: "timed out"},
		{ItemID: record.ItemID{Tag: "test_sanity"}, GPU: "1", Result: record.Result{Seconds: 2.2, RC: 1, Failed: true}, Finished: true, LogRel: log("test_sanity"), Started: true},
		{ItemID: record.ItemID{Tag: "test_cast.mxfp8"}, GPU: "2", Result: record.Result{Seconds: 23.9, RC: 134, Failed: true}, Finished: true, LogRel: log("test_cast.mxfp8"), Started: true},
		{ItemID: record.ItemID{Tag: "test_fused_rope"}, GPU: "3", Result: record.Result{Seconds: 14.7, RC: 139, Failed: true}, Finished: true, LogRel: log("test_fused_rope"), Started: true},
		{ItemID: record.ItemID{Tag: "test_attention.bshd"}, GPU: "0", Result: record.Result{Seconds: 1800, RC: 124, Failed: true}, Finished: true, LogRel: log("test_attention.bshd"), Started: true, Note: "timed out"},
		{ItemID: record.ItemID{Tag: "test_permutation"}, GPU: "1", Result: record.Result{Seconds: 311.5, Failed: true}, LogRel: log("test_permutation"), Started: true, Note: "cancelled"},
		{ItemID: record.ItemID{Tag: "test_float8tensor"}, GPU: "2", Result: record.Result{Seconds: 40, RC: 0}, Finished: true, LogRel: log("test_float8tensor"), Started: true},
		{ItemID: record.ItemID{Tag: "test_jit.cutoff"}, GPU: "3", Result: record.Result{Seconds: 600, RC: 137, Failed: true}, Finished: true, LogRel: log("test_jit.cutoff"), Started: true},
		{ItemID: record.ItemID{Tag: "../../outside"}, GPU: "0", Result: record.Result{Seconds: 1, RC: 2, Failed: true},
			Finished: true},
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

	d, err := Merge(context.Background(), verdict.Suite{Label: "te", Items: mixedItems()}, Source{Dir: dir}, since)
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
		d, err := Merge(context.Background(), verdict.Suite{Label: "te", Items: items}, Source{Dir: dir}, since)
		if err != nil {
			b.Fatal(err)
		}
		if err := d.Encode(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
