// Package mdcheck holds what tests check of Markdown that GitHub shows: in the job
// summary, a check run or a PR comment a relative link resolves nowhere; in the
// repository's own README and docs every link must reach its file and heading.
package mdcheck

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

var (
	// mdLink is a Markdown link or image target: ](target.
	mdLink = regexp.MustCompile(`\]\(\s*<?([^)\s>]*)`)
	// refDef is a link reference definition: [name]: target.
	refDef = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)`)
	// htmlRef is an href or src attribute.
	htmlRef = regexp.MustCompile(`(?i)\b(?:href|src)\s*=\s*["']?([^"'\s>]*)`)
)

// RelativeLinks returns every link target in md that is not an absolute http(s)
// URL or an anchor of the page itself: Markdown links and images, reference
// definitions, and href/src attributes. Fenced code blocks and code spans are
// text, not links, and are skipped.
func RelativeLinks(md string) []string {
	var bad []string
	for _, t := range Links(md) {
		low := strings.ToLower(t)
		if !strings.HasPrefix(low, "https://") && !strings.HasPrefix(low, "http://") && !strings.HasPrefix(t, "#") {
			bad = append(bad, t)
		}
	}
	return bad
}

// Links returns every link target in md, in order: Markdown links and images,
// reference definitions, and href/src attributes, outside fenced code blocks and
// code spans.
func Links(md string) []string {
	var targets []string
	eachTextLine(md, func(line string) {
		line = StripCodeSpans(line)
		for _, re := range []*regexp.Regexp{mdLink, refDef, htmlRef} {
			for _, m := range re.FindAllStringSubmatch(line, -1) {
				targets = append(targets, m[1])
			}
		}
	})
	return targets
}

// Anchors returns the anchors GitHub gives the headings of md ("## Files written
// (TE's layout)" → "files-written-tes-layout"; a repeated one gets "-1", "-2", …).
func Anchors(md string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	eachTextLine(md, func(line string) {
		text, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " ")
		if !ok || !strings.HasPrefix(line, "#") || len(line)-len(strings.TrimLeft(line, "#")) > 6 {
			return
		}
		slug := slugify(strings.TrimSpace(text))
		if n := seen[slug]; n > 0 {
			out[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	})
	return out
}

// slugify is GitHub's heading anchor: lower case, code-span backticks dropped, every
// character but letters, digits, marks, '_', '-' and spaces dropped, spaces '-'.
func slugify(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// eachTextLine calls fn with each line of md outside fenced code blocks.
func eachTextLine(md string, fn func(line string)) {
	fence := ""
	for _, line := range strings.Split(md, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]) == "" {
				fence = ""
			}
			continue
		}
		if f := fenceOf(trimmed); f != "" {
			fence = f
			continue
		}
		fn(line)
	}
}

// fenceOf is the fence a line opens ("```", "~~~~"), or "".
func fenceOf(line string) string {
	for _, c := range []string{"`", "~"} {
		n := len(line) - len(strings.TrimLeft(line, c))
		if n >= 3 {
			return strings.Repeat(c, n)
		}
	}
	return ""
}

// StripCodeSpans removes code spans (CommonMark: a run of n backticks up to the
// next run of exactly n), leaving what a renderer reads as text or HTML.
func StripCodeSpans(s string) string {
	text, _ := codeSpans(s)
	return text
}

// CodeSpans returns the contents of the code spans of one line, trimmed.
func CodeSpans(s string) []string {
	_, spans := codeSpans(s)
	return spans
}

// codeSpans splits a line into its text outside code spans and the spans' contents.
func codeSpans(s string) (string, []string) {
	var out strings.Builder
	var spans []string
	for i := 0; i < len(s); {
		if s[i] != '`' {
			out.WriteByte(s[i])
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] == '`' {
			j++
		}
		closeAt := -1
		for k := j; k < len(s); {
			if s[k] != '`' {
				k++
				continue
			}
			m := k
			for m < len(s) && s[m] == '`' {
				m++
			}
			if m-k == j-i {
				closeAt = k
				break
			}
			k = m
		}
		if closeAt < 0 {
			out.WriteString(s[i:j])
			i = j
			continue
		}
		spans = append(spans, strings.TrimSpace(s[j:closeAt]))
		i = closeAt + (j - i)
	}
	return out.String(), spans
}
