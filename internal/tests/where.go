package tests

import (
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/rocm/sgpu-queue/internal/junit"
)

// Source says how a test's place was found, in the order tried.
type Source int

// The sources of a test's place (docs/action.md, "Annotations").
const (
	FromJUnit     Source = iota // the JUnit file and line attributes
	FromNodeID                  // the file of its node id (a line from a traceback frame in it)
	FromTraceback               // the last `path:line:` frame of its failure in the repository
	FromItem                    // none: the caller places it at its item
)

// Where is a test's place in the repository: a slash path and a line (0: the whole file).
type Where struct {
	File string
	Line int
	From Source
}

// frame is a "path:line:" traceback or compiler line, or Python's `File "path", line N`.
var frame = regexp.MustCompile(`(?m)^\s*(?:([^\s:"'<>()]+\.[A-Za-z0-9]+):(\d+):|File "([^"\n]+)", line (\d+))`)

// Where is the test's place: its JUnit file and line, else its node id's file, else the last traceback frame in the
// repository, else FromItem. exists, when set, passes over paths not in the repository (a rootdir elsewhere).
func (t Test) Where(roots []string, exists func(string) bool) Where {
	ok := func(p string) bool { return p != "" && (exists == nil || exists(p)) }
	frames := framesOf(t.Body+"\n"+t.Message, roots)
	if f := repoPath(t.File, roots); ok(f) {
		if t.Line > 0 {
			return Where{File: f, Line: t.Line, From: FromJUnit}
		}
		return Where{File: f, Line: lineIn(frames, f), From: FromJUnit}
	}
	if file, _, _ := junit.NodeCase(t.ID); ok(repoPath(file, roots)) {
		f := repoPath(file, roots)
		return Where{File: f, Line: lineIn(frames, f), From: FromNodeID}
	}
	for i := len(frames) - 1; i >= 0; i-- {
		if fr := frames[i]; ok(fr.File) {
			return fr
		}
	}
	return Where{From: FromItem}
}

// framesOf are text's frames whose path is in the repository, in order.
func framesOf(text string, roots []string) []Where {
	var out []Where
	for _, m := range frame.FindAllStringSubmatch(text, -1) {
		p, l := m[1], m[2]
		if p == "" {
			p, l = m[3], m[4]
		}
		f := repoPath(p, roots)
		n, err := strconv.Atoi(l)
		if f == "" || err != nil || n < 1 || strings.Contains(f, "site-packages/") || strings.Contains(f, "dist-packages/") {
			continue
		}
		out = append(out, Where{File: f, Line: n, From: FromTraceback})
	}
	return out
}

// lineIn is the line of the last frame in f, named as is or relative to a folder of it; 0 if none.
func lineIn(frames []Where, f string) int {
	for i := len(frames) - 1; i >= 0; i-- {
		if fr := frames[i].File; fr == f || strings.HasSuffix(f, "/"+fr) {
			return frames[i].Line
		}
	}
	return 0
}

// repoPath is p relative to the repository; "" when absolute, outside or empty.
func repoPath(p string, roots []string) string {
	p = strings.ReplaceAll(strings.TrimSpace(p), "\\", "/")
	for _, r := range roots {
		r = strings.TrimRight(r, "/")
		if len(r) > 1 && strings.HasPrefix(p, r+"/") {
			p = p[len(r)+1:]
			break
		}
	}
	if p == "" || strings.HasPrefix(p, "/") || strings.ContainsAny(p, "\n\r\x00") {
		return ""
	}
	p = path.Clean(p)
	if p == "." || p == ".." || strings.HasPrefix(p, "../") {
		return ""
	}
	return p
}
