package junit

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"
)

// limits bound what one input file may cost, so a hostile or looping writer cannot take the run down.
type limits struct {
	maxBytes int64 // file size
	maxDepth int   // element nesting
	maxNodes int   // elements + attributes
}

// MaxFileBytes is the largest JUnit file Merge reads; a larger one is an error case.
const MaxFileBytes = 64 << 20

// Bounds on the output kept per case and per suite (junit_logging=all logs every test); the end is kept, with a note.
const (
	maxCaseOutput  = 16 << 10
	maxSuiteOutput = 256 << 10
)

func defaultLimits() limits {
	return limits{
		maxBytes: MaxFileBytes,
		maxDepth: 64,      // JUnit nests 4-6 deep; tools with nested suites a few more
		maxNodes: 4 << 20, // a few hundred MiB of parsed cases at worst
	}
}

// readCapped reads at most lim bytes, so a file still growing after the size check is capped too.
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

// readJUnit reads and parses the file rel of fsys within lim.
func readJUnit(fsys fs.FS, rel string, lim limits) ([]xmlSuite, error) {
	data, err := readCapped(fsys, rel, lim.maxBytes)
	if err != nil {
		return nil, err
	}
	return parseJUnit(data, lim)
}

// parseJUnit turns one file's bytes into suites in one pass of encoding/xml's tokenizer. Nested suites are
// flattened (readers disagree on counting them). No DTD entity is expanded: billion laughs and XXE are syntax errors.
func parseJUnit(data []byte, lim limits) ([]xmlSuite, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("empty file (the writer was probably cut off before it wrote anything)")
	}
	p := &parser{lim: lim, dec: xml.NewDecoder(bytes.NewReader(data))}
	if err := p.run(); err != nil {
		return nil, err
	}
	switch {
	case p.root == "":
		return nil, errors.New("no XML element (the writer was probably cut off)")
	case p.found == 0 && p.root != "testsuites":
		return nil, fmt.Errorf("no <testsuite> element (the root is <%s>); not JUnit", p.root)
	}
	return p.out, nil
}

// frame is one open element.
type frame struct {
	name  string
	suite *suiteState // a suite that counts, open at this element
	cs    *xmlCase    // a test case that counts, open at this element
	res   *xmlResult  // a failure, error or skipped element being read
	text  *strings.Builder
	props *[]xmlProperty // the properties list of the enclosing suite or case
}

type suiteState struct {
	s      xmlSuite
	nested int // suites found directly inside it
	time   string
}

type parser struct {
	dec   *xml.Decoder
	lim   limits
	stack []frame
	root  string
	found int // suites that count
	nodes int
	out   []xmlSuite
}

func (p *parser) run() error {
	for {
		tok, err := p.dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if err := p.start(t); err != nil {
				return err
			}
		case xml.EndElement:
			p.end()
		case xml.CharData:
			if top := p.top(); top != nil && top.text != nil {
				top.text.Write(t)
			}
		}
	}
}

func (p *parser) top() *frame {
	if len(p.stack) == 0 {
		return nil
	}
	return &p.stack[len(p.stack)-1]
}

// inSuite reports whether any open element is a <testsuite>, counted or not.
func (p *parser) inSuite() bool {
	for _, f := range p.stack {
		if f.name == "testsuite" {
			return true
		}
	}
	return false
}

func (p *parser) start(t xml.StartElement) error {
	if len(p.stack) >= p.lim.maxDepth {
		line, _ := p.dec.InputPos()
		return fmt.Errorf("elements nested deeper than %d (line %d); not JUnit", p.lim.maxDepth, line)
	}
	p.nodes += 1 + len(t.Attr)
	if p.nodes > p.lim.maxNodes {
		return fmt.Errorf("more than %d elements and attributes; not read further", p.lim.maxNodes)
	}
	name := t.Name.Local
	if p.root == "" {
		p.root = name
	}
	parent := p.top()
	f := frame{name: name}
	switch {
	case name == "testsuite" && (!p.inSuite() || parent.suite != nil):
		if parent != nil && parent.suite != nil {
			parent.suite.nested++
		}
		f.suite = &suiteState{s: xmlSuite{
			Name:      clean(attr(t, "name")),
			Package:   clean(attr(t, "package")),
			Timestamp: clean(attr(t, "timestamp")),
			Hostname:  clean(attr(t, "hostname")),
		}, time: attr(t, "time")}
		p.found++
	case parent == nil:
	case name == "testcase" && parent.suite != nil:
		f.cs = &xmlCase{
			Name:      clean(attr(t, "name")),
			Classname: clean(attr(t, "classname")),
			File:      clean(attr(t, "file")),
			Line:      lineNumber(attr(t, "line")),
		}
		v, _ := parseSeconds(attr(t, "time"))
		f.cs.Time = seconds(v)
		f.cs.seconds = v
	case name == "properties" && parent.suite != nil:
		f.props = &parent.suite.s.Props
	case name == "properties" && parent.cs != nil:
		if parent.cs.Props == nil {
			parent.cs.Props = &xmlProps{}
		}
		f.props = &parent.cs.Props.List
	case name == "property" && parent.props != nil:
		*parent.props = append(*parent.props, xmlProperty{Name: clean(attr(t, "name")), Value: clean(attr(t, "value"))})
	case (name == "system-out" || name == "system-err") && (parent.suite != nil || parent.cs != nil):
		f.text = &strings.Builder{}
	case (name == "failure" || name == "error" || name == "skipped") && parent.cs != nil:
		f.res = &xmlResult{Message: clean(attr(t, "message")), Type: clean(attr(t, "type"))}
		f.text = &strings.Builder{}
	case parent.text != nil:
		// Markup inside text: its text still belongs to the body.
		f.text = parent.text
	}
	p.stack = append(p.stack, f)
	return nil
}

