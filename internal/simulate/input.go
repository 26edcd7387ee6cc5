package simulate

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/rocm/sgpu-queue/internal/schedule"
	"github.com/rocm/sgpu-queue/internal/weights"
)

// Input is a weight table seen as a run's queue: one known item per key, in the
// file's order (which is the listing order ties keep, and the suites' config order).
type Input struct {
	Name   string
	Items  []schedule.Item // Seq is the position in the file
	Suites []string        // labels, in order of first appearance
	Suite  []int           // by item: its index in Suites
}

// maxInput bounds what Load reads, so that a wrong path (a disk image) fails fast.
const maxInput = 256 << 20

// Load reads a weight table (SPEC §6; the weights package's parser decides what is
// valid, corrupt lines come back as warnings). A key "<label>/<tag>" is an item of
// suite label; a bare key is a whole opaque suite.
func Load(r io.Reader, name string) (*Input, []string, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxInput+1))
	if err != nil {
		return nil, nil, fmt.Errorf("weights %s: %w", name, err)
	}
	if len(data) > maxInput {
		return nil, nil, fmt.Errorf("weights %s: larger than %d MiB, not a weight table", name, maxInput>>20)
	}
	t, warns := weights.Parse(bytes.NewReader(data), name)
	in := &Input{Name: name}
	seen := make(map[string]bool, t.Len())
	suite := map[string]int{}
	// The table is a map; a second pass recovers the file's order of the keys it kept.
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, len(data)+1)
	for sc.Scan() {
		key, ok := lineKey(sc.Text())
		if !ok || seen[key] {
			continue
		}
		w, ok := t.Get(key)
		if !ok {
			continue
		}
		seen[key] = true
		label, tag := weights.SplitKey(key)
		s, ok := suite[label]
		if !ok {
			s = len(in.Suites)
			suite[label] = s
			in.Suites = append(in.Suites, label)
		}
		in.Items = append(in.Items, schedule.Item{Label: label, Tag: tag, Weight: w, Known: true, Seq: len(in.Items)})
		in.Suite = append(in.Suite, s)
	}
	if len(in.Items) != t.Len() {
		// Cannot happen with weights.Parse's line rule; say so rather than simulate half.
		return nil, warns, fmt.Errorf("weights %s: read %d keys but ordered %d", name, t.Len(), len(in.Items))
	}
	if len(in.Items) == 0 {
		return nil, warns, fmt.Errorf("weights %s: no \"<key> <seconds>\" line in it; give a weight table (SPEC §6), e.g. one written by sgpu-queue run", name)
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
