package logdir

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/safefs"
)

// EscapeField makes a value safe for one TSV column: backslash, tab, newline and
// carriage return are written as \\, \t, \n and \r. Ordinary tags are unchanged.
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

// FormatCensus writes items.tsv lines.
func FormatCensus(w io.Writer, rows []record.ItemID) error {
	bw := bufio.NewWriter(w)
	for _, r := range rows {
		bw.WriteString(joinFields(r.Label, r.Tag))
	}
	return bw.Flush()
}

// FormatQueue writes queue.tsv lines.
func FormatQueue(w io.Writer, rows []record.QueueRow) error {
	bw := bufio.NewWriter(w)
	for _, r := range rows {
		bw.WriteString(joinFields(Secs(r.Weight), r.Label, r.Cmd, r.Tag, strings.Join(r.Args, " ")))
	}
	return bw.Flush()
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

// FormatTiming returns the row as a timings.tsv line.
func FormatTiming(t record.Timing) string {
	inc := "0"
	if t.Incomplete {
		inc = "1"
	}
	return joinFields(t.Label, t.Item, t.GPU, Secs(t.Secs), strconv.Itoa(t.RC), Secs(t.StartOff), Secs(t.EndOff), t.Est, inc)
}

// OutcomeRow returns the attempt's line of queue/outcomes.tsv: the columns that
// identify the attempt in timings.tsv (label, item, gpu, start_off) and its outcome.
func OutcomeRow(t record.Timing) string {
	return joinFields(t.Label, t.Item, t.GPU, Secs(t.StartOff), string(t.Outcome))
}

// AttemptKey identifies one attempt across timings.tsv and outcomes.tsv: no item
// starts twice on one GPU in the same millisecond.
type AttemptKey struct {
	Label, Item, GPU, StartOff string
}

// KeyOf is the row's AttemptKey.
func KeyOf(t record.Timing) AttemptKey {
	return AttemptKey{Label: t.Label, Item: t.Item, GPU: t.GPU, StartOff: Secs(t.StartOff)}
}

// ParseOutcomes reads outcomes.tsv. A row that cannot be read (a torn write, an
// unknown outcome) is skipped with a warning; its attempt then has no recorded
// outcome. A later row for the same attempt wins.
func ParseOutcomes(r io.Reader) (map[AttemptKey]outcome.Outcome, []string) {
	out := map[AttemptKey]outcome.Outcome{}
	var warns []string
	_ = eachLine(r, func(n int, f []string) error {
		k, o, err := parseOutcome(f)
		if err != nil {
			warns = append(warns, fmt.Sprintf("outcomes.tsv:%d: skipped row: %v", n, err))
			return nil
		}
		out[k] = o
		return nil
	})
	return out, warns
}

func parseOutcome(f []string) (AttemptKey, outcome.Outcome, error) {
	if len(f) != 5 {
		return AttemptKey{}, "", fmt.Errorf("want 5 columns (label, item, gpu, start_off, outcome), got %d", len(f))
	}
	start, err := strconv.ParseFloat(f[3], 64)
	if err != nil || start != start || start < 0 || start > 1e9 {
		return AttemptKey{}, "", fmt.Errorf("start_off %q is not a number of seconds", f[3])
	}
	o, err := outcome.Parse(f[4])
	if err != nil {
		return AttemptKey{}, "", err
	}
	if f[0] == "" || f[1] == "" {
		return AttemptKey{}, "", fmt.Errorf("empty label or item")
	}
	return AttemptKey{Label: f[0], Item: f[1], GPU: f[2], StartOff: Secs(start)}, o, nil
}

// ParseTimings reads timings.tsv. A row that cannot be read (missing columns, not a
// number: a run killed mid-write leaves one) is skipped with a warning; the rows
// before and after it are kept.
func ParseTimings(r io.Reader) ([]record.Timing, []string) {
	var rows []record.Timing
	var warns []string
	_ = eachLine(r, func(n int, f []string) error {
		t, err := parseTiming(f)
		if err != nil {
			warns = append(warns, fmt.Sprintf("timings.tsv:%d: skipped row: %v", n, err))
			return nil
		}
		rows = append(rows, t)
		return nil
	})
	return rows, warns
}

func parseTiming(f []string) (record.Timing, error) {
	// All nine columns (docs/outcomes.md): a shorter row is one a full disk or a
	// kill tore; a longer one is not this file's format.
	if len(f) != 9 {
		return record.Timing{}, fmt.Errorf("want 9 columns (label, item, gpu, secs, rc, start_off, end_off, est, incomplete), got %d", len(f))
	}
	t := record.Timing{Label: f[0], Item: f[1], GPU: f[2], Est: f[7]}
	var err error
	num := func(s, what string) float64 {
		v, e := strconv.ParseFloat(s, 64)
		if err == nil && (e != nil || v != v || v < 0 || v > 1e9) {
			err = fmt.Errorf("%s %q is not a number of seconds", what, s)
		}
		return v
	}
	t.Secs = num(f[3], "secs")
	rc, e := strconv.Atoi(f[4])
	if e != nil && err == nil {
		err = fmt.Errorf("rc %q is not an integer", f[4])
	}
	t.RC = rc
	t.StartOff = num(f[5], "start_off")
	t.EndOff = num(f[6], "end_off")
	if t.Est == "" {
		t.Est = "unknown"
	}
	switch f[8] {
	case "0":
	case "1":
		t.Incomplete = true
	default:
		if err == nil {
			err = fmt.Errorf("incomplete %q is not 0 or 1", f[8])
		}
	}
	if err == nil && (t.Label == "" || t.Item == "") {
		err = fmt.Errorf("empty label or item")
	}
	return t, err
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

// TimingsWriter appends each finished attempt to timings.tsv (TE's nine columns)
// and its outcome to outcomes.tsv, one write per row and file, so a run killed at
// any moment keeps every row of an item that had ended.
type TimingsWriter struct {
	mu       sync.Mutex // guards both files: the dispatch workers append at once
	timings  appender
	outcomes appender
}

// appender is one append-only TSV file.
type appender struct {
	w io.WriteCloser
	// torn is set after a failed write, which may have left half a row: the next
	// row starts on a line of its own, so only the torn row is lost, not two.
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

// OpenTimings opens (creating) the run's timings.tsv and outcomes.tsv for appending.
func (l Layout) OpenTimings() (*TimingsWriter, error) {
	t, err := safefs.OpenFile(l.trusted(), l.TimingsTSV(), os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	o, err := safefs.OpenFile(l.trusted(), l.OutcomesTSV(), os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Close()
		return nil, err
	}
	return &TimingsWriter{timings: appender{w: t}, outcomes: appender{w: o}}, nil
}

// Append writes the timings row, then its outcome row, each with a single
// write(2). Once it returns, both survive this process being killed at any moment;
// there is no fsync, which would only guard against the machine itself losing
// power and would sit between an item's end and the next item's start. The
// timings row goes first: it is the measurement, and a row whose outcome row is
// lost still loads (record.Run.OutcomeOf).
func (w *TimingsWriter) Append(t record.Timing) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	terr := w.timings.append(FormatTiming(t))
	if terr != nil {
		terr = fmt.Errorf("timings.tsv: %w", terr)
	}
	var oerr error
	if t.Outcome != "" {
		if oerr = w.outcomes.append(OutcomeRow(t)); oerr != nil {
			oerr = fmt.Errorf("outcomes.tsv: %w", oerr)
		}
	}
	switch {
	case terr != nil && oerr != nil:
		return fmt.Errorf("%w; %w", terr, oerr)
	case terr != nil:
		return terr
	}
	return oerr
}

// Close closes both files.
func (w *TimingsWriter) Close() error {
	return errors.Join(w.timings.w.Close(), w.outcomes.w.Close())
}
