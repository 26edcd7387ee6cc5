package tests

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rocm/sgpu-queue/internal/junit"
	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

// A test's place: the JUnit attributes, else its node id's file (with a line from
// a frame in it), else the last frame in the repository, else its item.
func TestWhere(t *testing.T) {
	roots := []string{"/__w/TE/TE/"}
	pytestBody := "    def test_x():\n>       assert a == b\nE       AssertionError\n\ntest_numerics.py:412: AssertionError"
	for _, c := range []struct {
		name   string
		t      Test
		exists func(string) bool
		want   Where
	}{
		{"JUnit file and line", Test{Case: junit.Case{File: "tests/jax/test_layer.py", Line: 88}, TestRef: record.TestRef{ID: "tests/jax/test_layer.py::t"}},
			nil, Where{"tests/jax/test_layer.py", 88, FromJUnit}},
		{"JUnit file under the root", Test{Case: junit.Case{File: "/__w/TE/TE/tests/jax/test_layer.py", Line: 88}},
			nil, Where{"tests/jax/test_layer.py", 88, FromJUnit}},
		{"JUnit file, a frame's line", Test{Case: junit.Case{File: "tests/pytorch/test_numerics.py", Body: pytestBody}},
			nil, Where{"tests/pytorch/test_numerics.py", 412, FromJUnit}},
		{"node id, a frame relative to its folder", Test{TestRef: record.TestRef{ID: "tests/pytorch/test_numerics.py::TestA::test_x[1]"}, Case: junit.Case{Body: pytestBody}},
			nil, Where{"tests/pytorch/test_numerics.py", 412, FromNodeID}},
		{"node id, no frame", Test{TestRef: record.TestRef{ID: "tests/pytorch/test_numerics.py::test_x[1]"}},
			nil, Where{"tests/pytorch/test_numerics.py", 0, FromNodeID}},
		{"gtest's frame", Test{TestRef: record.TestRef{ID: "core::Op/T.Test/3"}, Case: junit.Case{Body: "tests/cpp/operator/test_cast.cu:57: Failure\nValue of: x"}},
			nil, Where{"tests/cpp/operator/test_cast.cu", 57, FromTraceback}},
		{"the last frame in the repository", Test{TestRef: record.TestRef{ID: "x"}, Case: junit.Case{Body: "/__w/TE/TE/transformer_engine/a.py:3: in f\n" +
			"/usr/lib/python3/site-packages/torch/x.py:9: RuntimeError\nsite-packages/y.py:1: E"}},
			nil, Where{"transformer_engine/a.py", 3, FromTraceback}},
		{"a Python traceback's frame", Test{TestRef: record.TestRef{ID: "x"}, Case: junit.Case{Body: "Traceback (most recent call last):\n  File \"/__w/TE/TE/tests/jax/test_layer.py\", " +
			"line 88, in test_layer_fwd\n    out = layer(x)\n  File \"/usr/lib/python3/site-packages/jax/x.py\", line 9, in f\nE"}},
			nil, Where{"tests/jax/test_layer.py", 88, FromTraceback}},
		{"a frame outside the repository is none", Test{TestRef: record.TestRef{ID: "x"}, Case: junit.Case{Body: "/opt/rocm/x.py:3: E\n../up.py:4: E"}}, nil, Where{From: FromItem}},
		{"a file not in the repository is passed over", Test{TestRef: record.TestRef{ID: "test_numerics.py::t"},
			Case: junit.Case{File: "test_numerics.py", Line: 3, Body: "tests/cpp/a.cu:5: Failure"}}, func(p string) bool { return p == "tests/cpp/a.cu" },
			Where{"tests/cpp/a.cu", 5, FromTraceback}},
		{"nothing", Test{TestRef: record.TestRef{ID: "core::Op/T.Test/3"}}, nil, Where{From: FromItem}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.t.Where(roots, c.exists); got != c.want {
				t.Errorf("Where = %+v, want %+v", got, c.want)
			}
		})
	}
}

