// Package weights holds the weight table (docs/files.md): each item's learned duration, which orders the queue
// and is updated from each run. The format is TransformerEngine's, so its tables load unchanged.
package weights

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxSeconds is the largest weight accepted; larger is a corrupt line.
const MaxSeconds = 1e8

// Table maps keys to seconds. The zero value is not usable; use New or Parse.
type Table struct {
	w map[string]float64
	// learned are the shard-run ids a merge learned from, so merging the same shards again learns nothing.
	learned []string
}

// MaxLearned bounds the shard-run ids a table remembers: many merges' worth.
const MaxLearned = 512

// learnedPrefix starts the comment line of learned ids; TE's readers skip it as a comment.
const learnedPrefix = "# sgpu-queue learned from shard runs:"

// Learned reports whether a merge learned from the shard run of this id already.
func (t *Table) Learned(id string) bool { return slices.Contains(t.learned, id) }

// MarkLearned records shard-run ids, forgetting the oldest beyond MaxLearned; an id with a space is not recorded.
func (t *Table) MarkLearned(ids ...string) {
	for _, id := range ids {
		if id != "" && !strings.ContainsAny(id, " \t\r\n") && !t.Learned(id) {
			t.learned = append(t.learned, id)
		}
	}
	if n := len(t.learned) - MaxLearned; n > 0 {
		t.learned = slices.Delete(t.learned, 0, n)
	}
}

// New returns an empty table.
func New() *Table { return &Table{w: map[string]float64{}} }

// Get returns the weight of key.
func (t *Table) Get(key string) (float64, bool) {
	v, ok := t.w[key]
	return v, ok
}

// Set stores a weight.
func (t *Table) Set(key string, secs float64) { t.w[key] = secs }

// Delete removes a key.
func (t *Table) Delete(key string) { delete(t.w, key) }

// Len is the number of keys.
func (t *Table) Len() int { return len(t.w) }

// Keys returns the keys sorted by weight, largest first, then by key.
func (t *Table) Keys() []string {
	keys := make([]string, 0, len(t.w))
	for k := range t.w {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := t.w[keys[i]], t.w[keys[j]]
		if a != b {
			return a > b
		}
		return keys[i] < keys[j]
	})
	return keys
}

// Clone returns an independent copy.
func (t *Table) Clone() *Table {
	c := New()
	for k, v := range t.w {
		c.w[k] = v
	}
	c.learned = slices.Clone(t.learned)
	return c
}

// Parse reads a table, skipping each corrupt line with a warning ("name:line: ..."); a duplicate key
// keeps the later line.
func Parse(r io.Reader, name string) (*Table, []string) {
	t := New()
	var warns []string
	seen := map[string]int{}
	br := bufio.NewReader(r)
	line := 0
	for {
		raw, err := readLine(br)
		if raw == nil && err != nil {
			if err != io.EOF {
				warns = append(warns, fmt.Sprintf("%s:%d: read error, rest of the table ignored: %v", name, line+1, err))
			}
			break
		}
		line++
		text := strings.TrimSpace(strings.TrimPrefix(string(raw), "\xef\xbb\xbf"))
		if ids, ok := strings.CutPrefix(text, learnedPrefix); ok {
			t.MarkLearned(strings.Fields(ids)...)
			continue
		}
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		key, secs, msg := parseLine(text)
		key = UnescapeKey(key)
		if msg != "" {
			warns = append(warns, fmt.Sprintf("%s:%d: skipped corrupt weight line (%s)", name, line, msg))
			continue
		}
		if prev, dup := seen[key]; dup {
			warns = append(warns, fmt.Sprintf("%s:%d: duplicate key %q (also at line %d); the later line wins", name, line, key, prev))
		}
		seen[key] = line
		t.w[key] = secs
	}
	return t, warns
}

// maxLine bounds one line so that a binary file cannot make us buffer it whole.
const maxLine = 64 << 10

