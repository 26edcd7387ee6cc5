package report

import (
	"bufio"
	"fmt"
	"io"
	"math"

	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/textfmt"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

// The SVG's geometry in pixels: fixed width (a viewer zooms), lanes thinner with many GPUs.
const (
	svgWidth   = 1200
	svgLeft    = 70
	svgRight   = 24
	svgTop     = 58
	svgCharW   = 6.1 // average advance of the 10 px label font
	failColour = "#b00020"
)

// palette colours bars by suite (fill, text); red is left out: it marks failures.
var palette = [][2]string{
	{"#4e79a7", "#ffffff"}, {"#f28e2b", "#000000"}, {"#59a14f", "#ffffff"},
	{"#76b7b2", "#000000"}, {"#edc948", "#000000"}, {"#b07aa1", "#ffffff"},
	{"#9c755f", "#ffffff"}, {"#ff9da7", "#000000"}, {"#bab0ac", "#000000"},
	{"#2f4b7c", "#ffffff"},
}

const mixedColour = "#8c8c8c"

// SVG draws the run's timeline: a lane per GPU, a bar per item, failures hatched red, the lower bound dashed.
// Items narrower than half a pixel merge into one bar whose tooltip says how many it holds.
func SVG(w io.Writer, r *record.Run, suites []verdict.Suite, s Stats) error {
	bw := bufio.NewWriter(w)
	svg(bw, r, suites, s)
	return bw.Flush()
}

func svg(w *bufio.Writer, r *record.Run, suites []verdict.Suite, s Stats) {
	t := newTimeline(r, suites, s)
	legend, height := t.legend()
	fmt.Fprintf(w,
		`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%.0f" viewBox="0 0 %d %.0f" font-family="DejaVu Sans, Verdana, Arial, `+
			`sans-serif" font-size="11">`+"\n",
		svgWidth, height, svgWidth, height)
	fmt.Fprintf(w, "<title>sgpu-queue timeline: %d items on %d GPUs</title>\n", len(r.Attempts), len(t.lanes))
	fmt.Fprintf(w,
		`<defs><pattern id="fail" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="3" height="6" `+
			`fill="%s" fill-opacity="0.6"/></pattern></defs>`+"\n", failColour)
	fmt.Fprintf(w, `<rect width="%d" height="%.0f" fill="#ffffff"/>`+"\n", svgWidth, height)
	t.heading(w)
	t.axis(w)
	t.lanesAndBars(w)
	t.marks(w)
	for _, p := range legend {
		fmt.Fprintf(w, `<g transform="translate(%.1f,%.1f)">%s<text x="18" y="10">%s</text></g>`+"\n", p.x, p.y, p.swatch, xmlText(p.label, 40))
	}
	fmt.Fprintf(w, "</svg>\n")
}

// timeline is the SVG's layout: lanes, suite colours and time scale.
type timeline struct {
	r      *record.Run
	s      Stats
	lanes  []GPUStats
	colour map[string]int // suite → index in palette
	suites []string       // in the order they got their colours
	// laneH and laneGap are a lane's height and the space below it; yAxis is the time axis's y.
	laneH, laneGap, plotW, tmax, yAxis float64
}

func newTimeline(r *record.Run, suites []verdict.Suite, s Stats) *timeline {
	t := &timeline{r: r, s: s, lanes: s.PerGPU, colour: map[string]int{}, laneH: 26, laneGap: 6}
	addSuite := func(label string) {
		if _, ok := t.colour[label]; !ok {
			t.colour[label] = len(t.suites) % len(palette)
			t.suites = append(t.suites, label)
		}
	}
	for _, su := range suites {
		addSuite(su.Label)
	}
	for _, row := range r.Attempts {
		addSuite(row.Label)
	}
	if len(t.lanes) > 12 {
		t.laneH, t.laneGap = 14, 3
	}
	t.plotW = float64(svgWidth - svgLeft - svgRight)
	t.tmax = math.Max(math.Max(s.Wall, s.Bound), 1e-3)
	t.yAxis = svgTop + float64(len(t.lanes))*(t.laneH+t.laneGap)
	return t
}

// x is the horizontal position of time sec.
func (t *timeline) x(sec float64) float64 { return svgLeft + sec/t.tmax*t.plotW }

// laneY is the top of lane i.
func (t *timeline) laneY(i int) float64 { return svgTop + float64(i)*(t.laneH+t.laneGap) }

// bars are lane l's bars, items shorter than half a pixel merged.
func (t *timeline) bars(l GPUStats) []bar { return bars(l, 0.5/(t.plotW/t.tmax)) }

// legendEntry is one swatch of the legend with its label, placed at x, y.
type legendEntry struct {
	swatch, label string
	x, y          float64
}

// legend lays out the legend, wrapped at the picture's width, and returns the picture's height.
func (t *timeline) legend() ([]legendEntry, float64) {
	var legend []legendEntry
	for _, su := range t.suites {
		legend = append(legend, legendEntry{swatch: fmt.Sprintf(`<rect width="12" height="12" fill="%s"/>`, palette[t.colour[su]][0]), label: su})
	}
	legend = append(legend,
		legendEntry{swatch: fmt.Sprintf(`<rect width="12" height="12" fill="#dddddd"/><rect width="12" height="12" fill="url(#fail)" `+
			`stroke="%s" stroke-width="1.5"/>`, failColour), label: "failed"},
		legendEntry{swatch: `<line x1="6" y1="-1" x2="6" y2="13" stroke="#000000" stroke-width="1.5" stroke-dasharray="3,2"/>`,
			label: boundLegend(t.s)})
	if t.mixedBars() {
		legend = append(legend, legendEntry{swatch: fmt.Sprintf(`<rect width="12" height="12" fill="%s"/>`, mixedColour),
			label: "short items of several suites, merged"})
	}
	lx, ly := float64(svgLeft), t.yAxis+44
	for i := range legend {
		wd := 12 + 6 + svgCharW*float64(len([]rune(shorten(legend[i].label, 40)))) + 18
		if lx+wd > svgWidth-svgRight && lx > svgLeft {
			lx, ly = svgLeft, ly+20
		}
		legend[i].x, legend[i].y = lx, ly
		lx += wd
	}
	return legend, ly + 24
}

// mixedBars reports whether a bar merges short items of several suites (drawn grey).
func (t *timeline) mixedBars() bool {
	for _, l := range t.lanes {
		for _, b := range t.bars(l) {
			if b.N > 1 && b.Suite == "" {
				return true
			}
		}
	}
	return false
}

// heading writes the title line (passed or failed) and the line of figures under it.
func (t *timeline) heading(w *bufio.Writer) {
	s := t.s
	mark, word := "✓", "passed"
	if !s.Passed {
		mark, word = "✗", "failed"
	}
	switch {
	case t.r.Meta.Cancelled:
		word += ", cancelled"
	case !t.r.Meta.Finished:
		word += ", interrupted"
	}
	fmt.Fprintf(w, `<text x="%d" y="22" font-size="15" font-weight="bold">%s sgpu-queue timeline (%s)</text>`+"\n", svgLeft, mark, word)
	work := "work " + textfmt.Dur(s.Work)
	if s.Mixed {
		work += " of GPU time"
	}
	sub := fmt.Sprintf("%d items on %d GPUs · wall %s · %s · lower bound %s (%s above) · utilisation %.1f %%",
		len(t.r.Attempts), len(t.lanes), textfmt.Dur(s.Wall), work, textfmt.Dur(s.Bound), pct(s.AboveBound), 100*s.Utilisation)
	if s.Failed > 0 {
		sub += fmt.Sprintf(" · %d failed", s.Failed)
	}
	if len(s.Missing) > 0 {
		sub += fmt.Sprintf(" · %d never ran to the end", len(s.Missing))
	}
	fmt.Fprintf(w, `<text x="%d" y="40" fill="#333333">%s</text>`+"\n", svgLeft, xmlText(sub, 400))
}

// axis writes the grid, the time axis with its ticks, and its caption.
func (t *timeline) axis(w *bufio.Writer) {
	x, yAxis := t.x, t.yAxis
	step := tickStep(t.tmax)
	fmt.Fprintf(w, `<g stroke="#e0e0e0" stroke-width="1">`)
	for tk := 0.0; tk <= t.tmax+step*1e-9; tk += step {
		fmt.Fprintf(w, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%.1f"/>`, x(tk), svgTop-4, x(tk), yAxis)
	}
	fmt.Fprintf(w, "</g>\n")
	fmt.Fprintf(w, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#555555"/>`+"\n", svgLeft, yAxis, svgWidth-svgRight, yAxis)
	fmt.Fprintf(w, `<g fill="#333333" text-anchor="middle">`)
	for tk := 0.0; tk <= t.tmax+step*1e-9; tk += step {
		fmt.Fprintf(w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#555555"/><text x="%.1f" y="%.1f">%s</text>`,
			x(tk), yAxis, x(tk), yAxis+4, x(tk), yAxis+16, tickLabel(tk, step))
	}
	fmt.Fprintf(w, "</g>\n")
	fmt.Fprintf(w, `<text x="%d" y="%.1f" fill="#555555" text-anchor="end" font-size="10">time since the first item started</text>`+"\n",
		svgWidth-svgRight, yAxis+30)
}

// lanesAndBars writes the lanes, then the bars, so a multi-GPU bar spans the lanes below its first.
func (t *timeline) lanesAndBars(w *bufio.Writer) {
	laneOf := map[string]int{}
	for i, g := range t.lanes {
		laneOf[g.GPU] = i
		fmt.Fprintf(w,
			`<g><title>GPU %s: %d items, %d failed, busy %s, idle %s</title><rect x="%d" y="%.1f" width="%.1f" height="%.1f" fill="#f3f3f3"/>`+
				`<text x="%d" y="%.1f" text-anchor="end" font-weight="bold">GPU %s</text></g>`+"\n",
			xmlText(g.GPU, 40), len(g.Rows), g.Failed, textfmt.Dur(g.Busy), textfmt.Dur(g.Idle),
			svgLeft, t.laneY(i), t.plotW, t.laneH, svgLeft-6, t.laneY(i)+t.laneH/2+4, xmlText(g.GPU, 8))
	}
	for i, l := range t.lanes {
		for _, b := range t.bars(l) {
			span := 1
			if b.N == 1 && len(b.Row.GPUNames()) > 1 {
				if span = blockSpan(b.Row, laneOf, i); span == 0 {
					continue // drawn from an earlier lane
				}
			}
			svgBar(w, b, t.x, t.laneY(i), float64(span)*t.laneH+float64(span-1)*t.laneGap, t.colour)
		}
	}
}

// marks writes the lower bound, and where a cancelled run stopped.
func (t *timeline) marks(w *bufio.Writer) {
	s := t.s
	if s.Bound > 0 {
		bx := t.x(s.Bound)
		fmt.Fprintf(w,
			`<g><title>lower bound %s: max(work/%d, largest item)</title><line x1="%.1f" y1="%d" x2="%.1f" y2="%.1f" stroke="#000000" `+
				`stroke-width="1.5" stroke-dasharray="5,3"/><text x="%.1f" y="%d" text-anchor="end" font-size="10">lower bound</text></g>`+"\n",
			textfmt.Dur(s.Bound), s.GPUs, bx, svgTop-8, bx, t.yAxis, bx-3, svgTop-2)
	}
	if t.r.Meta.Cancelled {
		cx := t.x(s.Wall)
		fmt.Fprintf(w,
			`<g><title>cancelled at t+%s</title><line x1="%.1f" y1="%d" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"/><text x="%.1f" y="%d" `+
				`text-anchor="end" font-size="10" fill="%s">cancelled</text></g>`+"\n",
			textfmt.Dur(s.Wall), cx, svgTop-8, cx, t.yAxis, failColour, cx-3, svgTop-12, failColour)
	}
}

// blockSpan is how many adjacent lanes from lane i a multi-GPU bar covers; 0 when lane i does not start it.
func blockSpan(t record.Attempt, laneOf map[string]int, i int) int {
	mine := map[int]bool{}
	for _, id := range t.GPUNames() {
		mine[laneOf[id]] = true
	}
	if mine[i-1] {
		return 0
	}
	n := 0
	for mine[i+n] {
		n++
	}
	return n
}

// svgBar draws one bar with its tooltip and, when it fits, its label.
func svgBar(w *bufio.Writer, b bar, x func(float64) float64, y, h float64, colour map[string]int) {
	x0, x1 := x(b.Start), x(b.End)
	wd := x1 - x0
	if b.failed() {
		wd = math.Max(wd, 1.5) // a failure stays visible at any scale
	}
	wd = math.Max(wd, 0.3)
	fill, ink := mixedColour, "#ffffff"
	if b.Suite != "" {
		p := palette[colour[b.Suite]]
		fill, ink = p[0], p[1]
	}
	var tip, label string
	if b.N == 1 {
		t := b.Row
		status := fmt.Sprintf("rc=%d", t.RC)
		o := t.Outcome
		if o.Failed() {
			status += " FAILED"
		}
		if o.Named() {
			status += ", " + string(o)
		}
		est := "estimate unknown"
		if t.Known {
			est = "estimate " + logdir.Secs(t.Estimate) + " s"
		}
		gpu := "GPU " + xmlText(t.GPU(), 40)
		if n := len(t.GPUs); n > 1 {
			gpu = fmt.Sprintf("%d GPUs %s", n, xmlText(t.GPU(), 80))
		}
		tip = fmt.Sprintf("%s\n%s (%s s), %s, %s\n%s, t+%s → t+%s",
			xmlText(t.Key(), 200), textfmt.Dur(t.Secs), logdir.Secs(t.Secs), status, xmlText(est, 40),
			gpu, clock(t.StartOff), clock(t.EndOff))
		label = t.Tag
		if label == "" {
			label = t.Label
		}
	} else {
		tip = fmt.Sprintf("%d short items merged, %s of work", b.N, textfmt.Dur(b.Busy))
		if b.Suite != "" {
			tip += " (suite " + xmlText(b.Suite, 60) + ")"
		}
		if b.Failed > 0 {
			tip += fmt.Sprintf(", %d failed", b.Failed)
		}
		tip += fmt.Sprintf("\nt+%s → t+%s", clock(b.Start), clock(b.End))
		label = fmt.Sprintf("%d items", b.N)
	}
	stroke := ""
	if wd >= 3 {
		stroke = ` stroke="#ffffff" stroke-width="0.8"`
	}
	fmt.Fprintf(w, `<g><title>%s</title><rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"%s/>`, tip, x0, y, wd, h, fill, stroke)
	if b.failed() {
		fmt.Fprintf(w, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="url(#fail)" stroke="%s" stroke-width="1.5"/>`, x0, y, wd, h,
			failColour)
		ink = "#000000"
	}
	if n := int((wd - 6) / svgCharW); n >= 4 && h >= 12 {
		fmt.Fprintf(w, `<text x="%.1f" y="%.1f" font-size="10" fill="%s">%s</text>`, x0+3, y+h/2+3.5, ink, xmlText(label, n))
	}
	fmt.Fprintf(w, "</g>\n")
}

// boundLegend names the lower bound; with multi-GPU items the work is GPU time.
func boundLegend(s Stats) string {
	if s.Mixed {
		return "lower bound max(GPU-seconds/N, largest)"
	}
	return "lower bound max(work/N, largest)"
}

// tickStep is a round axis step giving about ten ticks over tmax seconds.
func tickStep(tmax float64) float64 {
	for _, s := range []float64{0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1200, 1800, 3600, 7200, 10800, 21600, 43200,
		86400} {
		if tmax/s <= 12 {
			return s
		}
	}
	return math.Pow(10, math.Ceil(math.Log10(tmax/10)))
}

// tickLabel formats an axis offset for its step: "0.5s", "45s", "12:30", "1:05:00".
func tickLabel(t, step float64) string {
	switch {
	case step < 1:
		return fmt.Sprintf("%.1fs", t)
	case step < 60 && t < 60:
		return fmt.Sprintf("%.0fs", t)
	default:
		return clock(t)
	}
}

// clock formats an offset as m:ss or h:mm:ss.
func clock(t float64) string {
	sec := int(t) // truncated, as textfmt.Dur does, so "t+25:01" and "25m01s" agree
	if t < 10 && t != math.Trunc(t) {
		return fmt.Sprintf("%.1fs", t)
	}
	h, m, ss := sec/3600, sec/60%60, sec%60
	if h > 0 {
		return fmt.Sprintf("%d:%02d:%02d", h, m, ss)
	}
	return fmt.Sprintf("%d:%02d", m, ss)
}

// pct formats a fraction as a percentage: "0.6 %".
func pct(f float64) string {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return "–"
	}
	return fmt.Sprintf("%.1f %%", 100*f)
}
