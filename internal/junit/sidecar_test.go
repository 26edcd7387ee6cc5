package junit

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

const xunit2 = `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="3">
<testcase classname="tests.pytorch.test_numerics" name="test_a[1]" time="0.1"/>
<testcase classname="tests.pytorch.test_numerics.TestB" name="test_b" time="0.1"><failure message="AssertionError: x">t.py:3: AssertionError</failure></testcase>
<testcase classname="tests.pytorch.test_numerics" name="test_c" time="0.1"><error message="boom"/></testcase>
</testsuite></testsuites>`

// TE's sidecars complete what the item's XML says: the .failed ids give pytest's
// xunit2 cases their file, and a .partial names the test the item died in (and,
// with no XML at all, every test it recorded an end of).
func TestSidecars(t *testing.T) {
	partial := `{"e":"collected","nodeids":["tests/pytorch/test_numerics.py::test_a[1]","tests/pytorch/test_numerics.py::TestB::test_b","tests/pytorch/test_numerics.py::test_c","tests/pytorch/test_numerics.py::test_d"]}
{"e":"start","nodeid":"tests/pytorch/test_numerics.py::test_a[1]"}
{"e":"report","nodeid":"tests/pytorch/test_numerics.py::test_a[1]","when":"setup","outcome":"passed"}
{"e":"report","nodeid":"tests/pytorch/test_numerics.py::test_a[1]","when":"call","outcome":"passed"}
{"e":"start","nodeid":"tests/pytorch/test_numerics.py::TestB::test_b"}
{"e":"report","nodeid":"tests/pytorch/test_numerics.py::TestB::test_b","when":"call","outcome":"failed","msg":"AssertionError: x"}
{"e":"start","nodeid":"tests/pytorch/test_numerics.py::test_c"}
{"e":"report","nodeid":"tests/pytorch/test_numerics.py::test_c","when":"setup","outcome":"skipped"}
{"e":"start","nodeid":"tests/pytorch/test_numerics.py::TestB::test_hang[0]"}
`
	failed := "tests/pytorch/test_numerics.py::TestB::test_b\ntests/pytorch/test_numerics.py::test_c\n"
	type want struct {
		name, file, classname string
		result                CaseResult
		typ                   string
	}
	for _, c := range []struct {
		name  string
		files map[string]string
		stale []string // written before the run started
		item  verdict.Item
		want  []want
	}{
		{"xunit2 with .failed: failed cases get their file", map[string]string{"n.ck.xml": xunit2, "n.ck.xml.failed": failed},
			nil, verdict.Item{ItemID: record.ItemID{Tag: "n.ck"}, Result: record.Result{RC: 1, Failed: true}, Finished: true},
			[]want{{"test_a[1]", "", "tests.pytorch.test_numerics", CasePassed, ""},
				{"test_b", "tests/pytorch/test_numerics.py", "tests.pytorch.test_numerics.TestB", CaseFailed, ""},
				{"test_c", "tests/pytorch/test_numerics.py", "tests.pytorch.test_numerics", CaseErrored, ""}}},
		{"a .failed of an earlier run is not read", map[string]string{"n.ck.xml": xunit2}, []string{"n.ck.xml.failed"},
			verdict.Item{ItemID: record.ItemID{Tag: "n.ck"}, Result: record.Result{RC: 1, Failed: true}, Finished: true},
			[]want{{"test_a[1]", "", "tests.pytorch.test_numerics", CasePassed, ""},
				{"test_b", "", "tests.pytorch.test_numerics.TestB", CaseFailed, ""},
				{"test_c", "", "tests.pytorch.test_numerics", CaseErrored, ""}}},
		{"timed out with no XML: the .partial's tests, the one it died in", map[string]string{"n.ck.xml.partial": partial},
			nil, verdict.Item{ItemID: record.ItemID{Tag: "n.ck"}, Result: record.Result{RC: 124, Failed: true}, Finished: true,
				Note: "timed out"},
			[]want{{"test_a[1]", "tests/pytorch/test_numerics.py", "tests.pytorch.test_numerics", CasePassed, ""},
				{"test_b", "tests/pytorch/test_numerics.py", "tests.pytorch.test_numerics.TestB", CaseFailed, ""},
				{"test_c", "tests/pytorch/test_numerics.py", "tests.pytorch.test_numerics", CaseSkipped, ""},
				{"test_hang[0]", "tests/pytorch/test_numerics.py", "tests.pytorch.test_numerics.TestB", CaseUnfinished, UnfinishedType},
				{"n.ck", "", "sgpu-queue.torch", CaseErrored, "sgpu-queue.no-junit"}}},
		{"XML and a .partial: only the test it died in is added", map[string]string{"n.ck.xml": xunit2, "n.ck.xml.partial": partial},
			nil, verdict.Item{ItemID: record.ItemID{Tag: "n.ck"}, Result: record.Result{RC: 139, Failed: true}, Finished: true},
			[]want{{"test_a[1]", "", "tests.pytorch.test_numerics", CasePassed, ""},
				{"test_b", "", "tests.pytorch.test_numerics.TestB", CaseFailed, ""},
				{"test_c", "", "tests.pytorch.test_numerics", CaseErrored, ""},
				{"test_hang[0]", "tests/pytorch/test_numerics.py", "tests.pytorch.test_numerics.TestB", CaseUnfinished, UnfinishedType},
				{"n.ck", "", "sgpu-queue.torch", CaseErrored, "sgpu-queue.cut-off"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			start := time.Now().Add(-time.Minute)
			writeTree(t, dir, c.files, start.Add(time.Second))
			stale := map[string]string{}
			for _, s := range c.stale {
				stale[s] = failed
			}
			writeTree(t, dir, stale, start.Add(-time.Hour))
			d, err := Merge(context.Background(), verdict.Suite{Label: "torch", Items: []verdict.Item{c.item}}, Source{Dir: dir}, start)
			if err != nil {
				t.Fatal(err)
			}
			data, _ := encode(t, d)
			validateXSD(t, data)
			path := filepath.Join(t.TempDir(), "torch.xml")
			if err := d.WriteFile(filepath.Dir(path), path); err != nil {
				t.Fatal(err)
			}
			cases, err := ReadCases(path)
			if err != nil {
				t.Fatal(err)
			}
			var got []want
			for _, k := range cases {
				got = append(got, want{k.Name, k.File, k.Classname, k.Result, k.Type})
			}
			if len(got) != len(c.want) {
				t.Fatalf("cases\n%v\nwant\n%v\n%s", got, c.want, data)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Errorf("case %d: %+v, want %+v", i, got[i], c.want[i])
				}
			}
			if msg := "the test was running when item n.ck of suite torch ended: " + (item{Item: c.item}).end(true); strings.Contains(c.name, "died in") &&
				!strings.Contains(string(data), `<error message="`+msg+`" type="sgpu-queue.unfinished">`) {
				t.Errorf("the unfinished test's message does not name it and its item:\n%s", data)
			}
		})
	}
}

// A sidecar that is a link, or no regular file, is never read.
func TestSidecarLinksNotRead(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	start := time.Now().Add(-time.Minute)
	writeTree(t, dir, map[string]string{"n.ck.xml": xunit2}, start.Add(time.Second))
	writeTree(t, outside, map[string]string{"ids": "tests/pytorch/test_numerics.py::TestB::test_b\n"}, start.Add(time.Second))
	if err := os.Symlink(filepath.Join(outside, "ids"), filepath.Join(dir, "n.ck.xml.failed")); err != nil {
		t.Fatal(err)
	}
	d, err := Merge(context.Background(), verdict.Suite{Label: "torch", Items: []verdict.Item{{ItemID: record.ItemID{Tag: "n.ck"}, Result: record.Result{RC: 1, Failed: true}, Finished: true}}}, Source{Dir: dir}, start)
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := encode(t, d); strings.Contains(string(data), `file="tests/pytorch/test_numerics.py"`) {
		t.Errorf("a linked .failed was read:\n%s", data)
	}
}
