package junit

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

const passXML = `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="0" skipped="0" tests="2" time="3.500" timestamp="2024-06-03T14:00:00+00:00" hostname="node1"><testcase classname="tests.t" name="test_ok_1" time="1.500" /><testcase classname="tests.t" name="test_ok_2" time="2.000" /></testsuite></testsuites>`

const failXML = `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="1" skipped="0" tests="2" time="2.000"><testcase classname="tests.t" name="test_ok" time="1.000" /><testcase classname="tests.t" name="test_bad" time="1.000"><failure message="assert 1 == 2">E assert 1 == 2</failure></testcase></testsuite></testsuites>`

func TestMergeRules(t *testing.T) {
	since := time.Date(2024, 6, 3, 14, 0, 0, 0, time.UTC)
	fresh := since.Add(time.Minute)
	stale := since.Add(-time.Hour)
	ok := func(tag string) verdict.Item {
		return verdict.Item{ItemID: record.ItemID{Tag: tag}, GPU: "0", Result: record.Result{Seconds: 3.5}, Finished: true, LogRel: "logs/items/s." + tag + ".log", Started: true}
	}
	rc := func(tag string, code int) verdict.Item { it := ok(tag); it.RC, it.Failed = code, code != 0; return it }

	tests := []struct {
		name    string
		suffix  string
		files   map[string]string // written fresh
		old     map[string]string // written before since
		outside map[string]string // written next to dir, not in it
		items   []verdict.Item
		want    Stats
		has     []string // substrings of the output
		hasNot  []string
		check   func(t *testing.T, s xmlSuites)
	}{
		{
			name:  "passing item without XML adds nothing",
			items: []verdict.Item{ok("a")},
			want:  Stats{},
		},
		{
			name:  "passing items keep their suites, attributed",
			files: map[string]string{"a.xml": passXML},
			items: []verdict.Item{ok("a")},
			want:  Stats{Tests: 2, Seconds: 3.5, Files: 1},
			has:   []string{`<property name="sgpu.item" value="a">`, `<property name="sgpu.gpu" value="0">`, `<property name="sgpu.rc" value="0">`, `<property name="sgpu.source" value="a.xml">`, `timestamp="2024-06-03T14:00:00+00:00"`, `hostname="node1"`},
		},
		{
			name:  "crashed item without XML is an error case naming it, its exit code and log",
			items: []verdict.Item{ok("a"), rc("b", 139)},
			want:  Stats{Tests: 1, Errors: 1, Seconds: 3.5},
			check: func(t *testing.T, s xmlSuites) {
				su, c := findCase(s, "b")
				if c == nil || c.Error == nil {
					t.Fatalf("no error case for b: %+v", s)
				}
				if c.Classname != "sgpu-queue.s" || c.Error.Type != "sgpu-queue.no-junit" {
					t.Errorf("classname %q type %q", c.Classname, c.Error.Type)
				}
				for _, w := range []string{"item b of suite s", "exit code 139", "wrote no JUnit XML", "log: logs/items/s.b.log"} {
					if !strings.Contains(c.Error.Message, w) {
						t.Errorf("message %q lacks %q", c.Error.Message, w)
					}
				}
				if v, _ := prop(su, "sgpu.status"); v != "failed" {
					t.Errorf("sgpu.status = %q", v)
				}
			},
		},
		{
			name:  "never finished",
			items: []verdict.Item{{ItemID: record.ItemID{Tag: "a"}, LogRel: "l.log", Started: true, Note: "cancelled", Result: record.Result{Failed: true}}},
			want:  Stats{Tests: 1, Errors: 1},
			has:   []string{"item a of suite s: cancelled, never finished; it wrote no JUnit XML; log: l.log"},
			check: func(t *testing.T, s xmlSuites) {
				su, _ := findCase(s, "a")
				if _, has := prop(su, "sgpu.rc"); has {
					t.Error("sgpu.rc set for an item that never finished")
				}
			},
		},
		{
			name:  "timed out",
			items: []verdict.Item{{ItemID: record.ItemID{Tag: "a"}, Result: record.Result{Seconds: 1800, RC: 124, Failed: true}, Finished: true, Note: "timed out"}},
			want:  Stats{Tests: 1, Errors: 1, Seconds: 1800},
			has:   []string{"item a of suite s: timed out, exit code 124; it wrote no JUnit XML"},
		},
		{
			name:  "a no-run item (exit 0, failed by its verdict) without XML is an error case",
			items: []verdict.Item{{ItemID: record.ItemID{Tag: "a"}, Result: record.Result{Seconds: 0.2, RC: 0, Failed: true}, Finished: true, Note: "no-run: its re-entry ran nothing"}},
			want:  Stats{Tests: 1, Errors: 1, Seconds: 0.2},
			has:   []string{"item a of suite s: no-run: its re-entry ran nothing, exit code 0; it wrote no JUnit XML", `value="failed"`},
		},
		{
			name:  "incomplete item without XML is cut off",
			items: []verdict.Item{{ItemID: record.ItemID{Tag: "a"}, Result: record.Result{RC: 137, Outcome: outcome.CutOff, Failed: true}, Finished: true}},
			want:  Stats{Tests: 1, Errors: 1},
			has:   []string{"cut off (a .partial sidecar outlived it), exit code 137", `value="cut off"`},
		},
		{
			name:  "a sidecar without XML marks the item cut off even if the engine did not",
			files: map[string]string{"a.xml.partial": ""},
			items: []verdict.Item{rc("a", 0)},
			want:  Stats{Tests: 1, Errors: 1, Seconds: 3.5},
			has:   []string{"item a of suite s: cut off (a .partial sidecar outlived it), exit code 0; it wrote no JUnit XML"},
		},
		{
			name:  "partial XML keeps its cases and adds the cut-off case",
			files: map[string]string{"a.xml": passXML, "a.xml.partial": ""},
			items: []verdict.Item{{ItemID: record.ItemID{Tag: "a"}, Result: record.Result{Seconds: 30, RC: 124, Outcome: outcome.Timeout, Failed: true}, Finished: true, Note: "timed out"}},
			want:  Stats{Tests: 3, Errors: 1, Seconds: 33.5, Files: 1},
			has:   []string{`name="test_ok_1"`, `name="test_ok_2"`, `type="sgpu-queue.cut-off"`, "may miss the tests it never reached"},
		},
		{
			name:  "failed item whose XML records no failure gets an error case",
			files: map[string]string{"a.xml": passXML},
			items: []verdict.Item{rc("a", 139)},
			want:  Stats{Tests: 3, Errors: 1, Seconds: 7, Files: 1},
			has:   []string{`type="sgpu-queue.item-failed"`, "exit code 139, but its JUnit XML records no failure"},
		},
		{
			name:   "failed item whose XML records the failure adds nothing",
			files:  map[string]string{"a.xml": failXML},
			items:  []verdict.Item{rc("a", 1)},
			want:   Stats{Tests: 2, Failures: 1, Seconds: 2, Files: 1},
			hasNot: []string{"sgpu-queue.item-failed", "sgpu-queue.no-junit"},
		},
		{
			name:  "opaque item owns every file under its prefix",
			files: map[string]string{"x/one.xml": passXML, "two.xml": failXML, "notes.txt": "not xml"},
			items: []verdict.Item{{GPU: "3", Result: record.Result{RC: 1, Failed: true}, Finished: true}},
			want:  Stats{Tests: 4, Failures: 1, Seconds: 5.5, Files: 2},
			has:   []string{`<property name="sgpu.item" value="whole">`, `value="x/one.xml"`, `value="two.xml"`},
		},
		{
			name:  "opaque item that failed without any file",
			items: []verdict.Item{{Result: record.Result{RC: 2, Failed: true}, Finished: true, LogRel: "w.log", Started: true}},
			want:  Stats{Tests: 1, Errors: 1},
			has:   []string{`<testsuite name="s:whole"`, `<testcase name="whole" classname="sgpu-queue.s"`, "item whole of suite s: exit code 2"},
		},
		{
			name:   "files older than the run are ignored",
			old:    map[string]string{"a.xml": failXML, "b.xml": failXML},
			items:  []verdict.Item{rc("a", 1)},
			want:   Stats{Tests: 1, Errors: 1, Seconds: 3.5},
			hasNot: []string{"test_bad"},
		},
		{
			name:  "a file no item claims is kept, attributed to the suite only",
			files: map[string]string{"extra.xml": passXML},
			items: []verdict.Item{ok("a")},
			want:  Stats{Tests: 2, Seconds: 3.5, Files: 1},
			check: func(t *testing.T, s xmlSuites) {
				su, _ := findCase(s, "test_ok_1")
				if v, _ := prop(su, "sgpu.source"); v != "extra.xml" {
					t.Errorf("sgpu.source = %q", v)
				}
				if _, has := prop(su, "sgpu.item"); has {
					t.Error("unclaimed file attributed to an item")
				}
			},
		},
		{
			name:    "a tag leading outside the directory reads nothing there",
			outside: map[string]string{"escape.xml": failXML},
			items:   []verdict.Item{rc("../escape", 1), rc("/etc/passwd", 1)},
			want:    Stats{Tests: 2, Errors: 2, Seconds: 7},
			hasNot:  []string{"test_bad"},
			has:     []string{"item ../escape of suite s: exit code 1", "item /etc/passwd of suite s"},
		},
		{
			name:  "a tag with a slash finds its file in a subdirectory",
			files: map[string]string{"ops/gemm.xml": failXML},
			items: []verdict.Item{rc("ops/gemm", 1)},
			want:  Stats{Tests: 2, Failures: 1, Seconds: 2, Files: 1},
			has:   []string{`<property name="sgpu.item" value="ops/gemm">`},
		},
		{
			name:  "two tags naming one file: the first owns it",
			files: map[string]string{"a/b.xml": failXML},
			items: []verdict.Item{rc("a/b", 1), rc("a//b", 1)},
			want:  Stats{Tests: 3, Failures: 1, Errors: 1, Seconds: 5.5, Files: 1},
			has:   []string{`<property name="sgpu.item" value="a/b">`, "item a//b of suite s: exit code 1; it wrote no JUnit XML"},
		},
		{
			name:  "hostile tag bytes stay valid XML",
			items: []verdict.Item{rc("bad\x01tag\x1b[0m\xff\n", 1)},
			want:  Stats{Tests: 1, Errors: 1, Seconds: 3.5},
			has:   []string{"bad#x01tag#x1B[0m\uFFFD"},
		},
		{
			name:   "malformed file of a failed item names the file, the item and its log",
			files:  map[string]string{"a.xml": failXML[:120]},
			items:  []verdict.Item{rc("a", 1)},
			want:   Stats{Tests: 1, Errors: 1, Files: 1, Malformed: 1},
			has:    []string{"malformed JUnit XML a.xml: XML syntax error on line 1: unexpected EOF (item a: exit code 1); log: logs/items/s.a.log", `type="sgpu-queue.malformed-junit"`},
			hasNot: []string{"sgpu-queue.item-failed"},
		},
		{
			name:   "custom suffix",
			suffix: "-junit.xml",
			files:  map[string]string{"a-junit.xml": failXML, "a.xml": passXML},
			items:  []verdict.Item{rc("a", 1)},
			want:   Stats{Tests: 2, Failures: 1, Seconds: 2, Files: 1},
			hasNot: []string{"test_ok_1"},
		},
		{
			name:  "an unclaimed sidecar without XML is reported",
			files: map[string]string{"ghost.xml.partial": ""},
			items: []verdict.Item{ok("a"), ok("b")},
			want:  Stats{Tests: 1, Errors: 1},
			has:   []string{"ghost.xml: its writer was cut off before writing it"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "junit", "s")
			writeTree(t, dir, tc.files, fresh)
			writeTree(t, dir, tc.old, stale)
			writeTree(t, filepath.Join(root, "junit"), tc.outside, fresh)
			if tc.files == nil && tc.old == nil {
				os.MkdirAll(dir, 0o755)
			}
			d, err := Merge(context.Background(), verdict.Suite{Label: "s", Items: tc.items}, Source{Dir: dir, Suffix: tc.suffix}, since)
			if err != nil {
				t.Fatalf("Merge: %v", err)
			}
			got := d.Stats()
			got.Seconds = float64(int(got.Seconds*1000+0.5)) / 1000
			if got != tc.want {
				t.Errorf("Stats = %+v, want %+v", got, tc.want)
			}
			data, back := encode(t, d)
			text := string(data)
			for _, w := range tc.has {
				if !strings.Contains(text, w) {
					t.Errorf("output lacks %q\n%s", w, text)
				}
			}
			for _, w := range tc.hasNot {
				if strings.Contains(text, w) {
					t.Errorf("output has %q\n%s", w, text)
				}
			}
			if back.Name != "s" || back.Tests != got.Tests || back.Failures != got.Failures || back.Errors != got.Errors {
				t.Errorf("root attributes %q %d/%d/%d disagree with Stats %+v", back.Name, back.Tests, back.Failures, back.Errors, got)
			}
			if tc.check != nil {
				tc.check(t, back)
			}
			validateXSD(t, data)
		})
	}
}

