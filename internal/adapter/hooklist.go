package adapter

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/executor"
	"github.com/rocm/sgpu-queue/internal/hook"
	"github.com/rocm/sgpu-queue/internal/textfmt"
)

// A hook-contract suite's listing (docs/hooks.md, "Listing"): one "<marker> <tag>" line per item.

// NoItems is the error of a list suite whose listing printed no item; tail is its output's last lines.
func NoItems(h Hook, s config.Suite, tail string) *Error {
	return fail(s, nil, tail, "its listing (%s=1) printed no %q line: check that the script honours the hook contract at level %s",
		h.Names.ListItems, h.Names.ItemMarker+" <tag>", h.Level)
}

// Pass is one listing pass of a suite.
type Pass struct {
	// Census asks what exists at this level; otherwise what this host will run.
	Census bool
	// Tag, when set, lists with that item's filter (sgpu-queue verify's re-entry).
	Tag string
}

func (p Pass) name() string {
	if p.Census {
		return "census"
	}
	return "queue"
}

// switches are the listing's variables as messages name them.
func (p Pass) switches(h hook.Names) string {
	s := h.ListItems + "=1"
	if p.Tag != "" {
		s += " " + h.Filter + "=" + hook.FilterPattern(p.Tag)
	}
	return s
}

// ListPass runs one listing pass under in.Timeout and returns its stdout and last lines; the rest goes to in.Log,
// so passes run at once need a Log each.
func ListPass(ctx context.Context, ex executor.Executor, in Listing, s config.Suite, p Pass) ([]byte, string, error) {
	pass, h := p.name(), in.Hook
	log := in.Log
	if log == nil {
		log = io.Discard
	}
	// One line, shell-quoted as the config quotes it, as the tools' listings' headers are.
	fmt.Fprintf(log, "### %s %s: %s\n", s.Label, pass, config.QuoteWords(append([]string{s.Path}, s.Args...)))
	base := s.Environ(h.Base).With(h.Pin...)
	env := h.Names.ListEnv(base, h.Level, s.GPUKind(), p.Census)
	if p.Tag != "" {
		env = h.Names.VerifyEnv(base, h.Level, s.GPUKind(), p.Tag, p.Census)
	}
	tail := &textfmt.Tail{}
	out := &textfmt.Capped{Max: maxListing}
	lctx, cancel := executor.Deadline(ctx, in.Timeout, errDeadline)
	defer cancel()
	res, err := ex.Run(lctx, executor.Command{
		Name:   fmt.Sprintf("suite %q %s listing", s.Label, pass),
		Path:   s.Path,
		Args:   s.Args,
		Env:    env,
		Dir:    in.Dir,
		Stdout: io.MultiWriter(out, tail),
		Stderr: io.MultiWriter(log, tail),
	})
	if err != nil {
		return nil, "", fail(s, err, "", "cannot run its %s listing: %v", pass, err)
	}
	for _, line := range strings.SplitAfter(string(out.Bytes()), "\n") {
		if line != "" && !strings.HasPrefix(line, h.Names.ItemMarker+" ") {
			io.WriteString(log, line)
		}
	}
	if res.Cancelled && executor.PastDeadline(ctx, lctx, errDeadline) {
		e := fail(s, nil, tail.String(), "its %s listing (%s=1) did not end within %s (list-timeout) and was stopped",
			pass, h.Names.ListItems, in.Timeout)
		e.TimedOut = true
		return nil, tail.String(), e
	}
	if res.Cancelled || ctx.Err() != nil {
		return nil, "", fail(s, context.Cause(ctx), "", "%s listing cancelled", pass)
	}
	if res.ExitCode != 0 {
		return nil, tail.String(), fail(s, nil, tail.String(), "its %s listing (%s) exited with %d; it must list its items and exit 0",
			pass, p.switches(h.Names), res.ExitCode)
	}
	if out.Over() {
		return nil, "", fail(s, nil, "", "its %s listing printed more than %d MiB", pass, maxListing>>20)
	}
	return out.Bytes(), tail.String(), nil
}

// Line is one item line of a listing.
type Line struct {
	Tag string
	// GPUs is the line's count (gpus=N, or TE's bare N), 0 for none; All is gpus=all.
	GPUs int
	All  bool
	// Bad is a last word that gives no valid GPU count, with why: the listing is refused.
	Bad string
}

