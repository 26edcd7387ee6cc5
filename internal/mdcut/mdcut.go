// Package mdcut cuts Markdown to a byte limit (GitHub's 65,535 or 1 MiB) and closes any code fence or <details>
// left open, so the cut note renders as text (docs/report.md).
package mdcut

import (
	"strings"

	"github.com/rocm/sgpu-queue/internal/textfmt"
)

// Cut returns md when it fits limit, else its longest prefix of whole lines that fits with the closers and note.
// Invalid UTF-8 becomes U+FFFD, as the API would refuse it.
func Cut(md string, limit int, note string) string {
	md = strings.ToValidUTF8(md, "\uFFFD")
	if len(md) <= limit {
		return md
	}
	if len(note) > limit {
		note = ""
	}
	var st state
	best, bestClose := -1, ""
	for pos := 0; pos < len(md); {
		end := strings.IndexByte(md[pos:], '\n')
		if end < 0 {
			break // the last line has no newline: md did not fit, so it is cut
		}
		next := pos + end + 1
		if next > limit {
			break
		}
		st.line(md[pos : next-1])
		if c := st.closers(); next+len(c)+len(note) <= limit {
			best, bestClose = next, c
		}
		pos = next
	}
	if best < 0 {
		return textfmt.Truncate(md, limit, note) // not one whole line fits
	}
	return md[:best] + bestClose + note
}

// state is what is open after the lines seen so far.
type state struct {
	fence   string // the open fence's run ("```", "~~~~"); "" outside a code block
	details int    // <details> elements open outside code
}

// closers is the text that closes what is open, starting on a line of its own.
func (s state) closers() string {
	var b strings.Builder
	if s.fence != "" {
		b.WriteString(s.fence + "\n")
	}
	for i := 0; i < s.details; i++ {
		b.WriteString("\n</details>\n")
	}
	return b.String()
}

// line advances the state over one line by CommonMark's rules for fenced code blocks.
func (s *state) line(l string) {
	l = strings.TrimRight(l, "\r")
	trimmed := strings.TrimLeft(l, " ")
	indented := len(l)-len(trimmed) <= 3
	if s.fence != "" {
		run := leadingRun(trimmed)
		if indented && run >= len(s.fence) && trimmed[0] == s.fence[0] && strings.TrimRight(trimmed[run:], " \t") == "" {
			s.fence = ""
		}
		return
	}
	if run := leadingRun(trimmed); indented && run >= 3 {
		if c := trimmed[0]; c == '~' || !strings.ContainsRune(trimmed[run:], '`') {
			s.fence = trimmed[:run]
			return
		}
	}
	opened, closed := detailsTags(l)
	s.details = max(0, s.details+opened-closed)
}

// leadingRun is the length of the run of '`' or '~' that starts l.
func leadingRun(l string) int {
	if l == "" || (l[0] != '`' && l[0] != '~') {
		return 0
	}
	return runEnd(l, 0)
}

// detailsTags counts a line's <details> and </details> tags outside its code spans.
func detailsTags(l string) (opened, closed int) {
	low := strings.ToLower(StripCodeSpans(l))
	for i := 0; i < len(low); i++ {
		switch {
		case strings.HasPrefix(low[i:], "</details>"):
			closed++
		case strings.HasPrefix(low[i:], "<details") && i+8 < len(low) && strings.IndexByte("> \t/", low[i+8]) >= 0:
			opened++
		case strings.HasPrefix(low[i:], "<details") && i+8 == len(low):
			opened++
		}
	}
	return opened, closed
}

// StripCodeSpans removes a line's code spans, leaving what a renderer reads as text or HTML.
func StripCodeSpans(l string) string {
	var b strings.Builder
	for _, p := range Spans(l) {
		if !p.Code {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// Span is a piece of a line: text, or the trimmed contents of a code span.
type Span struct {
	Text string
	Code bool
}

// Spans cuts a line at its code spans (CommonMark: a run of n backticks up to the next run of exactly n; an
// unclosed run is text).
func Spans(s string) []Span {
	var out []Span
	start := 0
	for i := 0; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		j := runEnd(s, i)
		closeAt := j
		for closeAt < len(s) && (s[closeAt] != '`' || runEnd(s, closeAt)-closeAt != j-i) {
			if s[closeAt] == '`' {
				closeAt = runEnd(s, closeAt)
			} else {
				closeAt++
			}
		}
		if closeAt >= len(s) {
			i = j
			continue
		}
		if i > start {
			out = append(out, Span{Text: s[start:i]})
		}
		out = append(out, Span{Text: strings.TrimSpace(s[j:closeAt]), Code: true})
		i = closeAt + (j - i)
		start = i
	}
	if start < len(s) {
		out = append(out, Span{Text: s[start:]})
	}
	return out
}

// runEnd is where the run of the byte at i ends.
func runEnd(s string, i int) int {
	j := i
	for j < len(s) && s[j] == s[i] {
		j++
	}
	return j
}
