package junit

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	gojunit "github.com/joshdk/go-junit"
)

// Limits bound what one input file may cost. go-junit keeps the raw inner XML
// of every element and a node per element, so memory grows with size × depth
// and with the element count; a truncated, looping or hostile writer must not
// take the run down with it.
type limits struct {
	maxBytes    int64 // file size
	maxDepth    int   // element nesting
	maxNodes    int   // elements + attributes
	maxInnerXML int64 // sum over elements of their inner XML length
}

// MaxFileBytes is the largest JUnit file Merge reads; a larger one becomes an
// error test case naming it.
const MaxFileBytes = 64 << 20

func defaultLimits() limits {
	return limits{
		maxBytes:    MaxFileBytes,
		maxDepth:    64,      // JUnit nests 4-6 deep; tools with nested suites a few more
		maxNodes:    4 << 20, // ~1 GiB of go-junit nodes at worst
		maxInnerXML: 8 * MaxFileBytes,
	}
}

// readCapped reads at most lim bytes of path; a longer file is an error, so a
// file still growing after the size check cannot exceed the cap either.
func readCapped(fsys fs.FS, name string, lim int64) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, lim+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > lim {
		return nil, fmt.Errorf("larger than the %s limit on one JUnit file; not read", humanBytes(lim))
	}
	return data, nil
}

func humanBytes(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return strconv.FormatInt(n>>20, 10) + " MiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// rawSuite is what go-junit drops from a <testsuite>: its own attributes
// (time, timestamp, hostname) once the suite has a <properties> child, and
// whether the Properties go-junit reports are properties or attributes.
type rawSuite struct {
	attrs    map[string]string
	hasProps bool
}

// prescan walks the tokens once with encoding/xml before go-junit sees the
// data: it enforces the limits, gives truncation and syntax errors with a line
// number, and records the raw suite attributes in the order go-junit visits
// the suites. encoding/xml neither expands DTD entities nor fetches external
// ones: a DOCTYPE is skipped, and a reference to an entity it declared (billion
// laughs, XXE) is a syntax error.
func prescan(data []byte, lim limits) ([]rawSuite, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("empty file (the writer was probably cut off before it wrote anything)")
	}
	var (
		out   []rawSuite
		stack []scanFrame
		nodes int
		inner int64
		root  string
	)
	dec := xml.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if len(stack) >= lim.maxDepth {
				return nil, fmt.Errorf("elements nested deeper than %d (line %d); not JUnit", lim.maxDepth, lineOf(dec))
			}
			nodes += 1 + len(t.Attr)
			if nodes > lim.maxNodes {
				return nil, fmt.Errorf("more than %d elements and attributes; not read further", lim.maxNodes)
			}
			if root == "" {
				root = t.Name.Local
			}
			f := scanFrame{name: t.Name.Local, suite: -1, start: dec.InputOffset()}
			var parent *scanFrame
			if len(stack) > 0 {
				parent = &stack[len(stack)-1]
			}
			switch {
			case f.name == "testsuite":
				// go-junit finds a suite by descending through anything but
				// suites, and inside a suite only looks at its direct children.
				if !insideSuite(stack) || (parent != nil && parent.seenSuite) {
					f.seenSuite = true
					f.suite = len(out)
					attrs := make(map[string]string, len(t.Attr))
					for _, a := range t.Attr {
						attrs[a.Name.Local] = a.Value
					}
					out = append(out, rawSuite{attrs: attrs})
				}
			case f.name == "properties" && parent != nil && parent.seenSuite:
				out[parent.suite].hasProps = true
			}
			stack = append(stack, f)
		case xml.EndElement:
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			inner += dec.InputOffset() - f.start
			if inner > lim.maxInnerXML {
				return nil, fmt.Errorf("content nested too deeply for its size; not JUnit")
			}
		}
	}
	switch {
	case root == "":
		return nil, errors.New("no XML element (the writer was probably cut off)")
	case len(out) == 0 && root != "testsuites":
		return nil, fmt.Errorf("no <testsuite> element (the root is <%s>); not JUnit", root)
	}
	return out, nil
}

type scanFrame struct {
	name      string
	seenSuite bool  // a <testsuite> go-junit ingests
	suite     int   // its index in the prescan result
	start     int64 // input offset after its start tag
}

