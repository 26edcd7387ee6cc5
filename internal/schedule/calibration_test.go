package schedule

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/weights"
)

// obs is one complete item: its index and its actual duration.
type obs struct {
	item int
	secs float64
}

func TestCalibration(t *testing.T) {
	// Suites a (items 0–5), b (6–11), c (12); every weight 100 s. Item 13 of a is
	// unknown, 14 has a sibling's prior, 15 another table's.
	items := make([]Item, 16)
	for i := range items {
		label := "a"
		switch {
		case i >= 6 && i < 12:
			label = "b"
		case i == 12:
			label = "c"
		}
		items[i] = Item{ItemID: record.ItemID{Label: label, Tag: fmt.Sprint(i)}, Weight: 100, Known: true, Seq: i}
	}
	items[13].Known, items[13].Weight = false, DefaultWeight
	items[14].Known, items[14].Prior = false, weights.Prior{Seconds: 100, Kind: weights.FromSibling}
	items[15].Known, items[15].Prior = false, weights.Prior{Seconds: 100, Kind: weights.FromTable}
	ratio := func(item int, rs ...float64) []obs {
		var out []obs
		for _, r := range rs {
			out = append(out, obs{item, 100 * r})
		}
		return out
	}
	cat := func(os ...[]obs) []obs { return slices.Concat(os...) }
	tests := []struct {
		name string
		obs  []obs
		// want: the factor of items 0 (a), 6 (b), 12 (c); all 1 when nil.
		want    []float64
		factors bool // Factors reports them
	}{
		{name: "nothing finished", want: []float64{1, 1, 1}},
		{name: "two items are not enough", obs: ratio(0, 0.5, 0.5), want: []float64{1, 1, 1}},
		{name: "three at half: every suite at half", obs: ratio(0, 0.5, 0.5, 0.5), want: []float64{0.5, 0.5, 0.5}, factors: true},
		{name: "one of the three from another table", obs: cat(ratio(0, 0.5, 0.5), ratio(15, 0.5)), want: []float64{0.5, 0.5, 0.5},
			factors: true},
		{name: "unknown and sibling-estimated items teach nothing", obs: cat(ratio(0, 0.5, 0.5), ratio(13, 0.5), ratio(14, 0.5)),
			want: []float64{1, 1, 1}},
		{name: "a suite of its own against the run's", obs: cat(ratio(0, 0.5, 0.5, 0.5), ratio(6, 2, 2, 2)),
			want: []float64{0.5, 2, 1}, factors: true},
		{name: "noise alone calibrates nothing", obs: ratio(0, 0.9, 1.1, 1, 0.95, 1.05, 0.92, 1.08), want: []float64{1, 1, 1},
			factors: true},
		{name: "one item far off: its suite's median holds, the run's waits", obs: ratio(0, 0.5, 0.5, 0.5, 0.5, 40),
			want: []float64{0.5, 1, 1}, factors: true},
		{name: "the run's factor from every suite", obs: cat(ratio(0, 0.5), ratio(6, 0.5), ratio(12, 0.5)), want: []float64{0.5, 0.5, 0.5},
			factors: true},
		{name: "two suites a factor apart: spread, not a factor for all", obs: cat(ratio(0, 0.5, 0.5), ratio(6, 2, 2)),
			want: []float64{1, 1, 1}, factors: true},
		{name: "bounded above", obs: ratio(0, 100, 100, 100), want: []float64{20, 20, 20}, factors: true},
		{name: "bounded below", obs: ratio(0, 0.001, 0.001, 0.001), want: []float64{0.05, 0.05, 0.05}, factors: true},
		{name: "an item that took no time", obs: ratio(0, 0, 0, 0), want: []float64{0.05, 0.05, 0.05}, factors: true},
		{name: "no item and nonsense durations are ignored", obs: []obs{{-1, 50}, {99, 50}, {0, math.NaN()}, {0, -5}, {0, math.Inf(1)}},
			want: []float64{1, 1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCalibration(items)
			for _, o := range tt.obs {
				c.Observe(o.item, o.secs)
			}
			for k, i := range []int{0, 6, 12} {
				if got := c.Factor(i); math.Abs(got-tt.want[k]) > 1e-9 {
					t.Errorf("factor of %s = %g, want %g", items[i].Label, got, tt.want[k])
				}
				if got := c.Estimate(i, 100); math.Abs(got-100*tt.want[k]) > 1e-7 {
					t.Errorf("estimate of %s = %g, want %g", items[i].Label, got, 100*tt.want[k])
				}
			}
			if got := c.Factors() != nil; got != tt.factors {
				t.Errorf("Factors %+v, want some: %v", c.Factors(), tt.factors)
			}
			if least := newView(c).least; least != slices.Min([]float64{c.Factor(0), c.Factor(6), c.Factor(12)}) {
				t.Errorf("least factor %g, factors %g %g %g", least, c.Factor(0), c.Factor(6), c.Factor(12))
			}
		})
	}
}

