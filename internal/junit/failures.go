package junit

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Failed is one failed or errored test case of a merged file, as the report shows it
// under its item (docs/report.md).
type Failed struct {
	Name    string // classname::name, or name alone
	Error   bool   // an <error>, not a <failure>
	Type    string // the type attribute ("AssertionError")
	Message string // the message attribute
	Body    string // the element's text (a traceback), bounded as the merge keeps it
}

// Failures are a merged file's failed test cases by the item that wrote them.
type Failures struct {
	Suite string              // the document's name: the suite's label
	Items map[string][]Failed // by sgpu.item (the tag, "whole" for an opaque item), in file order
}

// ToolType starts the type of every error case sgpu-queue adds itself (no XML, cut
// off, malformed, never ran): they say what the report already says from the run's
// own files, so ReadFailures leaves them out, but MalformedType.
const ToolType = "sgpu-queue."

// MalformedType is the error case of an item's file that cannot be parsed: the
// only place that says what is wrong with it, so the report shows it under the item
// (a bad-junit item, docs/outcomes.md).
const MalformedType = ToolType + "malformed-junit"

// ReadFailures reads a merged JUnit file (Merge's or Combine's) and returns its
// failed and errored test cases, grouped by the sgpu.item property of their suite;
// cases of a suite no item claimed, and the error cases sgpu-queue added (but an
// item's malformed file: MalformedType), are left out. The file is read within the limits of any JUnit input.
func ReadFailures(path string) (Failures, error) {
	lim := defaultLimits()
	data, err := readCapped(dirFS(filepath.Dir(path)), filepath.Base(path), lim.maxBytes)
	if err != nil {
		return Failures{}, fmt.Errorf("junit: %s: %w", path, err)
	}
	return failuresOf(data, lim)
}

func failuresOf(data []byte, lim limits) (Failures, error) {
	p := &parser{lim: lim}
	suites, err := p.parse(data)
	if err != nil {
		return Failures{}, err
	}
	f := Failures{Suite: p.rootName, Items: map[string][]Failed{}}
	for _, s := range suites {
		item, ok := propOf(s.Props, "sgpu.item")
		if !ok {
			continue
		}
		for _, c := range s.Cases {
			r, isErr := c.Failure, false
			if c.Error != nil {
				r, isErr = c.Error, true
			}
			if r == nil || strings.HasPrefix(r.Type, ToolType) && r.Type != MalformedType {
				continue
			}
			name := c.Name
			if c.Classname != "" {
				name = c.Classname + "::" + c.Name
			}
			f.Items[item] = append(f.Items[item], Failed{Name: name, Error: isErr, Type: r.Type, Message: r.Message, Body: r.Body})
		}
	}
	return f, nil
}

func propOf(props []xmlProperty, name string) (string, bool) {
	for _, p := range props {
		if p.Name == name {
			return p.Value, true
		}
	}
	return "", false
}
