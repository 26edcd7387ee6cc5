package schedule

import (
	"cmp"
	"math"
	"slices"
	"sync"

	"github.com/rocm/sgpu-queue/internal/weights"
)

// Calibration tuning, chosen with the simulator (docs/performance.md, "Estimates
// that hold"): a suite's own factor from its calSuite-th complete item, the run's
// shared factor (for suites with fewer) from the run's calRun-th; every factor
// within [1/calBound, calBound].
const (
	calSuite = 3
	calRun   = 3
	calBound = 20
	// calZ: a median ratio is trusted only as far as it stands out of its own
	// spread, by calZ standard errors (ratios), so noise alone, which leaves the
	// median near 1, calibrates next to nothing.
	calZ = 1
)

// tQuantile is Student's t at 97.5 % by degrees of freedom (1 to 30); beyond,
// the normal's 1.96.
var tQuantile = [...]float64{12.71, 4.30, 3.18, 2.78, 2.57, 2.45, 2.36, 2.31, 2.26, 2.23, 2.20, 2.18, 2.16, 2.14, 2.13,
	2.12, 2.11, 2.10, 2.09, 2.09, 2.08, 2.07, 2.07, 2.06, 2.06, 2.06, 2.05, 2.05, 2.05, 2.04}

func studentT(df int) float64 {
	if df >= 1 && df <= len(tQuantile) {
		return tQuantile[df-1]
	}
	return 1.96
}

// Calibration scales a run's estimates by its suite's factor (docs/performance.md,
// "Estimates that hold"); deterministic, so a simulation predicts a run. nil is the
// weights as they are.
type Calibration struct {
	mu     sync.Mutex
	w      []float64 // by item: its weight
	evid   []bool    // by item: its actual/estimate is evidence
	suite  []int     // by item
	labels []string  // by suite
	med    []ratios  // by suite
	all    ratios
	factor []float64 // by suite: its own factor, while own
	own    []bool    // by suite
	owned  []int     // the suites with their own factor, in the order they got it
	shared float64   // the run's factor, for the suites without their own
	least  float64   // the least factor in force
	log    []int     // the suites whose factor changed, in order; -1 the shared one
}

// NewCalibration starts the calibration of a run of items: every factor 1.
func NewCalibration(items []Item) *Calibration {
	c := &Calibration{w: make([]float64, len(items)), evid: make([]bool, len(items)), shared: 1, least: 1}
	c.suite, c.labels = suitesOf(items)
	for i, it := range items {
		c.w[i] = it.Weight
		c.evid[i] = it.Weight > 0 && (it.Known || it.Prior.Kind == weights.FromTable)
	}
	c.med = make([]ratios, len(c.labels))
	for s := range c.med {
		c.med[s].trim = true
	}
	c.factor = make([]float64, len(c.labels))
	c.own = make([]bool, len(c.labels))
	return c
}

// Observe takes a complete attempt of item that ran seconds. An item without
// an estimate from a table teaches nothing.
func (c *Calibration) Observe(item int, seconds float64) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if item < 0 || item >= len(c.w) || !c.evid[item] || !(seconds >= 0) || math.IsInf(seconds, 1) {
		return
	}
	r := seconds / c.w[item]
	s := c.suite[item]
	own, run := c.med[s].add(r), c.all.add(r)
	before := len(c.log)
	if run && c.all.n() >= calRun {
		if f := c.all.factor(1); f != c.shared {
			c.shared = f
			c.log = append(c.log, -1)
			// Every suite's own factor stands against the run's: a change of
			// the run's moves them all.
			for _, o := range c.owned {
				c.setOwn(o, c.med[o].factor(c.shared))
			}
		}
	}
	if c.med[s].n() >= calSuite && (own || !c.own[s]) {
		if !c.own[s] {
			c.own[s] = true
			c.owned = append(c.owned, s)
			c.factor[s] = math.NaN() // logged as a change
		}
		c.setOwn(s, c.med[s].factor(c.shared))
	}
	if len(c.log) != before {
		c.least = c.shared
		for _, o := range c.owned {
			c.least = min(c.least, c.factor[o])
		}
	}
}

// setOwn sets suite s's own factor, logging a change. Caller holds c.mu.
func (c *Calibration) setOwn(s int, f float64) {
	if f != c.factor[s] {
		c.factor[s] = f
		c.log = append(c.log, s)
	}
}

// factorOf is suite s's factor in force. Caller holds c.mu.
func (c *Calibration) factorOf(s int) float64 {
	if c.own[s] {
		return c.factor[s]
	}
	return c.shared
}

// Factor is the factor in force for item's suite (1 before any).
func (c *Calibration) Factor(item int) float64 {
	if c == nil {
		return 1
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if item < 0 || item >= len(c.suite) {
		return 1
	}
	return c.factorOf(c.suite[item])
}

// Estimate is item's weight times its suite's factor in force.
func (c *Calibration) Estimate(item int, weight float64) float64 { return weight * c.Factor(item) }

// Suite is item's suite, an index from 0 in the order of first appearance.
func (c *Calibration) Suite(item int) int {
	if c == nil {
		return 0
	}
	return c.suite[item] // fixed at NewCalibration: no lock needed
}

// Suites is the number of suites (1 for a nil Calibration: one for all).
func (c *Calibration) Suites() int {
	if c == nil {
		return 1
	}
	return len(c.labels)
}

// Work is the calibrated sum of work by suite (work[s] in seconds of weight):
// each suite's times its factor in force.
func (c *Calibration) Work(work []float64) float64 {
	var total float64
	for _, w := range work {
		total += w
	}
	if c == nil {
		return total
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// The shared factor for all, corrected for the (few) suites with their own.
	out := total * c.shared
	for _, s := range c.owned {
		if s < len(work) {
			out += work[s] * (c.factor[s] - c.shared)
		}
	}
	return out
}

// Version counts the factor changes so far: two equal versions mean the same
// estimates.
func (c *Calibration) Version() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.log)
}

