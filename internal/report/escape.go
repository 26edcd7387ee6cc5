package report

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/rocm/sgpu-queue/internal/textfmt"
)

// Tags and labels come from the suites' scripts and may hold anything: each reaches the report through
// one escaper per context.

// maxShown bounds how much of one tag the report shows; files keep it whole.
const maxShown = 120

// shorten cuts s to at most n runes, marking the cut with "…".
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, k := 0, 0
	for i = range s {
		if k == n-1 {
			break
		}
		k++
	}
	return s[:i] + "…"
}

// code is s as an inline code span that nothing in s can break out of.
func code(s string) string {
	s = shorten(textfmt.Printable(strings.ToValidUTF8(s, "\uFFFD")), maxShown)
	if s == "" {
		return "`\"\"`"
	}
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	if s[0] == '`' || s[len(s)-1] == '`' {
		// The renderer strips one space each side; Printable quotes a leading or trailing space, so none is lost.
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// longestRun is the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	run, longest := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return longest
}

// cell is code(s) in a GFM table cell: a pipe, even in a code span, ends the cell.
func cell(s string) string { return strings.ReplaceAll(code(s), "|", `\|`) }

// plain is s as one line of Markdown prose, with no HTML or Markdown syntax.
func plain(s string) string {
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '\n' || r == '\r' || r == '\t':
			b.WriteByte(' ')
		case r < 0x80 && strings.ContainsRune("\\`*_[]{}()#+-.!|~\"'=:", r):
			b.WriteByte('\\')
			b.WriteRune(r)
		case !unicode.IsPrint(r) && r != ' ':
			b.WriteRune('\uFFFD')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// mermaidKeywords start a Mermaid gantt statement; a task name must not.
var mermaidKeywords = []string{
	"accdescr", "acctitle", "axisformat", "call", "click", "dateformat", "excludes",
	"gantt", "inclusiveenddates", "includes", "section", "tickinterval", "title",
	"todaymarker", "topaxis", "weekday", "weekend", "displaymode",
}

// mermaidColon stands for ':', which Mermaid reads as the start of a task's data.
const mermaidColon = "\uA789"

// mermaidGPU is a lane's GPU as a Mermaid section name, so "s2:1" reads as in the tables
// (docs/files.md, "Merged runs").
func mermaidGPU(g string) string {
	parts := strings.Split(g, ":")
	for i, p := range parts {
		parts[i] = mermaidName(p, 24)
	}
	return strings.Join(parts, mermaidColon)
}

// mermaidName is s as a Mermaid task name: only letters, digits and "._+=/-", and never a keyword.
func mermaidName(s string, n int) string {
	var b strings.Builder
	for i := 0; i < len(s) && b.Len() < n; i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._+=/-", c) >= 0 {
			b.WriteByte(c)
		} else {
			b.WriteByte('_')
		}
	}
	out := b.String()
	if out == "" {
		return "item"
	}
	low := strings.ToLower(out)
	for _, k := range mermaidKeywords {
		if strings.HasPrefix(low, k) {
			return "item_" + out
		}
	}
	return out
}

// xmlText is s for SVG text or an attribute; control characters are shown escaped, not turned into
// U+FFFD as encoding/xml would.
func xmlText(s string, n int) string {
	s = shorten(strings.ToValidUTF8(s, "\uFFFD"), n)
	if strings.ContainsFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f || !unicode.IsPrint(r) && r != ' ' }) {
		s = textfmt.Printable(s)
	}
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '"':
			b.WriteString("&quot;")
		case '\'':
			b.WriteString("&apos;")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
