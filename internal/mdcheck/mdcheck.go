// Package mdcheck holds what tests check of Markdown that GitHub shows: in the job
// summary, a check run or a PR comment a relative link resolves nowhere; in the
// repository's own README and docs every link must reach its file and heading.
package mdcheck

import (
	"regexp"
	"strings"

	"github.com/rocm/sgpu-queue/internal/mdcut"
)

var (
	// mdLink is a Markdown link or image target: ](target or ](<target with spaces>.
	mdLink = regexp.MustCompile(`\]\(\s*(?:<([^>\n]*)>|([^)\s>]*))`)
	// refDef is a link reference definition: [name]: target.
	refDef = regexp.MustCompile(`^ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)`)
	// htmlRef is an href or src attribute.
	htmlRef = regexp.MustCompile(`(?i)\b(?:href|src)\s*=\s*["']?([^"'\s>]*)`)
)

// RelativeLinks returns every link target in md that is not an absolute http(s)
// URL or an anchor of the page itself.
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

// Links returns every link target in md, in order, outside code blocks and spans.
func Links(md string) []string {
	var targets []string
	for _, l := range numberedLinks(md) {
		targets = append(targets, l.target)
	}
	return targets
}

type link struct {
	line   int
	target string
}

// numberedLinks is Links with the line of each target.
func numberedLinks(md string) []link {
	var out []link
	eachNumberedLine(md, func(n int, line string) {
		line = mdcut.StripCodeSpans(line)
		for _, re := range []*regexp.Regexp{mdLink, refDef, htmlRef} {
			for _, m := range re.FindAllStringSubmatch(line, -1) {
				out = append(out, link{n, m[1] + strings.Join(m[2:], "")})
			}
		}
	})
	return out
}

// eachTextLine calls fn with each line of md outside fenced code blocks.
func eachTextLine(md string, fn func(line string)) {
	eachNumberedLine(md, func(_ int, line string) { fn(line) })
}

// eachNumberedLine calls fn with each line of md outside fenced code blocks and its
// number.
func eachNumberedLine(md string, fn func(n int, line string)) {
	fence := ""
	for i, line := range strings.Split(md, "\n") {
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
		fn(i+1, line)
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

// CodeSpans returns the contents of the code spans of one line, trimmed.
func CodeSpans(s string) []string {
	var spans []string
	for _, p := range mdcut.Spans(s) {
		if p.Code {
			spans = append(spans, p.Text)
		}
	}
	return spans
}
