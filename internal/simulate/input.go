package simulate

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/schedule"
	"github.com/rocm/sgpu-queue/internal/weights"
)

// Input is a weight table seen as a run's queue: one known item per key, in the
// file's order (which is the listing order ties keep, and the suites' config order).
type Input struct {
	Name   string
	Items  []schedule.Item // Seq is the position in the file; GPUs from its gpus= column
	Suites []string        // labels, in order of first appearance
	Suite  []int           // by item: its index in Suites
	// All marks the items whose line said gpus=all: they take every GPU simulated.
	All []bool
}

// ItemsOn returns the items with gpus=all resolved to a pool of gpus GPUs, or a
// *schedule.WidthError for the first item that needs more.
func (in *Input) ItemsOn(gpus int) ([]schedule.Item, error) {
	items := in.Items
	if slices.Contains(in.All, true) {
		items = slices.Clone(items)
		for i := range items {
			if in.All[i] {
				items[i].GPUs = gpus
			}
		}
	}
	if err := schedule.CheckWidths(items, gpus); err != nil {
		return nil, err
	}
	return items, nil
}

// maxInput bounds what Load reads, so that a wrong path (a disk image) fails fast.
const maxInput = 256 << 20

// Load reads a weight table (docs/weights.md), corrupt lines as warnings, with an
// optional third column gpus=N or gpus=all that only simulate's input has.
func Load(r io.Reader, name string) (*Input, []string, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxInput+1))
	if err != nil {
		return nil, nil, fmt.Errorf("weights %s: %w", name, err)
	}
	if len(data) > maxInput {
		return nil, nil, fmt.Errorf("weights %s: larger than %d MiB, not a weight table", name, maxInput>>20)
	}
	data, gpus, warns := splitGPUs(data, name)
	t, more := weights.Parse(bytes.NewReader(data), name)
	warns = append(warns, more...)
	slices.SortStableFunc(warns, func(a, b string) int { return lineOf(a, name) - lineOf(b, name) })
	in := &Input{Name: name}
	seen := make(map[string]bool, t.Len())
	items := make(map[string]string, t.Len()) // item key → the table key that gave it
	suite := map[string]int{}
	// The table is a map; a second pass recovers the file's order of the keys it kept.
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, len(data)+1)
	for n := 1; sc.Scan(); n++ {
		key, ok := lineKey(sc.Text())
		if !ok || seen[key] {
			continue
		}
		w, ok := t.Get(key)
		if !ok {
			continue
		}
		seen[key] = true
		id := record.ParseItemID(key)
		// "a/" (an empty tag) names the same item as "a", the opaque suite: two
		// items of one key would be one item run twice.
		ik := id.Key()
		if first, dup := items[ik]; dup {
			warns = append(warns, fmt.Sprintf("%s:%d: skipped %q: it names the same item as %q (an empty tag is the whole suite)", name, n, key,
				first))
			continue
		}
		items[ik] = key
		s, ok := suite[id.Label]
		if !ok {
			s = len(in.Suites)
			suite[id.Label] = s
			in.Suites = append(in.Suites, id.Label)
		}
		g := gpus[key]
		in.Items = append(in.Items, schedule.Item{ItemID: id, Weight: w, Known: true, Seq: len(in.Items), GPUs: max(g, 1)})
		in.Suite = append(in.Suite, s)
		in.All = append(in.All, g == gpusAll)
	}
	if len(seen) != t.Len() {
		// Cannot happen with weights.Parse's line rule; say so rather than simulate half.
		return nil, warns, fmt.Errorf("weights %s: read %d keys but ordered %d", name, t.Len(), len(in.Items))
	}
	if len(in.Items) == 0 {
		return nil, warns, fmt.Errorf("weights %s: no \"<key> <seconds>\" line in it; give a weight table, e.g. one written by sgpu-queue run",
			name)
	}
	return in, warns, nil
}

// lineKey is the key of a table line by weights.Parse's rule: the text before the
// last blank, trimmed.
func lineKey(line string) (string, bool) {
	text := strings.TrimSpace(strings.TrimPrefix(line, "\xef\xbb\xbf"))
	if text == "" || strings.HasPrefix(text, "#") {
		return "", false
	}
	i := strings.LastIndexAny(text, " \t")
	if i < 0 {
		return "", false
	}
	return strings.TrimSpace(text[:i]), true
}

// gpusAll is splitGPUs' count for gpus=all.
const gpusAll = -1

// maxWidth bounds a gpus=N column (simulate's --gpus bound).
const maxWidth = MaxGPUs

// splitGPUs takes the gpus= column off each line, keeping the line count so the
// weights parser's line numbers hold; a bad count warns and blanks its line.
func splitGPUs(data []byte, name string) ([]byte, map[string]int, []string) {
	gpus := map[string]int{}
	var warns []string
	lines := bytes.Split(data, []byte("\n"))
	for n, raw := range lines {
		text := strings.TrimSpace(strings.TrimPrefix(string(raw), "\xef\xbb\xbf"))
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		i := strings.LastIndexAny(text, " \t")
		if i < 0 || !strings.HasPrefix(text[i+1:], "gpus=") {
			if key, ok := lineKey(text); ok {
				gpus[key] = 1 // a later line without the column: one GPU
			}
			continue
		}
		col := text[i+1:]
		rest := strings.TrimSpace(text[:i])
		lines[n] = []byte(rest)
		g, ok := gpusAll, true
		if v := strings.TrimPrefix(col, "gpus="); v != "all" {
			var err error
			g, err = strconv.Atoi(v)
			ok = err == nil && g >= 1 && g <= maxWidth
		}
		if !ok {
			warns = append(warns, fmt.Sprintf("%s:%d: skipped line with a bad GPU count %q: want gpus=N (N from 1 to %d) or gpus=all", name, n+1,
				col, maxWidth))
			lines[n] = nil
			continue
		}
		if key, ok := lineKey(rest); ok {
			gpus[key] = g
		}
	}
	return bytes.Join(lines, []byte("\n")), gpus, warns
}

// lineOf is the line number of a warning "<name>:<line>: ...", 0 if none.
func lineOf(warn, name string) int {
	rest, ok := strings.CutPrefix(warn, name+":")
	if !ok {
		return 0
	}
	n, _ := strconv.Atoi(rest[:max(strings.IndexByte(rest, ':'), 0)])
	return n
}
