package mdcheck

import (
	"errors"
	"fmt"
	"html"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/rocm/sgpu-queue/internal/mdcut"
)

var (
	// atxHeading is a Markdown heading line.
	atxHeading = regexp.MustCompile(`^ {0,3}#{1,6}(?:[ \t]+(.*))?$`)
	// closingHashes is the optional closing sequence of a heading ("## Notes ##").
	closingHashes = regexp.MustCompile(`(?:^|[ \t]+)#+[ \t]*$`)
	// inlineLink is a link or image in heading text: only its text is rendered.
	inlineLink = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	// htmlTag is an HTML tag in heading text: dropped, its contents kept.
	htmlTag = regexp.MustCompile(`<[^>]*>`)
	// htmlID is an id or name attribute of an HTML element: an anchor too.
	htmlID = regexp.MustCompile(`(?i)<[a-z][^>]*?\s(?:id|name)\s*=\s*["']?([^"'\s>]+)`)
	// lineAnchor is GitHub's anchor of a line or lines of a file that is not Markdown.
	lineAnchor = regexp.MustCompile(`^L[0-9]+(?:-L[0-9]+)?$`)
	// scheme starts an absolute URL (https:, mailto:): not a file of the repository.
	scheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
)

// Anchors returns the anchors of md as GitHub gives them: one per heading (a
// repeated one gets "-1", "-2", …) and one per HTML id or name attribute.
func Anchors(md string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	eachTextLine(md, func(line string) {
		for _, m := range htmlID.FindAllStringSubmatch(mdcut.StripCodeSpans(line), -1) {
			out[m[1]] = true
		}
		m := atxHeading.FindStringSubmatch(line)
		if m == nil {
			return
		}
		base := Slug(closingHashes.ReplaceAllString(m[1], ""))
		slug := base
		for out[slug] {
			seen[base]++
			slug = fmt.Sprintf("%s-%d", base, seen[base])
		}
		out[slug] = true
	})
	return out
}

// Slug is GitHub's anchor of a heading's text: github-slugger's rule on the text as
// rendered, lower case, keeping letters, marks, digits, '_' and '-', each ' ' a '-'.
func Slug(heading string) string {
	var text strings.Builder
	for _, p := range mdcut.Spans(heading) {
		if p.Code {
			text.WriteString(p.Text)
			continue
		}
		t := inlineLink.ReplaceAllString(p.Text, "$1")
		text.WriteString(html.UnescapeString(htmlTag.ReplaceAllString(t, "")))
	}
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(text.String())) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || unicode.In(r, unicode.L, unicode.M, unicode.Nd, unicode.Pc):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Problem is a link of a page that leads nowhere.
type Problem struct {
	Page string // the page, relative to the root
	Line int
	Link string
	Why  string
}

func (p Problem) String() string {
	return fmt.Sprintf("%s:%d: link %q: %s", p.Page, p.Line, p.Link, p.Why)
}

// CheckLinks checks every link of the Markdown pages (relative to root) as GitHub
// resolves them: a relative target must name a file inside root, and a #anchor a
// heading or HTML id of that page, or a line anchor (#L10) of another file.
func CheckLinks(root string, pages []string) ([]Problem, error) {
	c := checker{root: root, anchors: map[string]map[string]bool{}}
	var out []Problem
	for _, page := range pages {
		data, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			return nil, err
		}
		for _, l := range numberedLinks(string(data)) {
			if why := c.check(page, l.target); why != "" {
				out = append(out, Problem{Page: page, Line: l.line, Link: l.target, Why: why})
			}
		}
	}
	return out, nil
}

// checker resolves links, keeping each page's anchors.
type checker struct {
	root    string
	anchors map[string]map[string]bool
}

// check says why target, a link of page, leads nowhere, or "".
func (c checker) check(page, target string) string {
	if scheme.MatchString(target) {
		return ""
	}
	if target == "" {
		return "empty target"
	}
	ref, anchor, _ := strings.Cut(target, "#")
	ref, _, _ = strings.Cut(ref, "?")
	path, err := url.PathUnescape(ref)
	if err != nil {
		return "bad percent-encoding: " + err.Error()
	}
	rel := page
	if path != "" {
		rel = filepath.Join(filepath.Dir(page), path)
		if strings.HasPrefix(path, "/") {
			rel = filepath.Clean(strings.TrimPrefix(path, "/"))
		}
		if rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return "outside the repository"
		}
		info, err := os.Stat(filepath.Join(c.root, rel))
		if err != nil {
			return "no such file or directory"
		}
		if info.IsDir() && anchor != "" {
			return "an anchor on a directory"
		}
	}
	if anchor == "" {
		return ""
	}
	if !strings.HasSuffix(strings.ToLower(rel), ".md") {
		if lineAnchor.MatchString(anchor) {
			return ""
		}
		return "an anchor on a file that is not Markdown (only #L<n> or #L<n>-L<m> lines)"
	}
	anchors, err := c.anchorsOf(rel)
	if err != nil {
		return err.Error()
	}
	if !anchors[anchor] {
		return fmt.Sprintf("no heading or id with anchor %s in %s%s", strconv.Quote(anchor), rel, near(anchors, anchor))
	}
	return ""
}

// anchorsOf returns the anchors of the Markdown file rel, read once.
func (c checker) anchorsOf(rel string) (map[string]bool, error) {
	if a, ok := c.anchors[rel]; ok {
		return a, nil
	}
	data, err := os.ReadFile(filepath.Join(c.root, rel))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errors.New("no such file")
	} else if err != nil {
		return nil, err
	}
	c.anchors[rel] = Anchors(string(data))
	return c.anchors[rel], nil
}

// near names an anchor that differs from want only in case or in '-', the usual
// slips, as a fix.
func near(anchors map[string]bool, want string) string {
	squash := func(s string) string { return strings.ReplaceAll(strings.ToLower(s), "-", "") }
	var close []string
	for a := range anchors {
		if squash(a) == squash(want) {
			close = append(close, "#"+a)
		}
	}
	if len(close) == 0 {
		return ""
	}
	sort.Strings(close)
	return fmt.Sprintf(" (did you mean %s?)", strings.Join(close, " or "))
}