// snapshot is the factor in force by suite, nil for a nil Calibration.
func (c *Calibration) snapshot() []float64 {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]float64, len(c.labels))
	for s := range out {
		out[s] = c.factorOf(s)
	}
	return out
}

// changes returns the suites whose factor changed since cursor (-1: the shared
// factor) and the cursor to pass next time.
func (c *Calibration) changes(cursor int) ([]int, int) {
	if c == nil {
		return nil, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.log[cursor:len(c.log):len(c.log)], len(c.log)
}

// view is a scheduler's copy of a calibration's factors, taken again when the
// calibration's version moves: an estimate is read without the calibration's
// lock. A view of a nil calibration is every factor 1.
type view struct {
	cal     *Calibration
	version int
	f       []float64 // by suite
	least   float64
}

func newView(c *Calibration) view {
	v := view{cal: c, version: -1, f: []float64{1}, least: 1}
	v.refresh()
	return v
}

// refresh takes the factors again if they changed, and reports whether they did.
func (v *view) refresh() bool {
	if v.cal == nil {
		return false
	}
	v.cal.mu.Lock()
	defer v.cal.mu.Unlock()
	if len(v.cal.log) == v.version {
		return false
	}
	v.version = len(v.cal.log)
	if len(v.f) != len(v.cal.labels) {
		v.f = make([]float64, len(v.cal.labels))
	}
	for s := range v.f {
		v.f[s] = v.cal.factorOf(s)
	}
	v.least = v.cal.least
	return true
}

// of is item's factor.
func (v *view) of(item int) float64 { return v.f[v.cal.Suite(item)] }

// SuiteFactor is one suite's calibration at the end of a run.
type SuiteFactor struct {
	Label  string
	Factor float64
	// Items is how many of the suite's complete items it was measured on; Own
	// says the factor is the suite's own (else the run's, over Run items).
	Items int
	Own   bool
	Run   int
}

// Factors is every suite's factor in force, in the order of first appearance;
// nil while none is (fewer than calRun complete items with an estimate).
func (c *Calibration) Factors() []SuiteFactor {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.all.n() < calRun {
		return nil
	}
	out := make([]SuiteFactor, len(c.labels))
	for s, l := range c.labels {
		out[s] = SuiteFactor{Label: l, Factor: c.factorOf(s), Items: c.med[s].n(), Own: c.own[s], Run: c.all.n()}
	}
	return out
}

// ratios are a suite's (or a run's) actual/estimate as logs, the latest calWindow,
// with their median and its standard error; a suite's (trim) leaves out the ⌈n/8⌉
// farthest from the median, so that one item far off does not move its factor.
type ratios struct {
	trim    bool
	logs    []float64 // a ring of the latest calWindow
	count   int       // ratios seen
	buf     []float64 // scratch for compute
	at      int       // count when med and se were computed
	med, se float64   // of the logs
}

// calExact: up to this many ratios, every one recomputes the median; calWindow:
// the most recent ratios it is taken over.
const (
	calExact  = 64
	calWindow = 1024
)

func (r *ratios) n() int { return r.count }

// add takes one ratio and reports whether the median was computed again.
func (r *ratios) add(v float64) bool {
	lv := min(max(math.Log(max(v, 1e-300)), -math.Log(calBound)), math.Log(calBound))
	if len(r.logs) < calWindow {
		r.logs = append(r.logs, lv)
	} else {
		r.logs[r.count%calWindow] = lv
	}
	r.count++
	if r.count <= calExact || r.count*8 >= r.at*9 {
		r.compute()
		return true
	}
	return false
}

func (r *ratios) compute() {
	n := len(r.logs)
	r.at = r.count
	r.buf = append(r.buf[:0], r.logs...)
	sorted := r.buf
	slices.Sort(sorted)
	r.med = middle(sorted)
	r.se = 0
	if n < 2 {
		return
	}
	slices.SortStableFunc(sorted, func(a, b float64) int { return cmp.Compare(math.Abs(a-r.med), math.Abs(b-r.med)) })
	if r.trim && n >= 4 {
		sorted = sorted[:n-(n+7)/8]
	}
	var mean, m2 float64
	for k, v := range sorted {
		d := v - mean
		mean += d / float64(k+1)
		m2 += d * (v - mean)
	}
	sd := math.Sqrt(m2 / float64(len(sorted)-1))
	// A median scatters 1.2533 times as much as a mean.
	r.se = studentT(len(sorted)-1) * 1.2533 * sd / math.Sqrt(float64(n))
}

// middle is the median of sorted values (not empty).
func middle(vs []float64) float64 {
	n := len(vs)
	if n%2 == 1 {
		return vs[n/2]
	}
	return (vs[n/2-1] + vs[n/2]) / 2
}

// factor is the median ratio, moved towards ref by calZ standard errors (not
// past ref), within [1/calBound, calBound]: a run's factor stands against 1, a
// suite's against the run's.
func (r *ratios) factor(ref float64) float64 {
	d := r.med - math.Log(ref)
	shrunk := max(0, math.Abs(d)-calZ*r.se)
	f := ref * math.Exp(math.Copysign(shrunk, d))
	return min(max(f, 1.0/calBound), calBound)
}
