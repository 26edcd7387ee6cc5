// Package mdcut cuts Markdown to a byte limit (GitHub's 65,535 or 1 MiB) and closes any code fence or <details>
// left open, so the cut note renders as text (docs/report.md).
package mdcut

import (
	"strings"
	"unicode/utf8"
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
		// Not one whole line fits: cut the first at a character boundary.
		cut := limit - len(note)
		for cut > 0 && !utf8.RuneStart(md[cut]) {
			cut--
		}
		return md[:max(cut, 0)] + note
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
	n := 0
	for n < len(l) && l[n] == l[0] {
		n++
	}
	return n
}

// detailsTags counts a line's <details> and </details> tags outside its code spans.
func detailsTags(l string) (opened, closed int) {
	low := strings.ToLower(stripCodeSpans(l))
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

// stripCodeSpans blanks a line's code spans; an unmatched backtick run is literal.
func stripCodeSpans(l string) string {
	var b strings.Builder
	for i := 0; i < len(l); {
		if l[i] != '`' {
			b.WriteByte(l[i])
			i++
			continue
		}
		n := 0
		for i+n < len(l) && l[i+n] == '`' {
			n++
		}
		if end := closingRun(l, i+n, n); end >= 0 {
			i = end + n
			continue
		}
		b.WriteString(l[i : i+n])
		i += n
	}
	return b.String()
}

// closingRun is where the next run of exactly n backticks from from starts; -1 when none.
func closingRun(l string, from, n int) int {
	for j := from; j < len(l); {
		if l[j] != '`' {
			j++
			continue
		}
		k := j
		for k < len(l) && l[k] == '`' {
			k++
		}
		if k-j == n {
			return j
		}
		j = k
	}
	return -1
}