// Err is the error of an item whose line gives a bad width; nil when fine.
func (l Line) Err(s config.Suite, marker string) error {
	if l.Bad == "" {
		return nil
	}
	return fail(s, nil, "",
		"item %s: its listing line (%s %s …) gives the width %s; print a GPU count from 1 to %d after the tag, or none",
		textfmt.Printable(l.Tag), marker, textfmt.Printable(l.Tag), l.Bad, config.MaxGPUs)
}

// Tags are the tags of ls, in order.
func Tags(ls []Line) []string {
	tags := make([]string, len(ls))
	for i, l := range ls {
		tags[i] = l.Tag
	}
	return tags
}

// ParseListing returns the item lines in order, a duplicate tag's first kept; tags stay byte for byte.
// Lines easy to misread (a width-like word inside the tag, a tag again with another width) get a warning.
func ParseListing(out []byte, marker string) (items []Line, warnings []string) {
	type first struct {
		line int
		l    Line
	}
	seen := map[string]first{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		l, item := ItemLine(sc.Text(), marker)
		f, dup := seen[l.Tag]
		switch {
		case !item:
		case l.Tag == "":
			warnings = append(warnings, fmt.Sprintf("line %d: %q without a tag, ignored", n, marker))
		case dup && l.width() != f.l.width():
			warnings = append(warnings, fmt.Sprintf("line %d: tag %q listed again with %s (line %d gave %s): queued once, as line %d "+
				"gives it; give each width a tag of its own", n, l.Tag, l.width(), f.line, f.l.width(), f.line))
		case dup:
			warnings = append(warnings,
				fmt.Sprintf("line %d: duplicate tag %q, queued once (its dispatch runs every call line of that tag)", n, l.Tag))
		default:
			seen[l.Tag] = first{line: n, l: l}
			items = append(items, l)
			if w := widthInTag(l); w != "" {
				warnings = append(warnings, fmt.Sprintf("line %d: tag %q read whole: its word %q is not the line's last, and only the "+
					"last word gives a width (%s <tag> <N>, or gpus=N); if %s is the item's width, print it last", n, l.Tag, w, marker, w))
			}
		}
	}
	if err := sc.Err(); err != nil {
		warnings = append(warnings, fmt.Sprintf("line %d: %v; the rest of the listing is ignored", n+1, err))
	}
	return items, warnings
}

// width says what width a line gave, for a message.
func (l Line) width() string {
	switch {
	case l.Bad != "":
		return "the width " + l.Bad
	case l.All:
		return "gpus=all"
	case l.GPUs > 0:
		return fmt.Sprintf("gpus=%d", l.GPUs)
	}
	return "no width"
}

// widthInTag is a width-like word inside the tag of a line that gave no width ("tag 4 extra"); "" for none.
func widthInTag(l Line) string {
	if l.GPUs > 0 || l.All || l.Bad != "" {
		return ""
	}
	words := strings.Fields(l.Tag)
	if len(words) < 2 {
		return ""
	}
	for _, w := range words {
		if numberWord(w) || strings.HasPrefix(w, gpusWord) {
			return w
		}
	}
	return ""
}

// gpusWord starts the word of a listing line that gives the item's GPU count.
const gpusWord = "gpus="

// ItemLine reads one listing line (docs/hooks.md "Listing"): "<marker> <tag>", with an optional last word
// "gpus=<count>" or TE's bare number as the GPU count. A bad count sets Line.Bad; item is false for other lines.
func ItemLine(line, marker string) (l Line, item bool) {
	rest, ok := strings.CutPrefix(line, marker)
	if !ok || rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return Line{}, false
	}
	rest = strings.TrimSpace(rest)
	cut := strings.LastIndexAny(rest, " \t\r\n\v\f")
	word := rest[cut+1:]
	count, isGPUs := strings.CutPrefix(word, gpusWord)
	if !isGPUs && (cut < 0 || !numberWord(word)) {
		return Line{Tag: rest}, true
	}
	l.Tag = strings.TrimSpace(rest[:max(cut, 0)])
	if !isGPUs {
		count = word
	}
	n, all, err := config.ParseGPUs(count)
	if err != nil {
		l.Bad = fmt.Sprintf("%q (%v)", word, err)
		return l, true
	}
	l.GPUs, l.All = n, all
	return l, true
}

// numberWord reports whether w is a whole number, signed or zero-led, as TE's scripts print a width.
func numberWord(w string) bool {
	w = strings.TrimLeft(w, "+-")
	if w == "" {
		return false
	}
	for _, r := range w {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// ItemTag reads one listing line as ItemLine does and returns its tag alone.
func ItemTag(line, marker string) (tag string, item bool) {
	l, item := ItemLine(line, marker)
	return l.Tag, item
}
