package junit

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// ToolType starts the type of every error case sgpu-queue adds itself (no XML, cut
// off, malformed, never ran): they say what the report already says from the run's
// own files. Those about an item are no test (tests.StatusOf); UnfinishedType, the
// test an item died in, is one.
const ToolType = "sgpu-queue."

// MalformedType is the error case of an item's file that cannot be parsed: the
// only place that says what is wrong with it, so it counts as an errored test of
// the item (tests.StatusOf), shown under it (a bad-junit item, docs/outcomes.md).
const MalformedType = ToolType + "malformed-junit"

// CaseResult is how one test case ended, as its JUnit file says.
type CaseResult int

// The results of a test case. A case with several result elements counts as the
// worst: an error over a failure over a skip.
const (
	CasePassed CaseResult = iota
	CaseSkipped
	CaseFailed
	CaseErrored
)

func (r CaseResult) String() string {
	switch r {
	case CaseSkipped:
		return "skipped"
	case CaseFailed:
		return "failed"
	case CaseErrored:
		return "errored"
	}
	return "passed"
}

// Case is one test case of an item's JUnit file, as a re-run names it (SPEC §19;
// docs/adapters.md, "Re-runs").
type Case struct {
	File      string // the file attribute (pytest's xunit1 family, gtest); "" when none
	Line      int    // the line attribute; 0 when none or not a line number
	Classname string
	Name      string
	Result    CaseResult
	// Message is the message attribute of the element that gave the result
	// (CTest's "Unable to find executable" on a test it could not run), Type its
	// type attribute (ToolType… for the cases sgpu-queue adds), Body its text (a
	// traceback), bounded as the merge keeps it.
	Message, Type, Body string
	// Item is the sgpu.item property of its suite in a merged file: the tag of the
	// item that wrote it, "whole" for an opaque item; "" when none says.
	Item string
}

// ReadCases reads every test case of one JUnit file, in file order, within the
// limits of any JUnit input (Merge's parser: nested suites flattened, no entity
// expanded, at most MaxFileBytes).
func ReadCases(path string) ([]Case, error) {
	lim := defaultLimits()
	data, err := readCapped(dirFS(filepath.Dir(path)), filepath.Base(path), lim.maxBytes)
	if err != nil {
		return nil, fmt.Errorf("junit: %s: %w", path, err)
	}
	cases, err := casesOf(data, lim)
	if err != nil {
		return nil, fmt.Errorf("junit: %s: %w", path, err)
	}
	return cases, nil
}

func casesOf(data []byte, lim limits) ([]Case, error) {
	p := &parser{lim: lim}
	suites, err := p.parse(data)
	if err != nil {
		return nil, err
	}
	var out []Case
	for _, s := range suites {
		item, _ := propOf(s.Props, "sgpu.item")
		for _, c := range s.Cases {
			line, _ := strconv.Atoi(c.Line) // lineNumber kept only a number
			k := Case{File: c.File, Line: line, Classname: c.Classname, Name: c.Name, Item: item}
			for _, r := range []struct {
				res *xmlResult
				is  CaseResult
			}{{c.Error, CaseErrored}, {c.Failure, CaseFailed}, {c.Skipped, CaseSkipped}} {
				if r.res != nil {
					k.Result, k.Message, k.Type, k.Body = r.is, r.res.Message, r.res.Type, r.res.Body
					break
				}
			}
			out = append(out, k)
		}
	}
	return out, nil
}

// FailedCases reads one JUnit file: its failed and errored test cases, in file
// order, and how many test cases it holds.
func FailedCases(path string) (failed []Case, total int, err error) {
	cases, err := ReadCases(path)
	if err != nil {
		return nil, 0, err
	}
	for _, c := range cases {
		if c.Result == CaseFailed || c.Result == CaseErrored {
			failed = append(failed, c)
		}
	}
	return failed, len(cases), nil
}

// PytestNodeID is the node id of a test case pytest wrote in its xunit1 family,
// relative to pytest's rootdir as the file attribute is: file="tests/test_x.py",
// classname="tests.test_x.TestA.TestB", name="test_n[1.5]" is
// "tests/test_x.py::TestA::TestB::test_n[1.5]". pytest makes the classname from the
// node id (its file part dotted, ".py" dropped, then the classes), so the classname
// must start with the file's dotted form; it does not when the test was written in
// another file (a method inherited from a base class elsewhere: the file attribute
// names the base's file), for a collection error (no classname), or under
// --junit-prefix, and then there is no id (false), as there is none without a file
// attribute (the default xunit2 family).
func PytestNodeID(c Case) (string, bool) {
	file := filepath.ToSlash(c.File)
	if file == "" || c.Name == "" || strings.Contains(file, "::") || strings.ContainsAny(file+c.Classname+c.Name, "\n\r") {
		return "", false
	}
	module := strings.ReplaceAll(strings.TrimSuffix(file, ".py"), "/", ".")
	rest, ok := strings.CutPrefix(c.Classname, module)
	switch {
	case !ok:
		return "", false
	case rest == "":
		return file + "::" + c.Name, true
	case !strings.HasPrefix(rest, ".") || strings.HasSuffix(rest, ".") || strings.Contains(rest, "..") || strings.Contains(rest, ":"):
		// Class names are Python identifiers: none is empty or holds a colon.
		return "", false
	}
	return file + "::" + strings.ReplaceAll(rest[1:], ".", "::") + "::" + c.Name, true
}

func propOf(props []xmlProperty, name string) (string, bool) {
	for _, p := range props {
		if p.Name == name {
			return p.Value, true
		}
	}
	return "", false
}
