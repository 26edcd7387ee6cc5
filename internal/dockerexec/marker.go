package dockerexec

import (
	"bytes"
	"io"
	"strconv"
	"strings"
)

// The launcher reports on stderr in lines that start with an ASCII record separator, taken out of the stream:
// first "pgid=N" (or a failure), last "exit=N". A stream without the last means the container died.
const markerPrefix = "\x1esgpu-queue:"

// What the launcher can report first.
const (
	markNone     = ""         // no report: the launcher did not run
	markPgid     = "pgid"     // the program runs as leader of process group pgid
	markNotFound = "notfound" // the program does not exist in the container
	markNoDir    = "nodir"    // the working directory does not exist in the container
	markNoSetsid = "nosetsid" // the container has no setsid
)

const trailerPrefix = markerPrefix + "exit="

// maxMarker bounds how much of stderr is held back as a possible report.
const maxMarker = 64

// parseMarker reads the first report line (without its newline).
func parseMarker(line string) (kind string, pgid int, ok bool) {
	rest, found := strings.CutPrefix(line, markerPrefix)
	if !found {
		return markNone, 0, false
	}
	switch rest {
	case markNotFound, markNoDir, markNoSetsid:
		return rest, 0, true
	}
	if n, found := strings.CutPrefix(rest, markPgid+"="); found {
		if v, ok := number(n); ok && v > 1 {
			return markPgid, v, true
		}
	}
	return markNone, 0, false
}

// parseTrailer reads the last report line (with its newline).
func parseTrailer(b []byte) (code int, ok bool) {
	n, found := strings.CutPrefix(string(b), trailerPrefix)
	if !found || !strings.HasSuffix(n, "\n") {
		return 0, false
	}
	v, ok := number(strings.TrimSuffix(n, "\n"))
	return v, ok && v <= 255
}

// number parses a plain decimal (no sign, no leading zeros).
func number(s string) (int, bool) {
	v, err := strconv.Atoi(s)
	return v, err == nil && v >= 0 && strconv.Itoa(v) == s
}

// couldBeTrailer tells whether b may still grow into the last report line.
func couldBeTrailer(b []byte) bool {
	n := min(len(b), len(trailerPrefix))
	if string(b[:n]) != trailerPrefix[:n] {
		return false
	}
	digits := b[n:]
	for i, c := range digits {
		if c == '\n' {
			return i > 0 && i == len(digits)-1
		}
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// marker passes stderr to w without the launcher's reports. ready closes once the first report is known; hint is
// set when held-back text reads as the last report, which Run confirms with the engine, as a program may print one.
type marker struct {
	w     io.Writer
	head  []byte // held back: maybe the first report
	tail  []byte // held back: maybe the last report
	done  bool   // the first report is settled
	ready chan struct{}
	hint  chan struct{}
	kind  string
	pgid  int
	ended bool // the last report came
	exit  int
}

func newMarker(w io.Writer) *marker {
	return &marker{w: w, ready: make(chan struct{}), hint: make(chan struct{}, 1)}
}

func (m *marker) Write(p []byte) (int, error) {
	if m.done {
		return len(p), m.body(p)
	}
	m.head = append(m.head, p...)
	i := bytes.IndexByte(m.head, '\n')
	if i < 0 && len(m.head) < maxMarker && strings.HasPrefix(markerPrefix, string(m.head[:min(len(m.head), len(markerPrefix))])) {
		return len(p), nil // could still be the report: wait for the rest of the line
	}
	rest := m.head
	if i >= 0 {
		if kind, pgid, ok := parseMarker(string(m.head[:i])); ok {
			m.kind, m.pgid = kind, pgid
			rest = m.head[i+1:]
		}
	}
	m.settle()
	return len(p), m.body(rest)
}

// body passes on p, holding back a trailing piece that may be the last report.
func (m *marker) body(p []byte) error {
	data := p
	if len(m.tail) > 0 {
		data = append(m.tail, p...)
		m.tail = nil
	}
	if i := bytes.LastIndexByte(data, markerPrefix[0]); i >= 0 && len(data)-i <= maxMarker && couldBeTrailer(data[i:]) {
		m.tail = append([]byte(nil), data[i:]...)
		data = data[:i]
		if _, ok := parseTrailer(m.tail); ok {
			select {
			case m.hint <- struct{}{}:
			default:
			}
		}
	}
	if len(data) == 0 {
		return nil
	}
	_, err := m.w.Write(data)
	return err
}

// finish passes on what is still held back; call it once the stream has ended.
func (m *marker) finish() error {
	if !m.done {
		rest := m.head
		m.settle()
		if err := m.body(rest); err != nil {
			return err
		}
	}
	if code, ok := parseTrailer(m.tail); ok {
		m.ended, m.exit = true, code
		m.tail = nil
		return nil
	}
	tail := m.tail
	m.tail = nil
	if len(tail) > 0 {
		_, err := m.w.Write(tail)
		return err
	}
	return nil
}

func (m *marker) settle() {
	m.done = true
	m.head = nil
	close(m.ready)
}