// The work of the ETA: each suite's times its factor; a nil calibration is the
// weights as they are, and never calibrates.
func TestCalibrationWork(t *testing.T) {
	items := []Item{{ItemID: record.ItemID{Label: "a"}, Weight: 10, Known: true}, {ItemID: record.ItemID{Label: "a"}, Weight: 10, Known: true}, {ItemID: record.ItemID{Label: "a"}, Weight: 10, Known: true},
		{ItemID: record.ItemID{Label: "b"}, Weight: 10, Known: true}}
	c := NewCalibration(items)
	for i := 0; i < 3; i++ {
		c.Observe(i, 5)
	}
	if got := c.Work([]float64{100, 40}); math.Abs(got-70) > 1e-9 {
		t.Errorf("work %g, want 50 + 20", got)
	}
	fs := c.Factors()
	if len(fs) != 2 || fs[0] != (SuiteFactor{Label: "a", Factor: 0.5, Items: 3, Own: true, Run: 3}) ||
		fs[1] != (SuiteFactor{Label: "b", Factor: 0.5, Items: 0, Run: 3}) {
		t.Errorf("Factors %+v", fs)
	}
	var none *Calibration
	none.Observe(0, 5)
	if none.Factor(0) != 1 || none.Work([]float64{3, 4}) != 7 || none.Factors() != nil || newView(none).least != 1 || none.Version() != 0 {
		t.Error("a nil calibration is not the weights as they are")
	}
}

// The same observations in the same order give the same factors: what simulate
// predicts is what a run does.
func TestCalibrationDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	items := make([]Item, 300)
	for i := range items {
		items[i] = Item{ItemID: record.ItemID{Label: fmt.Sprint("s", rng.IntN(5))}, Weight: 1 + rng.Float64()*100, Known: rng.IntN(8) > 0, Seq: i}
	}
	var o []obs
	for _, i := range rng.Perm(len(items)) {
		o = append(o, obs{i, items[i].Weight * (0.3 + rng.Float64())})
	}
	run := func() []SuiteFactor {
		c := NewCalibration(items)
		for _, x := range o {
			c.Observe(x.item, x.secs)
		}
		return c.Factors()
	}
	if a, b := run(), run(); !slices.Equal(a, b) {
		t.Errorf("two feeds of the same observations: %+v and %+v", a, b)
	}
}

// The median of the ratios agrees with a sort of the latest calWindow of them as
// they were when it was last computed: every ratio up to calExact, then each
// eighth more.
func TestRatios(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var r ratios
	var logs []float64
	for n := 1; n < 3000; n++ {
		v := math.Round(rng.Float64()*20+1) / 4
		r.add(v)
		logs = append(logs, math.Log(v))
		if n <= calExact && r.at != n || r.at > n || 8*n >= 9*r.at+8 {
			t.Fatalf("%d ratios: computed at %d", n, r.at)
		}
		seen := slices.Sorted(slices.Values(logs[max(0, r.at-calWindow):r.at]))
		if r.med != middle(seen) {
			t.Fatalf("%d ratios: median %g, want %g", n, r.med, middle(seen))
		}
	}
}