// writeRun writes a log dir whose run.json lists the merged files, each given as
// its XML, and more files of the log dir.
func writeRun(t *testing.T, merged map[string]string, more map[string]string, suites ...record.MetaSuite) *record.Run {
	t.Helper()
	dir := t.TempDir()
	l := logdir.Layout{Root: dir}
	m := &record.Meta{Tool: "sgpu-queue", Suites: suites}
	for label, x := range merged {
		more["junit/"+label+".xml"] = x
		m.JUnit = append(m.JUnit, "junit/"+label+".xml")
	}
	for rel, data := range more {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(l.QueueDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := l.WriteMeta(m); err != nil {
		t.Fatal(err)
	}
	return &record.Run{Dir: dir, Meta: *m}
}

const merged = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="torch" tests="7" failures="1" errors="3" time="1.000">
  <testsuite name="pytest" tests="4" failures="1" errors="1" skipped="1" time="1.000">
    <properties><property name="sgpu.item" value="test_numerics.ck"></property></properties>
    <testcase name="test_a[1]" classname="tests.pytorch.test_numerics" time="0.1"></testcase>
    <testcase name="test_b" classname="tests.pytorch.test_numerics.TestB" time="0.1" file="tests/pytorch/test_numerics.py"><failure message="AssertionError: x">tests/pytorch/test_numerics.py:3: AssertionError</failure></testcase>
    <testcase name="test_c" classname="tests.pytorch.test_numerics" time="0.1"><skipped></skipped></testcase>
    <testcase name="test_d" classname="tests.pytorch.test_numerics" time="0.1"><error message="boom"></error></testcase>
  </testsuite>
  <testsuite name="torch:test_gemm.ck.partial" tests="1" failures="0" errors="1" skipped="0" time="0.000">
    <properties><property name="sgpu.item" value="test_gemm.ck"></property></properties>
    <testcase name="test_hang[0]" classname="tests.pytorch.test_gemm" time="0.000" file="tests/pytorch/test_gemm.py"><error message="started and never finished" type="sgpu-queue.unfinished"></error></testcase>
  </testsuite>
  <testsuite name="torch:test_gemm.ck" tests="1" failures="0" errors="1" skipped="0" time="0.000">
    <properties><property name="sgpu.item" value="test_gemm.ck"></property></properties>
    <testcase name="test_gemm.ck" classname="sgpu-queue.torch" time="0.000"><error message="cut off" type="sgpu-queue.cut-off"></error></testcase>
  </testsuite>
  <testsuite name="pytest" tests="1" failures="0" errors="0" skipped="0" time="0.1">
    <properties><property name="sgpu.item" value="test_rope.ck"></property></properties>
    <testcase name="test_r" classname="tests.pytorch.test_rope" time="0.1"></testcase>
  </testsuite>
</testsuites>
`

// Read counts each suite's tests from its merged file, leaves out the cases
// sgpu-queue adds about an item, counts the test an item died in as errored and
// unfinished, and names as flaky a test that failed in an earlier attempt.
func TestRead(t *testing.T) {
	r := writeRun(t, map[string]string{"torch": merged}, map[string]string{
		"items/torch.test_rope.ck@attempt1.xml": `<testsuite><testcase name="test_r" classname="tests.pytorch.test_rope">` +
			`<failure message="flaky"/></testcase></testsuite>`,
	}, record.MetaSuite{Label: "torch", Mode: "list"})
	suites := []verdict.Suite{{Label: "torch", Items: []verdict.Item{
		{ItemID: record.ItemID{Label: "torch", Tag: "test_numerics.ck"}, Result: record.Result{Tries: 1}}, {ItemID: record.ItemID{Label: "torch", Tag: "test_gemm.ck"}, Result: record.Result{Tries: 1}},
		{ItemID: record.ItemID{Label: "torch", Tag: "test_rope.ck"}, Result: record.Result{Tries: 2, Flaky: true}},
	}}}
	res := Read(r, suites)
	want := record.TestCounts{Total: 6, Passed: 2, Failed: 1, Errored: 2, Skipped: 1, Flaky: 1, Unfinished: 1}
	if !res.Known || res.Counts != want || res.Suites["torch"] != want || res.Files["torch"] != "junit/torch.xml" {
		t.Fatalf("counts %+v, suites %+v, files %v; want %+v", res.Counts, res.Suites, res.Files, want)
	}
	var bad []string
	for _, b := range res.Bad {
		bad = append(bad, b.Item+" "+b.ID+" "+b.Result.String())
	}
	if diff := cmp.Diff([]string{
		"torch/test_gemm.ck tests/pytorch/test_gemm.py::test_hang[0] unfinished",
		"torch/test_numerics.ck tests/pytorch/test_numerics.py::TestB::test_b failed",
		"torch/test_numerics.ck tests.pytorch.test_numerics::test_d errored",
	}, bad); diff != "" {
		t.Errorf("bad tests: %s", diff)
	}
	if len(res.Flaky) != 1 || res.Flaky[0].ID != "tests.pytorch.test_rope::test_r" || res.Flaky[0].Item != "torch/test_rope.ck" {
		t.Errorf("flaky %+v", res.Flaky)
	}

	// Nothing to read: no tests known, and a link is not followed.
	r.Meta.JUnit = []string{"junit/none.xml", "junit/link.xml"}
	os.Symlink(filepath.Join(r.Dir, "junit", "torch.xml"), filepath.Join(r.Dir, "junit", "link.xml"))
	if res := Read(r, suites); res.Known || res.Counts.Total != 0 {
		t.Errorf("read %+v from a missing file and a link", res.Counts)
	}
}

// The change against the base: counts only at the same level; new failures only
// when the base kept every failed test; fixed ones that passed here.
func TestCompare(t *testing.T) {
	r := writeRun(t, map[string]string{"torch": merged}, map[string]string{}, record.MetaSuite{Label: "torch", Mode: "list"})
	res := Read(r, nil)
	res.Level = "1"
	base := &record.BaseTests{Level: "1", Tests: record.TestCounts{Total: 5, Passed: 4, Failed: 1}, Failed: []record.TestRef{
		{Item: "torch/test_numerics.ck", ID: "tests/pytorch/test_numerics.py::TestB::test_b"},
		{Item: "torch/test_numerics.ck", ID: "tests/pytorch/test_numerics.py::test_a[1]"},
		{Item: "torch/test_numerics.flash", ID: "tests/pytorch/test_numerics.py::test_a[1]"},
	}}
	c := Compare(res, base)
	if !c.SameLevel || c.Delta != (record.TestCounts{Total: 1, Passed: -2, Errored: 2, Skipped: 1, Unfinished: 1}) || !c.Any() {
		t.Errorf("delta %+v", c.Delta)
	}
	if diff := cmp.Diff([]record.TestRef{
		{Item: "torch/test_gemm.ck", ID: "tests/pytorch/test_gemm.py::test_hang[0]"},
		{Item: "torch/test_numerics.ck", ID: "tests.pytorch.test_numerics::test_d"},
	}, c.New); diff != "" {
		t.Errorf("new: %s", diff)
	}
	// test_a[1] passed in its own item only: the flash item's failure is not fixed.
	if diff := cmp.Diff([]record.TestRef{base.Failed[1]}, c.Fixed); diff != "" {
		t.Errorf("fixed: %s", diff)
	}
	base.Level = "3"
	if c := Compare(res, base); c.SameLevel || c.Delta != (record.TestCounts{}) || len(c.New) != 2 {
		t.Errorf("another level: %+v", c)
	}
	base.MoreFailed = 1
	if c := Compare(res, base); len(c.New) != 0 {
		t.Errorf("new failures against a cut list: %v", c.New)
	}
	if Compare(res, nil) != nil || (*Change)(nil).Any() {
		t.Error("a change without a base")
	}
	rec := res.Record("dev", "abc", "42")
	if rec.Format != record.BaseFormat || rec.Level != "1" || rec.Tests != res.Counts || len(rec.Failed) != 3 || rec.Failed[0].Item != "torch/test_gemm.ck" {
		t.Errorf("record %+v", rec)
	}
}
