package logdir

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/safefs"
)

// EscapeField makes a value one TSV column: backslash, tab, newline and CR as \\, \t, \n, \r.
func EscapeField(s string) string {
	if !strings.ContainsAny(s, "\\\t\n\r") {
		return s
	}
	r := strings.NewReplacer(`\`, `\\`, "\t", `\t`, "\n", `\n`, "\r", `\r`)
	return r.Replace(s)
}

// UnescapeField reverses EscapeField; an unknown escape is kept as written.
func UnescapeField(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case '\\':
			b.WriteByte('\\')
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		default:
			b.WriteByte('\\')
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

func joinFields(fields ...string) string {
	for i, f := range fields {
		fields[i] = EscapeField(f)
	}
	return strings.Join(fields, "\t") + "\n"
}

// Secs formats seconds for the TSV files: up to three decimals, no trailing zeros.
func Secs(v float64) string {
	s := strconv.FormatFloat(v, 'f', 3, 64)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// FormatItems is an item list, "label TAB tag" per item, as items.tsv, listed.tsv and TE's failed lists hold it.
func FormatItems(ids []record.ItemID) []byte {
	var b bytes.Buffer
	for _, id := range ids {
		b.WriteString(joinFields(id.Label, id.Tag))
	}
	return b.Bytes()
}

// FormatQueue is queue.tsv's text.
func FormatQueue(rows []record.QueueRow) []byte {
	var b bytes.Buffer
	for _, r := range rows {
		b.WriteString(joinFields(Secs(r.Weight), r.Label, r.Cmd, r.Tag, strings.Join(r.Args, " ")))
	}
	return b.Bytes()
}

// ParseQueue reads queue.tsv.
func ParseQueue(r io.Reader) ([]record.QueueRow, error) {
	var rows []record.QueueRow
	err := eachLine(r, func(n int, f []string) error {
		if len(f) < 4 {
			return fmt.Errorf("queue.tsv:%d: want weight, label, cmd, tag, args; got %d column(s)", n, len(f))
		}
		w, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			return fmt.Errorf("queue.tsv:%d: weight %q is not a number", n, f[0])
		}
		row := record.QueueRow{ItemID: record.ItemID{Label: f[1], Tag: f[3]}, Weight: w, Cmd: f[2]}
		if len(f) > 4 && f[4] != "" {
			row.Args = strings.Fields(f[4])
		}
		rows = append(rows, row)
		return nil
	})
	return rows, err
}

// FormatTiming is the attempt's line of TE's timings.tsv (docs/files.md); only readLegacy reads it back.
func FormatTiming(a record.Attempt) string {
	return joinFields(a.Label, a.Column(), a.GPU(), Secs(a.Secs), strconv.Itoa(a.RC), Secs(a.StartOff), Secs(a.EndOff), est(a),
		bit(a.Outcome.Incomplete()))
}

// est is the est column: the estimate in seconds, or "unknown".
func est(a record.Attempt) string {
	if !a.Known {
		return "unknown"
	}
	return Secs(a.Estimate)
}

func bit(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// FormatAttempt is the attempt's line of queue/attempts.tsv.
func FormatAttempt(a record.Attempt) string {
	return joinFields(a.Label, a.Tag, strconv.Itoa(a.Shard), strings.Join(a.GPUs, ","), Secs(a.Secs), strconv.Itoa(a.RC),
		Secs(a.StartOff), Secs(a.EndOff), est(a), string(a.Outcome))
}

// ParseAttempts reads queue/attempts.tsv; a torn row is skipped with a warning, the others kept.
func ParseAttempts(r io.Reader) ([]record.Attempt, []string) {
	return parseRows(r, "attempts.tsv", parseAttempt)
}

// parseRows reads a TSV file's rows; a row parse refuses is skipped with a warning naming its line.
func parseRows[T any](r io.Reader, name string, parse func([]string) (T, error)) ([]T, []string) {
	var rows []T
	var warns []string
	_ = eachLine(r, func(n int, f []string) error {
		row, err := parse(f)
		if err != nil {
			warns = append(warns, fmt.Sprintf("%s:%d: skipped row: %v", name, n, err))
			return nil
		}
		rows = append(rows, row)
		return nil
	})
	return rows, warns
}

func parseAttempt(f []string) (record.Attempt, error) {
	if len(f) != 10 {
		return record.Attempt{}, fmt.Errorf("want 10 columns (label, tag, shard, gpus, secs, rc, start_off, end_off, est, outcome), got %d",
			len(f))
	}
	c := columns{}
	a := record.Attempt{ItemID: record.ItemID{Label: f[0], Tag: f[1]}, GPUs: strings.Split(f[3], ",")}
	a.Shard = c.int(f[2], "shard", 0)
	a.Secs = c.secs(f[4], "secs")
	a.RC = c.int(f[5], "rc", math.MinInt)
	a.StartOff, a.EndOff = c.secs(f[6], "start_off"), c.secs(f[7], "end_off")
	if f[8] != "unknown" {
		a.Estimate, a.Known = c.secs(f[8], "est"), true
	}
	o, err := outcome.Parse(f[9])
	switch {
	case c.err != nil:
		return a, c.err
	case err != nil:
		return a, err
	case a.Label == "" || f[3] == "":
		return a, fmt.Errorf("empty label or gpus")
	}
	a.Outcome = o
	return a, nil
}

// columns reads a row's numbers, keeping the first error.
type columns struct{ err error }

func (c *columns) secs(s, what string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if c.err == nil && (err != nil || v != v || v < 0 || v > 1e9) {
		c.err = fmt.Errorf("%s %q is not a number of seconds", what, s)
	}
	return v
}

func (c *columns) int(s, what string, least int) int {
	v, err := strconv.Atoi(s)
	if c.err == nil && (err != nil || v < least) {
		c.err = fmt.Errorf("%s %q is not an integer", what, s)
	}
	return v
}

func eachLine(r io.Reader, fn func(n int, fields []string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimRight(sc.Text(), "\r")
		if line == "" {
			continue
		}
		f := strings.Split(line, "\t")
		for i := range f {
			f[i] = UnescapeField(f[i])
		}
		if err := fn(n, f); err != nil {
			return err
		}
	}
	return sc.Err()
}

// AttemptsWriter appends each ended attempt to attempts.tsv and timings.tsv, one write each,
// so a run killed at any moment keeps every ended attempt.
type AttemptsWriter struct {
	mu       sync.Mutex // guards both files: the dispatch workers append at once
	attempts appender
	timings  appender
}

// appender is one append-only TSV file.
type appender struct {
	w io.WriteCloser
	// torn is set after a failed write, so the next row starts on its own line and only the torn row is lost.
	torn bool
}

func (a *appender) append(row string) error {
	if a.torn {
		row = "\n" + row
	}
	_, err := io.WriteString(a.w, row)
	a.torn = err != nil
	return err
}

// OpenAttempts creates the run's attempts.tsv and timings.tsv empty, for appending (a reused log dir's are replaced).
func (l Layout) OpenAttempts() (*AttemptsWriter, error) {
	const flag = os.O_WRONLY | os.O_TRUNC | os.O_APPEND
	a, err := safefs.OpenFile(l.trusted(), l.AttemptsTSV(), flag, 0o644)
	if err != nil {
		return nil, err
	}
	t, err := safefs.OpenFile(l.trusted(), l.TimingsTSV(), flag, 0o644)
	if err != nil {
		a.Close()
		return nil, err
	}
	return &AttemptsWriter{attempts: appender{w: a}, timings: appender{w: t}}, nil
}

// Append writes the attempt's rows, each with one write(2), so they survive a kill; no fsync, which would only guard
// against power loss and would delay the next item's start.
func (w *AttemptsWriter) Append(a record.Attempt) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	aerr := w.attempts.append(FormatAttempt(a))
	if aerr != nil {
		aerr = fmt.Errorf("attempts.tsv: %w", aerr)
	}
	terr := w.timings.append(FormatTiming(a))
	if terr != nil {
		terr = fmt.Errorf("timings.tsv: %w", terr)
	}
	switch {
	case aerr != nil && terr != nil:
		return fmt.Errorf("%w; %w", aerr, terr) // one line: it is a warning's
	case aerr != nil:
		return aerr
	}
	return terr
}

// Close closes both files.
func (w *AttemptsWriter) Close() error {
	return errors.Join(w.attempts.w.Close(), w.timings.w.Close())
}
