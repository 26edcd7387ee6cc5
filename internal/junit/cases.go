package junit

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// ToolType starts the type of every error case sgpu-queue adds; those about an item are no test
// (Case.AboutItem), UnfinishedType is one.
const ToolType = "sgpu-queue."

// MalformedType is the error case of an unparsable file; it counts as an errored test, as nothing else
// says what is wrong.
const MalformedType = ToolType + "malformed-junit"

// CaseResult is how one test case ended: as its JUnit file says, or unfinished when its item died in it.
type CaseResult int

// The results of a test case; with several result elements the worst counts.
const (
	CasePassed CaseResult = iota
	CaseSkipped
	CaseFailed
	CaseErrored
	CaseUnfinished // UnfinishedType: a test its item died in
)

func (r CaseResult) String() string {
	return [...]string{"passed", "skipped", "failed", "errored", "unfinished"}[r]
}

// Bad reports whether the result fails the test: failed, errored or unfinished.
func (r CaseResult) Bad() bool { return r >= CaseFailed }

// Case is one test case of an item's JUnit file, as a re-run names it (docs/adapters.md, "Re-runs").
type Case struct {
	File      string // the file attribute (pytest's xunit1 family, gtest); "" when none
	Line      int    // the line attribute; 0 when none or not a line number
	Classname string
	Name      string
	Result    CaseResult
	// Message, Type and Body are the result element's message, type and text (bounded as the merge keeps it).
	Message, Type, Body string
	// Tag is the sgpu.item property: the tag of the item that wrote it; "" when none says.
	Tag string
}

// ReadCases reads every test case of one JUnit file, in file order, within Merge's limits.
func ReadCases(path string) ([]Case, error) {
	suites, err := readJUnit(dirFS(filepath.Dir(path)), filepath.Base(path), defaultLimits())
	if err != nil {
		return nil, fmt.Errorf("junit: %s: %w", path, err)
	}
	return casesOf(suites), nil
}

func casesOf(suites []xmlSuite) []Case {
	var out []Case
	for _, s := range suites {
		item, _ := propOf(s.Props, "sgpu.item")
		for _, c := range s.Cases {
			line, _ := strconv.Atoi(c.Line) // lineNumber kept only a number
			k := Case{File: c.File, Line: line, Classname: c.Classname, Name: c.Name, Tag: item}
			for _, r := range []struct {
				res *xmlResult
				is  CaseResult
			}{{c.Error, CaseErrored}, {c.Failure, CaseFailed}, {c.Skipped, CaseSkipped}} {
				if r.res != nil {
					k.Result, k.Message, k.Type, k.Body = r.is, r.res.Message, r.res.Type, r.res.Body
					break
				}
			}
			switch k.Type {
			case UnfinishedType:
				k.Result = CaseUnfinished
			case MalformedType:
				k.Result = CaseErrored
			}
			out = append(out, k)
		}
	}
	return out
}

// AboutItem reports whether the case is one sgpu-queue added about an item, not a test; a malformed file's and
// an unfinished test's are tests.
func (c Case) AboutItem() bool {
	return strings.HasPrefix(c.Type, ToolType) && c.Type != UnfinishedType && c.Type != MalformedType
}

// FailedCases reads one JUnit file's failed and errored cases, and how many cases it holds.
func FailedCases(path string) (failed []Case, total int, err error) {
	cases, err := ReadCases(path)
	if err != nil {
		return nil, 0, err
	}
	for _, c := range cases {
		if c.Result.Bad() {
			failed = append(failed, c)
		}
	}
	return failed, len(cases), nil
}

// PytestNodeID is a case's pytest node id from its xunit1 file and classname ("tests/test_x.py::TestA::test_n[1]");
// false when the classname does not start with the file's dotted form (an inherited test, a collection error,
// --junit-prefix) or there is no file attribute (xunit2).
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
