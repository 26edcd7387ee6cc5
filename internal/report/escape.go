package report

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/rocm/sgpu-queue/internal/textfmt"
)

// Tags and labels come from the suites' own scripts: they may hold anything. Every
// piece of them that reaches the report goes through one of these functions, one per
// context (Markdown prose, a table cell, a Mermaid task name, SVG text).

// maxShown bounds how much of one tag the report shows; the file names and the TSV
// files keep it whole.
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

// code is s as an inline code span: control characters and spaces made visible
// (quoted, as on the console), long values shortened, and a fence longer than any
// run of backticks inside, so nothing in s is read as Markdown or HTML.
func code(s string) string {
	s = shorten(textfmt.Printable(strings.ToValidUTF8(s, "\uFFFD")), maxShown)
	if s == "" {
		return "`\"\"`"
	}
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	if s[0] == '`' || s[len(s)-1] == '`' {
		// One space each side is stripped again by the renderer; s never begins or
		// ends with a space (Printable quotes those), so this cannot eat a real one.
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

// cell is code(s) made safe inside a GFM table cell: a pipe, even inside a code
// span, would end the cell unless escaped.
func cell(s string) string { return strings.ReplaceAll(code(s), "|", `\|`) }

// plain is s as Markdown prose (tool notes): HTML characters as entities, Markdown
// punctuation backslash-escaped, control characters and line breaks as spaces or
// U+FFFD, so a note stays one line of text.
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

// mermaidColon stands for ':' in a Mermaid section name, which cannot hold one
// (Mermaid reads ':' as the start of a task's data): U+A789, which reads the same.
const mermaidColon = "\uA789"

// mermaidGPU is a lane's GPU as a Mermaid section name: a merged run's "s2:1"
// keeps its look ("s2꞉1"), so that the chart names a shard's GPU as the tables and
// the SVG do (docs/files.md, "Merged runs").
func mermaidGPU(g string) string {
	parts := strings.Split(g, ":")
	for i, p := range parts {
		parts[i] = mermaidName(p, 24)
	}
	return strings.Join(parts, mermaidColon)
}

// mermaidName is s as a Mermaid gantt task name: only letters, digits and "._+=/-"
// survive (':' separates the task's data, ';' and '#' and '%' have their own
// meanings, anything else could reach the diagram's HTML); a name that would read
// as a keyword gets a prefix.
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

// xmlText is s for SVG text or an attribute value: shortened, control characters
// shown escaped, and &, <, >, quotes as references. (encoding/xml's EscapeText
// would turn control characters into U+FFFD; Printable keeps them readable.)
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
