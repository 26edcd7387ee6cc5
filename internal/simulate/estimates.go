package simulate

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/rocm/sgpu-queue/internal/schedule"
	"github.com/rocm/sgpu-queue/internal/weights"
)

// MaxBias keeps a bias factor to what a table from another machine could be off by.
const MaxBias = 1000

// Bias is how far the actual durations are from the weights (docs/performance.md,
// "Estimates that hold"): By[label] ×, else Default × (0: 1).
type Bias struct {
	Default float64
	By      map[string]float64
}

// Of is the factor of label's items.
func (b Bias) Of(label string) float64 {
	if f, ok := b.By[label]; ok {
		return f
	}
	if b.Default == 0 {
		return 1
	}
	return b.Default
}

// Set reports whether the bias is anything but the weights exactly.
func (b Bias) Set() bool { return b.Default != 0 && b.Default != 1 || len(b.By) > 0 }

// ParseBias reads --bias: "F" for every suite, "label=F,…" per suite, or both
// ("0.5,torch=2": torch at 2, every other suite at 0.5).
func ParseBias(s string) (Bias, error) {
	var b Bias
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		label, v, per := strings.Cut(part, "=")
		if !per {
			label, v = "", part
		}
		label = strings.TrimSpace(label)
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || !ratioOK(f) {
			return Bias{}, fmt.Errorf("--bias %q: %q is not a factor above 0 and at most %d (0.5: every item takes half its weight)", s,
				strings.TrimSpace(v), MaxBias)
		}
		switch {
		case !per && b.Default != 0:
			return Bias{}, fmt.Errorf("--bias %q: two factors for every suite; give one, and label=F for a suite of its own", s)
		case !per:
			b.Default = f
		case label == "":
			return Bias{}, fmt.Errorf("--bias %q: %q names no suite; write label=F", s, part)
		default:
			if b.By == nil {
				b.By = map[string]float64{}
			}
			if _, dup := b.By[label]; dup {
				return Bias{}, fmt.Errorf("--bias %q: suite %s twice", s, label)
			}
			b.By[label] = f
		}
	}
	if b.Default == 0 && len(b.By) == 0 {
		return Bias{}, fmt.Errorf("--bias %q: no factor; give F or label=F,…", s)
	}
	return b, nil
}

// check says what is wrong with b for in: a suite it names that in has not.
func (b Bias) check(in *Input) error {
	for _, l := range slices.Sorted(maps.Keys(b.By)) {
		if !slices.Contains(in.Suites, l) {
			return fmt.Errorf("--bias: %s has no suite %q; its suites are %s", in.Name, l, strings.Join(in.Suites, ", "))
		}
	}
	return nil
}

// String is the bias as --bias writes it.
func (b Bias) String() string {
	var parts []string
	if b.Default != 0 {
		parts = append(parts, strconv.FormatFloat(b.Default, 'g', -1, 64))
	}
	for _, l := range slices.Sorted(maps.Keys(b.By)) {
		parts = append(parts, l+"="+strconv.FormatFloat(b.By[l], 'g', -1, 64))
	}
	return strings.Join(parts, ",")
}

// Prior is a cold start: every item is estimated from another table, as a run
// estimates the items its table lacks (weights.Priors).
type Prior struct {
	Name  string
	Table *weights.Table
}

// estimates are items as a run with prior p sees them: each item's weight from p
// (unknown with none), the real durations staying the items' own weights.
func (p *Prior) estimates(items []schedule.Item) ([]schedule.Item, PriorCounts) {
	est := slices.Clone(items)
	keys := make([]string, len(items))
	for i := range items {
		est[i].Known, est[i].Weight = false, schedule.DefaultWeight
		keys[i] = items[i].Key()
	}
	schedule.WeighPriors(est, weights.Priors(weights.New(), []weights.Other{{Name: p.Name, Table: p.Table}}, keys))
	var c PriorCounts
	for _, it := range est {
		switch it.Prior.Kind {
		case weights.FromTable:
			c.Table++
		case weights.FromSibling:
			c.Sibling++
		case weights.FromSuite:
			c.Suite++
		default:
			c.None++
		}
	}
	return est, c
}

// PriorCounts are how many items a prior estimated from what.
type PriorCounts struct{ Table, Sibling, Suite, None int }

// FactorStat is one suite's calibration factor at the end of the default policy's
// runs.
type FactorStat struct {
	Label string
	Stat
	Own int // runs in which it was the suite's own
}

// factors sums up the calibrations of the runs by suite, in the order suites
// first appear.
type factors struct {
	order []string
	by    map[string]*FactorStat
}

func (f *factors) add(fs []schedule.SuiteFactor) {
	if f.by == nil {
		f.by = map[string]*FactorStat{}
	}
	for _, x := range fs {
		s, ok := f.by[x.Label]
		if !ok {
			s = &FactorStat{Label: x.Label}
			f.by[x.Label] = s
			f.order = append(f.order, x.Label)
		}
		s.add(x.Factor)
		if x.Own {
			s.Own++
		}
	}
}

func (f *factors) list() []FactorStat {
	var out []FactorStat
	for _, l := range f.order {
		out = append(out, *f.by[l])
	}
	return out
}

// biased multiplies each duration by its item's bias.
func (b Bias) apply(items []schedule.Item, dur []float64) {
	if !b.Set() {
		return
	}
	for i, it := range items {
		dur[i] *= b.Of(it.Label)
	}
}

// ratioOK reports whether a bias factor is one simulate takes.
func ratioOK(f float64) bool { return f > 0 && f <= MaxBias && !math.IsNaN(f) }
