package simulate

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/rocm/sgpu-queue/internal/schedule"
	"github.com/rocm/sgpu-queue/internal/textfmt"
)

// Write prints the report: what was simulated, the lower bound, and a row per
// policy.
func (r *Report) Write(w io.Writer) error {
	var b strings.Builder
	in, o := r.Input, r.Options
	n := o.GPUs
	fmt.Fprintf(&b, "simulate %s: %d items in %d suites", in.Name, len(in.Items), len(in.Suites))
	work := "work"
	if m := r.Mixed; m != nil {
		work = "GPU-seconds"
		span := fmt.Sprint(m.MinGPUs)
		if m.MaxGPUs > m.MinGPUs {
			span += "–" + fmt.Sprint(m.MaxGPUs)
		}
		fmt.Fprintf(&b, " (%d on %s GPUs at once)", m.Multi, span)
	}
	fmt.Fprintf(&b, ", %d GPUs\n", n)
	if o.Noise == 0 {
		fmt.Fprintf(&b, "durations: the weights exactly; unordered: mean of %d shuffles (seed %d)\n", o.Runs, o.Seed)
		fmt.Fprintf(&b, "%s %s, largest item %s, lower bound max(%s/%d, largest) = %s\n",
			work, secs(r.Work.Mean), secs(r.Largest.Mean), work, n, secs(r.Bound.Mean))
	} else {
		writeNoise(&b, o)
		fmt.Fprintf(&b, "%s %s, largest item %s, lower bound max(%s/%d, largest) = %s (range %s–%s)\n",
			work, secs(r.Work.Mean), secs(r.Largest.Mean), work, n, secs(r.Bound.Mean), secs(r.Bound.Min), secs(r.Bound.Max))
	}
	writeEstimates(&b, r)
	fmt.Fprintf(&b, "%s queue %s\n", schedule.PolicyPlanned, r.Planner)
	if r.Mixed != nil {
		b.WriteString("two steps: the single-GPU items as the planned queue, then each multi-GPU item alone (speed-up is over this)\n")
	} else if len(in.Suites) > n {
		fmt.Fprintf(&b, "static: %d suites on %d GPUs, suite k (in the file's order) on GPU k mod %d, one after another\n",
			len(in.Suites), n, n)
	}
	b.WriteByte('\n')
	table := [][]string{{"policy", "wall clock", "range", "utilisation", "× bound", "speed-up"}}
	for _, row := range r.Rows {
		rng := ""
		if row.Varies {
			rng = secs(row.Wall.Min) + " – " + secs(row.Wall.Max)
		}
		table = append(table, []string{
			rowName(row.Policy, r.Mixed != nil),
			secs(row.Wall.Mean),
			rng,
			pct(row.Util.Mean),
			fixed(row.Ratio.Mean, 4),
			fixed(row.SpeedUp, 2) + "x",
		})
	}
	writeTable(&b, table)
	writeCalibration(&b, r)
	if m := r.Mixed; m != nil {
		writeHolds(&b, m.Holds, o)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeNoise says how a noisy run's durations are drawn and what the figures are.
func writeNoise(b *strings.Builder, o Options) {
	switch o.Model {
	case NoiseLognormal:
		fmt.Fprintf(b, "durations: weight × exp(%g·Z), Z standard normal (lognormal), %d runs (seed %d); the queues order by the weights\n",
			o.Noise, o.Runs, o.Seed)
	default:
		fmt.Fprintf(b, "durations: weight × uniform [%g, %g] (±%g %%), %d runs (seed %d); the queues order by the weights\n",
			1-o.Noise, 1+o.Noise, 100*o.Noise, o.Runs, o.Seed)
	}
	fmt.Fprintf(b, "figures are means over the runs (range: min–max); each run is measured against its own bound\n")
}

// writeHolds says how the default policy's held items fared against their
// reservations.
func writeHolds(b *strings.Builder, h HoldStats, o Options) {
	def, _ := schedule.BlockOrderOf(schedule.DefaultPolicy)
	runs := float64(max(o.Runs, 1))
	if o.Noise == 0 {
		runs = 1
	}
	if h.Holds == 0 {
		fmt.Fprintf(b, "\nheld items (%s order): none, no item waited for GPUs to be held for it\n", def)
		return
	}
	fmt.Fprintf(b, "\nheld items (%s order): %s per run", def, fixed(float64(h.Holds)/runs, 1))
	switch {
	case h.Late == 0:
		b.WriteString(", each started by its reservation\n")
		return
	}
	fmt.Fprintf(b, "; %s started after their reservation by the estimates (mean %s, max %s late)",
		pct(float64(h.Late)/float64(h.Holds)), secs(h.LateSum/float64(h.Late)), secs(h.MaxLate))
	if h.Unexplained == 0 {
		b.WriteString(", never later than the largest overrun of an item running while they were held")
	} else {
		fmt.Fprintf(b, ", %d later than the overruns of the items running meanwhile explain", h.Unexplained)
	}
	if h.Recalibrated > 0 {
		fmt.Fprintf(b, " (%d more, held while calibration changed the estimates)", h.Recalibrated)
	}
	b.WriteString("\n")
}

func rowName(policy string, mixed bool) string {
	switch policy {
	case RowStatic:
		return "one suite per GPU (static)"
	case RowUnordered:
		return "unordered queue"
	case RowTwoStep:
		return "sGPU queue, then mGPU serially"
	case RowStrict:
		return "TE's rule: widest first, strict order"
	case RowUncalibrated:
		if mixed {
			return "chosen order, not calibrated"
		}
		return "planned queue, not calibrated"
	}
	if !mixed {
		name := policy + " queue"
		if policy == schedule.DefaultPolicy {
			name += " (default)"
		}
		return name
	}
	name := blockName(policy)
	var uses []string
	for _, p := range schedule.Policies() {
		if by, _ := schedule.BlockOrderOf(p); by == policy {
			if p == schedule.DefaultPolicy {
				p += ", default"
			}
			uses = append(uses, p)
		}
	}
	if len(uses) > 0 {
		name += " (" + strings.Join(uses, "; ") + ")"
	}
	return name
}

// writeTable aligns columns: the first to the left, the rest to the right.
func writeTable(b *strings.Builder, rows [][]string) {
	width := make([]int, len(rows[0]))
	for _, r := range rows {
		for c, cell := range r {
			width[c] = max(width[c], len([]rune(cell)))
		}
	}
	for _, r := range rows {
		var line strings.Builder
		for c, cell := range r {
			pad := strings.Repeat(" ", width[c]-len([]rune(cell)))
			if c == 0 {
				line.WriteString(cell + pad)
			} else {
				line.WriteString("  " + pad + cell)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}

// secs prints seconds plainly: "6935 s", "2624.25 s" (at most two decimals).
func secs(v float64) string { return textfmt.Secs(v) }

func pct(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return fixed(100*v, 2) + " %"
}

func fixed(v float64, prec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// writeEstimates says how the estimates are off (--bias, --prior), when they are.
func writeEstimates(b *strings.Builder, r *Report) {
	o := r.Options
	if o.Bias.Set() {
		var parts []string
		for _, l := range r.Input.Suites {
			parts = append(parts, fmt.Sprintf("%s %g", l, o.Bias.Of(l)))
		}
		fmt.Fprintf(b, "bias: every item takes its weight × its suite's factor (%s); the queues calibrate as items finish\n",
			strings.Join(parts, ", "))
	}
	if c := r.Priors; c != nil {
		fmt.Fprintf(b, "prior: no table of its own; the queues order by %s: %d items by the same key, %d by their siblings, "+
			"%d by their suite, %d with none\n", o.Prior.Name, c.Table, c.Sibling, c.Suite, c.None)
	}
}

// writeCalibration says what the default policy's calibration found by suite.
func writeCalibration(b *strings.Builder, r *Report) {
	if !r.Options.estimatesOff() {
		return
	}
	if len(r.Calibration) == 0 {
		b.WriteString("\ncalibration (default policy): none, fewer than 3 items finished with an estimate\n")
		return
	}
	runs := r.Rows[len(r.Rows)-2].Runs // the default policy's row, before the uncalibrated one
	var parts []string
	for _, f := range r.Calibration {
		s := "×" + fixed(f.Mean, 3)
		if f.Max-f.Min > 0.0005 {
			s += " (" + fixed(f.Min, 3) + "–" + fixed(f.Max, 3) + ")"
		}
		parts = append(parts, fmt.Sprintf("%s %s", f.Label, s))
	}
	fmt.Fprintf(b, "\ncalibration (default policy), each suite's factor at the end of the run, mean over %d: %s\n", runs,
		strings.Join(parts, ", "))
}
