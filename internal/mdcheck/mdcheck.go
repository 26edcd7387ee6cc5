// Package mdcheck holds what tests check of Markdown that GitHub shows (the job
// summary, a check run, a PR comment): there a relative link resolves nowhere.
package mdcheck

import (
	"regexp"
	"strings"
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
		line = StripCodeSpans(line)
		var targets []string
		for _, re := range []*regexp.Regexp{mdLink, refDef, htmlRef} {
			for _, m := range re.FindAllStringSubmatch(line, -1) {
				targets = append(targets, m[1])
			}
		}
		for _, t := range targets {
			low := strings.ToLower(t)
			if !strings.HasPrefix(low, "https://") && !strings.HasPrefix(low, "http://") && !strings.HasPrefix(t, "#") {
				bad = append(bad, t)
			}
		}
	}
	return bad
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
	var out strings.Builder
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
				closeAt = m
				break
			}
			k = m
		}
		if closeAt < 0 {
			out.WriteString(s[i:j])
			i = j
			continue
		}
		i = closeAt
	}
	return out.String()
}