// readLine returns the next line cut to maxLine bytes; a cut line has no valid number and is corrupt.
func readLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, isPrefix, err := br.ReadLine()
		if err != nil {
			if buf != nil {
				return buf, nil
			}
			return nil, err
		}
		if len(buf) < maxLine {
			buf = append(buf, chunk...)
		}
		if buf == nil {
			buf = []byte{}
		}
		if !isPrefix {
			if len(buf) > maxLine {
				buf = append(buf[:maxLine], 0) // a NUL marks it corrupt
			}
			return buf, nil
		}
	}
}

func parseLine(text string) (key string, secs float64, msg string) {
	if !utf8.ValidString(text) || strings.ContainsFunc(text, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }) {
		return "", 0, "not text"
	}
	i := strings.LastIndexAny(text, " \t")
	if i < 0 {
		return "", 0, "want \"<key> <seconds>\""
	}
	key = strings.TrimSpace(text[:i])
	num := text[i+1:]
	if key == "" {
		return "", 0, "empty key"
	}
	v, err := strconv.ParseFloat(num, 64)
	switch {
	case err != nil:
		return "", 0, fmt.Sprintf("%q is not a number of seconds", clip(num))
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "", 0, fmt.Sprintf("%q is not a finite number", num)
	case v < 0:
		return "", 0, fmt.Sprintf("negative seconds %s", num)
	case v > MaxSeconds:
		return "", 0, fmt.Sprintf("%s s is more than %g s", num, MaxSeconds)
	}
	return key, v, ""
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// Format writes the table in the text format, largest weight first.
func (t *Table) Format(w io.Writer) error {
	var b bytes.Buffer
	if len(t.learned) > 0 {
		b.WriteString(learnedPrefix + " " + strings.Join(t.learned, " ") + "\n")
	}
	// Largest first by the written weight, then key: a table read back and written again is the same bytes.
	keys := t.Keys()
	shown := func(k string) float64 { v, _ := strconv.ParseFloat(FormatSeconds(t.w[k]), 64); return v }
	sort.SliceStable(keys, func(i, j int) bool {
		a, b := shown(keys[i]), shown(keys[j])
		if a != b {
			return a > b
		}
		return keys[i] < keys[j]
	})
	for _, k := range keys {
		b.WriteString(EscapeKey(k))
		b.WriteByte(' ')
		b.WriteString(FormatSeconds(t.w[k]))
		b.WriteByte('\n')
	}
	_, err := w.Write(b.Bytes())
	return err
}

// FormatSeconds writes seconds with one decimal, as TE's tables do.
func FormatSeconds(v float64) string {
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// EscapeKey writes a key a table line can hold: control characters, invalid UTF-8 and an escape-like backslash
// become \xHH, so every tag round-trips; TE's keys stay as they are.
func EscapeKey(k string) string {
	if !needsEscaping(k) {
		return k
	}
	var b strings.Builder
	for i := 0; i < len(k); {
		r, size := utf8.DecodeRuneInString(k[i:])
		c := k[i]
		switch {
		case r == utf8.RuneError && size == 1, size == 1 && unheld(c), c == '\\' && escapeAt(k, i):
			fmt.Fprintf(&b, `\x%02X`, c)
		default:
			b.WriteString(k[i : i+size])
		}
		i += size
	}
	return b.String()
}

// UnescapeKey is the inverse of EscapeKey.
func UnescapeKey(s string) string {
	if !strings.Contains(s, `\x`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && escapeAt(s, i) {
			v, _ := strconv.ParseUint(s[i+2:i+4], 16, 8)
			b.WriteByte(byte(v))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func needsEscaping(k string) bool {
	if !utf8.ValidString(k) {
		return true
	}
	for i := 0; i < len(k); i++ {
		if unheld(k[i]) || k[i] == '\\' && escapeAt(k, i) {
			return true
		}
	}
	return false
}

// unheld is an ASCII byte a table line cannot hold.
func unheld(c byte) bool { return c < 0x20 && c != '\t' || c == 0x7f }

// escapeAt reports whether s[i:] starts with an escape UnescapeKey reads.
func escapeAt(s string, i int) bool {
	if i+4 > len(s) || s[i] != '\\' || s[i+1] != 'x' {
		return false
	}
	v, err := strconv.ParseUint(s[i+2:i+4], 16, 8)
	if err != nil {
		return false
	}
	c := byte(v)
	return unheld(c) || c >= 0x80 || c == '\\'
}