// Failure is the verdict's, never the exit code's (docs/outcomes.md): an item its
// verdict failed with rc 0 (flaky counted as a failure) gets the item-failed case
// and status; one its verdict passed whatever its rc (a verdict of a log dir whose
// exit codes say otherwise) gets neither.
func TestMergeReadsTheVerdict(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.xml": passXML, "b.xml": passXML}, time.Now())
	s := verdict.Suite{Label: "s", Items: []verdict.Item{
		{ItemID: record.ItemID{Tag: "a"}, Finished: true, Started: true,
			Result: record.Result{Failed: true, Outcome: outcome.OK},
			Note:   "flaky: passed on attempt 2, counted as a failure"},
		{ItemID: record.ItemID{Tag: "b"}, Finished: true, Started: true, Result: record.Result{RC: 3, Outcome: outcome.OK}},
	}}
	d, err := Merge(context.Background(), s, Source{Dir: dir}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := encode(t, d)
	text := string(data)
	if !strings.Contains(text, "item a of suite s: flaky: passed on attempt 2, counted as a failure, exit code 0, but its JUnit XML records no failure") {
		t.Errorf("the failed item has no item-failed case:\n%s", text)
	}
	// a's two suites (its file's and its error case's) say failed; b's says ok.
	if strings.Count(text, `type="sgpu-queue.item-failed"`) != 1 || strings.Count(text, `<property name="sgpu.status" value="failed">`) != 2 ||
		!strings.Contains(text, `<property name="sgpu.status" value="ok">`) {
		t.Errorf("the item its verdict passed counts as failed by its exit code:\n%s", text)
	}
}

// Counts in the output are recomputed from the cases, whatever the input claims.
func TestCountsRecomputed(t *testing.T) {
	lying := `<testsuites tests="99" failures="0"><testsuite name="x" tests="1" failures="0" errors="7" skipped="0"><testcase name="a"><failure/></testcase><testcase name="b"><error/></testcase><testcase name="c"><skipped/></testcase><testcase name="d"/></testsuite></testsuites>`
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.xml": lying}, time.Now())
	d, err := Merge(context.Background(), verdict.Suite{Label: "s", Items: []verdict.Item{{ItemID: record.ItemID{Tag: "a"}, Result: record.Result{RC: 1, Failed: true}, Finished: true}}}, Source{Dir: dir}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	_, back := encode(t, d)
	s := back.Suites[0]
	if s.Tests != 4 || s.Failures != 1 || s.Errors != 1 || s.Skipped != 1 {
		t.Errorf("suite counts %d/%d/%d/%d, want 4/1/1/1", s.Tests, s.Failures, s.Errors, s.Skipped)
	}
	if back.Tests != 4 || back.Failures != 1 || back.Errors != 1 {
		t.Errorf("root counts %d/%d/%d, want 4/1/1", back.Tests, back.Failures, back.Errors)
	}
}

// Nested suites are flattened; a suite that only groups others is dropped.
func TestNestedSuitesFlattened(t *testing.T) {
	nested := `<testsuites><testsuite name="outer" timestamp="T0"><testsuite name="inner1" time="1.5" hostname="h1"><testcase name="a"/></testsuite><testsuite name="inner2"><properties><property name="k" value="v"/></properties><testcase name="b" time="0.25"><failure message="m">body</failure></testcase></testsuite></testsuite></testsuites>`
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"n.xml": nested}, time.Now())
	d, err := Merge(context.Background(), verdict.Suite{Label: "s", Items: nil}, Source{Dir: dir}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	data, back := encode(t, d)
	if len(back.Suites) != 2 || back.Suites[0].Name != "inner1" || back.Suites[1].Name != "inner2" {
		t.Fatalf("suites %+v", back.Suites)
	}
	if back.Suites[0].Hostname != "h1" || back.Suites[0].Time != "1.500" {
		t.Errorf("inner1 attributes lost: %+v", back.Suites[0])
	}
	if v, _ := prop(&back.Suites[1], "k"); v != "v" {
		t.Errorf("inner2 property lost: %+v", back.Suites[1].Props)
	}
	if back.Suites[1].Time != "0.250" {
		t.Errorf("inner2 time %q, want the sum of its cases", back.Suites[1].Time)
	}
	validateXSD(t, data)
}

// CDATA output (surefire, many C++ runners) and entity escapes come through as text.
func TestCDATAAndEscapes(t *testing.T) {
	in := `<testsuite name="x"><testcase name="a" classname="c"><failure message="a &lt; b &amp; c" type="AssertionError"><![CDATA[if a < b && c > d {]]> then &lt;nothing&gt;</failure><system-out><![CDATA[<html>]]></system-out></testcase></testsuite>`
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.xml": in}, time.Now())
	d, err := Merge(context.Background(), verdict.Suite{Label: "s", Items: []verdict.Item{{ItemID: record.ItemID{Tag: "a"}, Result: record.Result{RC: 1, Failed: true}, Finished: true}}}, Source{Dir: dir}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	data, back := encode(t, d)
	_, c := findCase(back, "a")
	if c == nil || c.Failure == nil {
		t.Fatalf("no failure: %s", data)
	}
	if c.Failure.Message != "a < b & c" || c.Failure.Type != "AssertionError" || c.Failure.Body != "if a < b && c > d { then <nothing>" || c.SystemOut != "<html>" {
		t.Errorf("got %+v out %q", *c.Failure, c.SystemOut)
	}
	validateXSD(t, data)
}

func TestMergeErrors(t *testing.T) {
	if _, err := Merge(context.Background(), verdict.Suite{Label: "", Items: nil}, Source{Dir: t.TempDir()}, time.Time{}); err == nil || !strings.Contains(err.Error(), "empty suite label") {
		t.Errorf("empty label: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.xml": passXML}, time.Now())
	if _, err := Merge(ctx, verdict.Suite{Label: "s", Items: nil}, Source{Dir: dir}, time.Time{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	// No directory at all: nobody wrote anything, which is not an error.
	d, err := Merge(context.Background(), verdict.Suite{Label: "s", Items: []verdict.Item{{ItemID: record.ItemID{Tag: "a"}, Result: record.Result{RC: 3, Failed: true}, Finished: true}}}, Source{Dir: filepath.Join(dir, "missing")}, time.Time{})
	if err != nil || d.Stats().Errors != 1 {
		t.Errorf("missing dir: %v %+v", err, d)
	}
}

// A list suite's item file is named by its tag, which may hold bytes that are not
// UTF-8 (and glob characters, spaces): the merge reads it as CheckFile does, never
// as malformed.
func TestMergeReadsAnyTagsFile(t *testing.T) {
	dir := t.TempDir()
	tags := []string{"bad\xffbyte", "sp ace[1]*?", "sub/dir\xfe"}
	files := map[string]string{}
	var items []verdict.Item
	for _, tag := range tags {
		files[tag+".xml"] = passXML
		items = append(items, verdict.Item{ItemID: record.ItemID{Tag: tag}, Finished: true, Started: true, Result: record.Result{Outcome: outcome.OK}})
	}
	writeTree(t, dir, files, time.Now())
	d, err := Merge(context.Background(), verdict.Suite{Label: "s", Items: items}, Source{Dir: dir}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if st := d.Stats(); st.Files != len(tags) || st.Malformed != 0 || st.Errors != 0 {
		data, _ := encode(t, d)
		t.Errorf("stats %+v, want %d files read, none malformed:\n%s", st, len(tags), data)
	}
	for _, tag := range tags {
		if err := CheckFile(filepath.Join(dir, tag+".xml")); err != nil {
			t.Errorf("CheckFile(%q): %v", tag, err)
		}
	}
}

func TestSymlinksAndSpecialFilesIgnored(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "s")
	writeTree(t, root, map[string]string{"secret.xml": failXML}, time.Now())
	os.MkdirAll(dir, 0o755)
	if err := os.Symlink(filepath.Join(root, "secret.xml"), filepath.Join(dir, "a.xml")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	if err := os.Symlink(root, filepath.Join(dir, "loop")); err != nil {
		t.Fatal(err)
	}
	d, err := Merge(context.Background(), verdict.Suite{Label: "s", Items: []verdict.Item{{ItemID: record.ItemID{Tag: "a"}, Result: record.Result{RC: 1, Failed: true}, Finished: true}}}, Source{Dir: dir}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := encode(t, d)
	if strings.Contains(string(data), "test_bad") || d.Stats().Files != 0 {
		t.Errorf("followed a symlink:\n%s", data)
	}
}

func TestUnreadableSubdirectoryIsReported(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads everything")
	}
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"locked/a.xml": passXML}, time.Now())
	os.Chmod(filepath.Join(dir, "locked"), 0)
	t.Cleanup(func() { os.Chmod(filepath.Join(dir, "locked"), 0o755) })
	d, err := Merge(context.Background(), verdict.Suite{Label: "s", Items: nil}, Source{Dir: dir}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if st := d.Stats(); st.Malformed != 1 || st.Errors != 1 {
		t.Errorf("Stats %+v", st)
	}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.xml": failXML}, time.Now())
	d, err := Merge(context.Background(), verdict.Suite{Label: "s", Items: []verdict.Item{{ItemID: record.ItemID{Tag: "a"}, Result: record.Result{RC: 1, Failed: true}, Finished: true}}}, Source{Dir: dir}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out", "deeper", "s.xml")
	if err := d.WriteFile(filepath.Dir(out), out); err != nil {
		t.Fatal(err)
	}
	want, _ := encode(t, d)
	got, err := os.ReadFile(out)
	if err != nil || string(got) != string(want) {
		t.Fatalf("file differs from Encode (%v)", err)
	}
	entries, _ := os.ReadDir(filepath.Dir(out))
	if len(entries) != 1 {
		t.Errorf("temp files left behind: %v", entries)
	}
	// Writing over an existing file replaces it.
	if err := d.WriteFile(filepath.Dir(out), out); err != nil {
		t.Fatal(err)
	}
	// A parent that is a file: a one-line error naming the path.
	if err := d.WriteFile(dir, filepath.Join(dir, "a.xml", "s.xml")); err == nil || !strings.Contains(err.Error(), "a.xml") {
		t.Errorf("bad parent: %v", err)
	}
}

func TestClean(t *testing.T) {
	for in, want := range map[string]string{
		"plain":              "plain",
		"tab\tnl\ncr\r":      "tab\tnl\ncr\r",
		"nul\x00bell\x07":    "nul#x00bell#x07",
		"esc\x1b[0m":         "esc#x1B[0m",
		"bad\xffutf8":        "bad\uFFFDutf8",
		"nonchar\uFFFE":      "nonchar#xFFFE",
		"emoji 🚀 ok":         "emoji 🚀 ok",
		"\u00e9t\u00e9 fine": "\u00e9t\u00e9 fine",
	} {
		if got := clean(in); got != want {
			t.Errorf("clean(%q) = %q, want %q", in, got, want)
		}
	}
}
