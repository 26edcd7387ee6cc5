package junit

import (
	"bytes"
	"context"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
	"time"

	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

// FuzzMerge feeds arbitrary bytes as an item's JUnit file: Merge never panics,
// its output always parses back with encoding/xml, the root counts are the
// sums of the suites', and ReadCases reads it back.
func FuzzMerge(f *testing.F) {
	for _, name := range []string{"pytest-xunit2.xml", "pytest-xunit1.xml", "ctest.xml", "gotestsum.xml"} {
		b, err := os.ReadFile(filepath.Join("testdata", "samples", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	for _, s := range []string{
		"",
		"<testsuites/>",
		`<testsuite name="a"><testcase name="b"><failure message="m&#10;n">x&#x9;y</failure><system-out><![CDATA[]]></system-out></testcase></testsuite>`,
		`<!DOCTYPE x [<!ENTITY a "&b;&b;">]><testsuite name="&a;"/>`,
		`<testsuite><testsuite><testsuite name="n"><testcase name="c" time="-1e400"/></testsuite></testsuite></testsuite>`,
		`<a><testsuite name="x"><b><testsuite name="hidden"/></b><properties><property name="p" value="v"/></properties></testsuite></a>`,
		`<testsuite name="a"><testcase name="b" file="t.py" line="3"><properties><property name="p" value="v"/></properties><failure>1</failure><failure>2</failure><system-out>o</system-out></testcase></testsuite>`,
		`<testsuite name="x" time="NaN"><testcase name="y" time="1,234.5"><skipped/><error/></testcase></testsuite>`,
		"<testsuite name=\"\xff\xfe\"><testcase name=\"\u2028\"/></testsuite>",
		`<?xml version="1.0" encoding="UTF-16"?><testsuite/>`,
	} {
		f.Add([]byte(s))
	}
	since := time.Unix(0, 0)
	f.Fuzz(func(t *testing.T, data []byte) {
		// In memory: a temp dir per input makes each run I/O-bound (~20 ms
		// here), which starves the fuzzer; Merge itself reads via os.DirFS.
		fsys := fstest.MapFS{"f.xml": &fstest.MapFile{Data: data, Mode: 0o644, ModTime: since.Add(time.Hour)}}
		d, err := merge(context.Background(), "s", fsys, "", itemsOf(verdict.Suite{Items: []verdict.Item{{ItemID: record.ItemID{Tag: "f"}, GPU: "0", Result: record.Result{RC: 1, Failed: true}, Finished: true}}}, Source{}), since, defaultLimits())
		if err != nil {
			t.Fatalf("Merge: %v", err)
		}
		var buf bytes.Buffer
		if err := d.Encode(&buf); err != nil {
			t.Fatalf("Encode: %v", err)
		}
		dec := xml.NewDecoder(bytes.NewReader(buf.Bytes()))
		for {
			_, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("output does not parse: %v\n%s", err, buf.Bytes())
			}
		}
		var back xmlSuites
		if err := xml.Unmarshal(buf.Bytes(), &back); err != nil {
			t.Fatalf("output does not unmarshal: %v", err)
		}
		var tests, failures, errs int
		for _, s := range back.Suites {
			tests += s.Tests
			failures += s.Failures
			errs += s.Errors
			if s.Tests != len(s.Cases) {
				t.Fatalf("suite %q says %d tests for %d cases", s.Name, s.Tests, len(s.Cases))
			}
		}
		st := d.Stats()
		if back.Tests != tests || back.Failures != failures || back.Errors != errs || st.Tests != tests || st.Files != 1 || st.Malformed > 1 {
			t.Fatalf("root %d/%d/%d, sums %d/%d/%d, stats %+v", back.Tests, back.Failures, back.Errors, tests, failures, errs, st)
		}
		// A failed item always leaves a trace: its own failures, or an error case.
		if failures+errs == 0 {
			t.Fatalf("failed item left no failure or error:\n%s", buf.Bytes())
		}
		// The merged file reads back: every case is the item's, and those the merge
		// added about the item are typed (ToolType), so no reader takes them for tests.
		back2, err := parseJUnit(buf.Bytes(), defaultLimits())
		if err != nil {
			t.Fatalf("ReadCases of a merged file: %v", err)
		}
		for _, c := range casesOf(back2) {
			if c.Tag != "f" && c.Tag != "" {
				t.Fatalf("case %+v of item %q", c, c.Tag)
			}
		}
	})
}