func (p *parser) end() {
	f := p.stack[len(p.stack)-1]
	p.stack = p.stack[:len(p.stack)-1]
	parent := p.top()
	switch {
	case f.suite != nil:
		p.finishSuite(f.suite)
	case f.cs != nil:
		if f.cs.Props != nil && len(f.cs.Props.List) == 0 {
			f.cs.Props = nil
		}
		parent.suite.s.Cases = append(parent.suite.s.Cases, *f.cs)
	case f.res != nil:
		addResult(parent.cs, f.name, f.res, f.text.String())
	case f.text != nil && parent != nil && parent.text != f.text:
		s := f.text.String()
		switch {
		case parent.cs != nil && f.name == "system-out":
			parent.cs.SystemOut += text(clean(s))
		case parent.cs != nil && f.name == "system-err":
			parent.cs.SystemErr += text(clean(s))
		case parent.suite != nil && f.name == "system-out":
			parent.suite.s.SystemOut += text(clean(s))
		case parent.suite != nil && f.name == "system-err":
			parent.suite.s.SystemErr += text(clean(s))
		}
	}
}

// addResult records a failure, error or skip; later ones of a kind append their bodies, so no failure is lost.
func addResult(c *xmlCase, kind string, r *xmlResult, body string) {
	r.Body = clean(body)
	slot := &c.Failure
	switch kind {
	case "error":
		slot = &c.Error
	case "skipped":
		slot = &c.Skipped
	}
	if *slot == nil {
		*slot = r
		return
	}
	more := r.Body
	if r.Message != "" {
		more = r.Message + "\n" + more
	}
	(*slot).Body += "\n\n" + more
}

// finishSuite bounds the suite's texts, sums its time, and drops a suite that only grouped others.
func (p *parser) finishSuite(st *suiteState) {
	s := st.s
	if len(s.Cases) == 0 && st.nested > 0 && s.SystemOut == "" && s.SystemErr == "" {
		return
	}
	var sum float64
	for i := range s.Cases {
		c := &s.Cases[i]
		sum += c.seconds
		c.SystemOut = bound(c.SystemOut, maxCaseOutput)
		c.SystemErr = bound(c.SystemErr, maxCaseOutput)
	}
	s.SystemOut = bound(s.SystemOut, maxSuiteOutput)
	s.SystemErr = bound(s.SystemErr, maxSuiteOutput)
	s.seconds = sum
	if v, ok := parseSeconds(st.time); ok {
		s.seconds = v
	}
	s.Time = seconds(s.seconds)
	s.count()
	p.out = append(p.out, s)
}

// bound keeps the last max bytes of t (at a character boundary) behind a note.
func bound(t text, max int) text {
	if len(t) <= max {
		return t
	}
	cut := len(t) - max
	for cut < len(t) && (t[cut]&0xC0) == 0x80 {
		cut++
	}
	return text(fmt.Sprintf("[sgpu-queue: the first %d bytes of this output were cut; the item log has it all]\n", cut)) + t[cut:]
}

func attr(t xml.StartElement, name string) string {
	for _, a := range t.Attr {
		if a.Name.Local == name && a.Name.Space == "" {
			return a.Value
		}
	}
	return ""
}

// lineNumber keeps a line attribute only when it is a number, as reporters place annotations from it.
func lineNumber(s string) string {
	s = strings.TrimSpace(s)
	n, err := strconv.ParseUint(s, 10, 31)
	if err != nil || n == 0 {
		return ""
	}
	return strconv.FormatUint(n, 10)
}

// parseSeconds reads a time attribute ("12.5", "1,234.5"); anything else is left to the sum of the cases.
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
