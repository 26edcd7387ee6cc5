package logdir

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"strconv"
	"strings"

	"github.com/rocm/sgpu-queue/internal/outcome"
	"github.com/rocm/sgpu-queue/internal/record"
)

// Log dirs before queue/attempts.tsv (run.json format 2 and older) are read into attempts once, as they load,
// so report and merge read earlier releases' log dirs (docs/choices.md).

// FormatOutcomes is the run.json format that kept outcomes in queue/outcomes.tsv (v1.0, v1.1).
const FormatOutcomes = 2

// OutcomesTSV is queue/outcomes.tsv of a format-2 log dir.
func (l Layout) OutcomesTSV() string { return l.path("queue", "outcomes.tsv") }

// readLegacy reads an old log dir's attempts: timings.tsv with outcomes.tsv, else TE's reading of rc and incomplete
// (outcome.Legacy, docs/outcomes.md). A missing file is no rows.
func (l Layout) readLegacy(m *record.Meta) ([]record.Attempt, []string, error) {
	data, err := readLogFile(l.TimingsTSV())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	run := &record.Run{Meta: *m}
	rows, warns := parseTimings(bytes.NewReader(data), run)
	if m.Format < FormatOutcomes {
		for i := range rows {
			rows[i].Outcome = outcome.Legacy(rows[i].RC, rows[i].incomplete, m.Cancelled)
		}
		return attempts(rows), warns, nil
	}
	data, err = readLogFile(l.OutcomesTSV())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	recorded, owarns := parseOutcomes(bytes.NewReader(data))
	warns = append(warns, owarns...)
	for i := range rows {
		t := &rows[i]
		if o, ok := recorded[t.key]; ok {
			t.Outcome = o
			continue
		}
		t.Outcome = outcome.Legacy(t.RC, t.incomplete, m.Cancelled)
		warns = append(warns, fmt.Sprintf("outcomes.tsv: no outcome for %s/%s on %s at t+%ss (its row was torn or lost); taken from "+
			"its rc: %s", t.Label, t.Column(), record.GPUName(t.GPU()), Secs(t.StartOff), t.Outcome))
	}
	return attempts(rows), warns, nil
}

// timing is a timings.tsv row read back.
type timing struct {
	record.Attempt
	incomplete bool
	key        attemptKey
}

func attempts(rows []timing) []record.Attempt {
	out := make([]record.Attempt, len(rows))
	for i, t := range rows {
		out[i] = t.Attempt
	}
	return out
}

// attemptKey joins timings.tsv and outcomes.tsv: no item started twice on one GPU in one millisecond.
type attemptKey struct {
	label, item, gpu, startOff string
}

// parseTimings reads TE's nine-column timings.tsv; an unreadable row (a killed run's) is skipped with a warning.
func parseTimings(in io.Reader, r *record.Run) ([]timing, []string) {
	return parseRows(in, "timings.tsv", func(f []string) (timing, error) { return parseTiming(f, r) })
}

func parseTiming(f []string, r *record.Run) (timing, error) {
	if len(f) != 9 {
		return timing{}, fmt.Errorf("want 9 columns (label, item, gpu, secs, rc, start_off, end_off, est, incomplete), got %d", len(f))
	}
	c := columns{}
	t := timing{Attempt: record.Attempt{ItemID: r.ItemOf(f[0], f[1]), GPUs: strings.Split(f[2], ",")}}
	if r.Meta.Merge != nil {
		if s, ids, ok := record.SplitShardGPU(f[2]); ok {
			t.Shard, t.GPUs = s, strings.Split(ids, ",")
		}
	}
	t.Secs = c.secs(f[3], "secs")
	t.RC = c.int(f[4], "rc", math.MinInt)
	t.StartOff, t.EndOff = c.secs(f[5], "start_off"), c.secs(f[6], "end_off")
	if v, err := strconv.ParseFloat(f[7], 64); err == nil && v >= 0 {
		t.Estimate, t.Known = v, true
	}
	switch f[8] {
	case "0":
	case "1":
		t.incomplete = true
	default:
		if c.err == nil {
			c.err = fmt.Errorf("incomplete %q is not 0 or 1", f[8])
		}
	}
	if c.err == nil && (f[0] == "" || f[1] == "") {
		c.err = fmt.Errorf("empty label or item")
	}
	t.key = attemptKey{f[0], f[1], f[2], Secs(t.StartOff)}
	return t, c.err
}

// parseOutcomes reads outcomes.tsv, skipping unreadable rows with a warning; a later row for an attempt wins.
func parseOutcomes(r io.Reader) (map[attemptKey]outcome.Outcome, []string) {
	rows, warns := parseRows(r, "outcomes.tsv", parseOutcome)
	out := make(map[attemptKey]outcome.Outcome, len(rows))
	for _, row := range rows {
		out[row.key] = row.outcome
	}
	return out, warns
}

// outcomeRow is an outcomes.tsv row read back.
type outcomeRow struct {
	key     attemptKey
	outcome outcome.Outcome
}

func parseOutcome(f []string) (outcomeRow, error) {
	if len(f) != 5 {
		return outcomeRow{}, fmt.Errorf("want 5 columns (label, item, gpu, start_off, outcome), got %d", len(f))
	}
	c := columns{}
	start := c.secs(f[3], "start_off")
	if c.err != nil {
		return outcomeRow{}, c.err
	}
	o, err := outcome.Parse(f[4])
	if err != nil {
		return outcomeRow{}, err
	}
	if f[0] == "" || f[1] == "" {
		return outcomeRow{}, fmt.Errorf("empty label or item")
	}
	return outcomeRow{attemptKey{f[0], f[1], f[2], Secs(start)}, o}, nil
}