func insideSuite(stack []scanFrame) bool {
	for _, f := range stack {
		if f.name == "testsuite" {
			return true
		}
	}
	return false
}

func lineOf(dec *xml.Decoder) int {
	line, _ := dec.InputPos()
	return line
}

// parseJUnit turns one file's bytes into output suites (without attribution).
func parseJUnit(data []byte, lim limits) (suites []xmlSuite, err error) {
	raw, err := prescan(data, lim)
	if err != nil {
		return nil, err
	}
	// go-junit is third-party code fed with outside input: a panic in it is
	// one more malformed file, not the end of the run.
	defer func() {
		if r := recover(); r != nil {
			suites, err = nil, fmt.Errorf("JUnit parser failed on this file: %v", r)
		}
	}()
	parsed, err := gojunit.Ingest(data)
	if err != nil {
		return nil, err
	}
	var flat []gojunit.Suite
	var walk func([]gojunit.Suite)
	walk = func(ss []gojunit.Suite) {
		for _, s := range ss {
			flat = append(flat, s)
			walk(s.Suites)
		}
	}
	walk(parsed)
	if len(flat) != len(raw) {
		raw = nil // the two views disagree: keep what go-junit gives, drop the extras
	}
	for i, s := range flat {
		var r rawSuite
		if raw != nil {
			r = raw[i]
		}
		// A suite that only groups nested suites says nothing of its own once
		// they are flattened next to it (and consumers disagree on how to count
		// nested suites, so they are never nested in the output).
		if len(s.Tests) == 0 && len(s.Suites) > 0 && s.SystemOut == "" && s.SystemErr == "" {
			continue
		}
		suites = append(suites, convertSuite(s, r))
	}
	return suites, nil
}

func convertSuite(s gojunit.Suite, r rawSuite) xmlSuite {
	out := xmlSuite{
		Name:      clean(s.Name),
		Package:   clean(s.Package),
		SystemOut: text(clean(s.SystemOut)),
		SystemErr: text(clean(s.SystemErr)),
	}
	// Without a <properties> child go-junit reports the suite's attributes as
	// its Properties, so only the prescan can tell which is which; when it has
	// no view of this suite, neither is kept.
	attrs := r.attrs
	out.Timestamp = clean(attrs["timestamp"])
	out.Hostname = clean(attrs["hostname"])
	if r.hasProps {
		names := make([]string, 0, len(s.Properties))
		for k := range s.Properties {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			out.Props = append(out.Props, xmlProperty{Name: clean(k), Value: clean(s.Properties[k])})
		}
	}
	var sum float64
	for _, t := range s.Tests {
		c := convertCase(t)
		sum += clampSeconds(t.Duration.Seconds())
		out.Cases = append(out.Cases, c)
	}
	out.seconds = sum
	if v, ok := parseSeconds(attrs["time"]); ok {
		out.seconds = v
	}
	out.Time = seconds(out.seconds)
	out.count()
	return out
}

func convertCase(t gojunit.Test) xmlCase {
	c := xmlCase{
		Name:      clean(t.Name),
		Classname: clean(t.Classname),
		Time:      seconds(t.Duration.Seconds()),
		SystemOut: text(clean(t.SystemOut)),
		SystemErr: text(clean(t.SystemErr)),
	}
	var e gojunit.Error
	switch v := t.Error.(type) {
	case gojunit.Error:
		e = v
	case *gojunit.Error:
		if v != nil {
			e = *v
		}
	}
	msg := e.Message
	if msg == "" {
		msg = t.Message
	}
	res := &xmlResult{Message: clean(msg), Type: clean(e.Type), Body: clean(e.Body)}
	switch t.Status {
	case gojunit.StatusSkipped:
		c.Skipped = &xmlResult{Message: clean(t.Message)} // go-junit keeps no skip body or type
	case gojunit.StatusFailed:
		c.Failure = res
	case gojunit.StatusError:
		c.Error = res
	}
	return c
}

// parseSeconds reads a time attribute as the JUnit writers spell it ("12.5",
// "1,234.5"); anything else is left to the sum of the cases.
func parseSeconds(s string) (float64, bool) {
	s = strings.ReplaceAll(strings.TrimSpace(s), ",", "")
	if s == "" {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v != clampSeconds(v) {
		return 0, false
	}
	return v, true
}
