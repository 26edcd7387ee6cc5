package shard

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/schedule"
	"github.com/rocm/sgpu-queue/internal/textfmt"
	"github.com/rocm/sgpu-queue/internal/weights"
)

// Limits that keep a wrong file (a binary, a log) from being read for minutes.
const (
	maxItemsBytes = 256 << 20
	maxItemLine   = 1 << 20
)

// ParseItems reads an item list: "label TAB tag" per line as queue/items.tsv holds it, or a bare label for an
// opaque suite. A bad line is an error naming name:line and the fix.
func ParseItems(r io.Reader, name string) ([]record.ItemID, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxItemsBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(data) > maxItemsBytes {
		return nil, fmt.Errorf("%s: larger than %d MiB; give a list of items, label TAB tag per line", name, maxItemsBytes>>20)
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, maxItemLine)
	var items []record.ItemID
	seen := map[record.ItemID]bool{}
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, msg := parseItem(line)
		if msg != "" {
			return nil, fmt.Errorf("%s:%d: %s", name, n, msg)
		}
		if !seen[k] {
			seen[k] = true
			items = append(items, k)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%s:%d: line longer than %d KiB; give a list of items, label TAB tag per line", name, n+1, maxItemLine>>10)
		}
		return nil, fmt.Errorf("%s:%d: %w", name, n+1, err)
	}
	return items, nil
}

// parseItem reads one line; msg says what is wrong with it.
func parseItem(line string) (record.ItemID, string) {
	label, tag, _ := strings.Cut(line, "\t")
	switch {
	case strings.Contains(tag, "\t"):
		return record.ItemID{}, "more than two columns: want label TAB tag (a tab inside a tag is written \\t)"
	case label == "":
		return record.ItemID{}, "empty label: want label TAB tag"
	case strings.ContainsAny(label, " /\\"):
		return record.ItemID{}, fmt.Sprintf("label %q holds a space, '/' or '\\': want label TAB tag, the two separated by one tab", clip(label))
	case strings.IndexFunc(label, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0:
		return record.ItemID{}, fmt.Sprintf("label %q holds a control character: a suite label is letters, digits, '.', '_' and '-'", clip(label))
	case strings.IndexFunc(label, func(r rune) bool { return !labelRune(r) }) >= 0:
		// A BOM would not survive being written back at the start of a file.
		return record.ItemID{}, fmt.Sprintf("label %q holds a character no suite label has: a suite label is letters, digits, '.', '_' and '-'",
			clip(label))
	}
	return record.ItemID{Label: label, Tag: logdir.UnescapeField(tag)}, ""
}

// labelRune reports whether r may be in a suite label: ASCII letter or digit, '.', '_' or '-'.
func labelRune(r rune) bool {
	return r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-", r))
}

// clip shortens what a message quotes from a line.
func clip(s string) string {
	if len(s) <= 80 {
		return s
	}
	return strings.ToValidUTF8(s[:80], "") + "…"
}

// TableKeys lists a weight table's keys as items, in the table's order.
func TableKeys(t *weights.Table) []record.ItemID {
	keys := t.Keys()
	out := make([]record.ItemID, len(keys))
	for i, k := range keys {
		out[i] = record.ParseItemID(k)
	}
	return out
}

// Items turns an item list into the work items a plan splits, each with its suite's GPUs (a pooled item: the
// whole runner). What no suite of the config runs is left out, with a warning per reason.
func Items(suites []config.Suite, keys []record.ItemID, gpus int, pooled map[string]bool) ([]schedule.Item, []string) {
	byLabel := map[string][]record.ItemID{}
	for _, k := range keys {
		byLabel[k.Label] = append(byLabel[k.Label], k)
	}
	var items []schedule.Item
	var warns []string
	for _, s := range suites {
		width := itemGPUs(s, gpus)
		listed := byLabel[s.Label]
		delete(byLabel, s.Label)
		if s.Mode == config.Opaque {
			if n := countTagged(listed); n > 0 {
				warns = append(warns, fmt.Sprintf("suite %q is opaque (one whole item) but the list has %d item(s) of it with a tag; they are "+
					"left out", s.Label, n))
			}
			if pooled[s.Label] {
				width = gpus
			}
			items = append(items, schedule.Item{ItemID: record.ItemID{Label: s.Label}, Seq: len(items), GPUs: width})
			continue
		}
		for _, k := range listed {
			if k.Tag == "" {
				warns = append(warns, fmt.Sprintf("suite %q expands into items but the list has its bare label (an opaque item's key); it is left out",
					s.Label))
				continue
			}
			w := width
			if pooled[k.Key()] {
				w = gpus
			}
			items = append(items, schedule.Item{ItemID: record.ItemID{Label: s.Label, Tag: k.Tag}, Seq: len(items), GPUs: w})
		}
	}
	if len(byLabel) > 0 {
		labels := make([]string, 0, len(byLabel))
		n := 0
		for l, ks := range byLabel {
			labels = append(labels, textfmt.Printable(l))
			n += len(ks)
		}
		slices.Sort(labels)
		if len(labels) > 10 {
			labels = append(labels[:10], fmt.Sprintf("… %d more", len(labels)-10))
		}
		warns = append(warns, fmt.Sprintf("%d item(s) of suites not in the config are left out: %s", n, strings.Join(labels, ", ")))
	}
	return items, warns
}

func countTagged(ks []record.ItemID) int {
	n := 0
	for _, k := range ks {
		if k.Tag != "" {
			n++
		}
	}
	return n
}

// itemGPUs is a suite's GPUs per item on shards of gpus GPUs.
func itemGPUs(s config.Suite, gpus int) int {
	switch m := s.Options; {
	case m.AllGPUs:
		return gpus
	case m.GPUs > 0:
		return m.GPUs
	case s.MGPU && s.Mode == config.Opaque:
		return gpus // TE's mGPU queue: an opaque item takes the whole box
	}
	return 1
}
