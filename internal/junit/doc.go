// Package junit merges the JUnit XML files of one suite's items into one document per suite (docs/files.md),
// turning what a reader would not see (no XML, a cut-off item, invalid files) into error cases. The output is
// valid against Jenkins' junit-10.xsd plus file, line and properties on <testcase> (testdata/junit-10-relaxed.xsd),
// which the JUnit reporters read to place annotations.
package junit

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/rocm/sgpu-queue/internal/safefs"
)

// Stats sums a merged document; junit-10.xsd has no skipped attribute on the root, so Skipped is per suite.
type Stats struct {
	Tests, Failures, Errors, Skipped int
	Seconds                          float64
	Files                            int // XML files of this run that were read
	Malformed                        int // of those, files that were not usable JUnit (or not readable)
}

// Doc is one merged suite document.
type Doc struct {
	root  xmlSuites
	stats Stats
}

// Stats returns the document's totals.
func (d *Doc) Stats() Stats { return d.stats }

// Encode writes the document as indented XML with an XML declaration.
func (d *Doc) Encode(w io.Writer) error {
	out, err := xml.MarshalIndent(&d.root, "", "  ")
	if err != nil {
		return fmt.Errorf("junit: encode %s: %w", d.root.Name, err)
	}
	var buf bytes.Buffer
	buf.Grow(len(xml.Header) + len(out) + 1)
	buf.WriteString(xml.Header)
	buf.Write(out)
	buf.WriteByte('\n')
	_, err = w.Write(buf.Bytes())
	return err
}

// WriteFile writes the document to path atomically and never through a link below root (safefs.WriteFile).
func (d *Doc) WriteFile(root, path string) error {
	var b bytes.Buffer
	if err := d.Encode(&b); err != nil {
		return fmt.Errorf("junit: write %s: %w", path, err)
	}
	if err := safefs.WriteFile(root, path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("junit: %w", err)
	}
	return nil
}

// The output model: field order is element order; see the package doc for the schema's additions.
type xmlSuites struct {
	XMLName  xml.Name   `xml:"testsuites"`
	Name     string     `xml:"name,attr"`
	Tests    int        `xml:"tests,attr"`
	Failures int        `xml:"failures,attr"`
	Errors   int        `xml:"errors,attr"`
	Time     string     `xml:"time,attr"`
	Suites   []xmlSuite `xml:"testsuite"`
}

type xmlSuite struct {
	Name      string        `xml:"name,attr"`
	Tests     int           `xml:"tests,attr"`
	Failures  int           `xml:"failures,attr"`
	Errors    int           `xml:"errors,attr"`
	Skipped   int           `xml:"skipped,attr"`
	Time      string        `xml:"time,attr"`
	Timestamp string        `xml:"timestamp,attr,omitempty"`
	Hostname  string        `xml:"hostname,attr,omitempty"`
	Package   string        `xml:"package,attr,omitempty"`
	Props     []xmlProperty `xml:"properties>property"`
	Cases     []xmlCase     `xml:"testcase"`
	SystemOut text          `xml:"system-out,omitempty"`
	SystemErr text          `xml:"system-err,omitempty"`

	seconds float64 // Time as a number, for the root sum
}

type xmlProps struct {
	List []xmlProperty `xml:"property"`
}

type xmlProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type xmlCase struct {
	Name      string     `xml:"name,attr"`
	Classname string     `xml:"classname,attr,omitempty"`
	Time      string     `xml:"time,attr"`
	File      string     `xml:"file,attr,omitempty"`
	Line      string     `xml:"line,attr,omitempty"`
	Props     *xmlProps  `xml:"properties"` // nil: none (a>b paths write an empty parent)
	Skipped   *xmlResult `xml:"skipped"`
	Failure   *xmlResult `xml:"failure"`
	Error     *xmlResult `xml:"error"`
	SystemOut text       `xml:"system-out,omitempty"`
	SystemErr text       `xml:"system-err,omitempty"`

	seconds float64 // Time as a number, for the suite's sum
}

type xmlResult struct {
	Message string `xml:"message,attr,omitempty"`
	Type    string `xml:"type,attr,omitempty"`
	Body    string `xml:",chardata"`
}

// MarshalXML writes the body with literal newlines (see text).
func (r xmlResult) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	if r.Message != "" {
		start.Attr = append(start.Attr, xml.Attr{Name: xml.Name{Local: "message"}, Value: r.Message})
	}
	if r.Type != "" {
		start.Attr = append(start.Attr, xml.Attr{Name: xml.Name{Local: "type"}, Value: r.Type})
	}
	return text(r.Body).MarshalXML(e, start)
}

// text is element content written as CharData, which keeps a stack trace's newlines literal
// (encoding/xml writes "&#xA;").
type text string

func (t text) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	if err := e.EncodeToken(start); err != nil {
		return err
	}
	if err := e.EncodeToken(xml.CharData(t)); err != nil {
		return err
	}
	return e.EncodeToken(start.End())
}

// count recomputes the suite's counters from its cases.
func (s *xmlSuite) count() {
	s.Tests, s.Failures, s.Errors, s.Skipped = len(s.Cases), 0, 0, 0
	for _, c := range s.Cases {
		switch {
		case c.Error != nil:
			s.Errors++
		case c.Failure != nil:
			s.Failures++
		case c.Skipped != nil:
			s.Skipped++
		}
	}
}

// seconds renders a duration as junit-10.xsd's SUREFIRE_TIME accepts: no sign, NaN or exponent.
func seconds(v float64) string {
	return strconv.FormatFloat(clampSeconds(v), 'f', 3, 64)
}

func clampSeconds(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0
	}
	return v
}
