package schedule

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/rocm/sgpu-queue/internal/record"
)

// Uncalibrated, or before anything finished, the LPT queue hands out exactly
// LPTOrder, retries at the back avoiding their GPU, as the pull queue does.
func TestLPTIsThePull(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 200; trial++ {
		n := 1 + rng.IntN(40)
		items := make([]Item, n)
		for i := range items {
			items[i] = Item{ItemID: record.ItemID{Label: fmt.Sprint("s", rng.IntN(4)), Tag: fmt.Sprint(i)}, Weight: float64(rng.IntN(20)), Known: rng.IntN(6) > 0,
				Seq: rng.IntN(n)}
		}
		for _, cal := range []*Calibration{nil, NewCalibration(items)} {
			a, b := NewLPT(items, cal), NewPull(LPTOrder(items))
			for step := 0; a.Len() > 0 || b.Len() > 0; step++ {
				slot := rng.IntN(3) - 1
				x, okx := a.Next(slot)
				y, oky := b.Next(slot)
				if x != y || okx != oky || a.Len() != b.Len() {
					t.Fatalf("trial %d step %d slot %d: lpt %d %v (len %d), pull %d %v (len %d)", trial, step, slot, x, okx, a.Len(), y, oky,
						b.Len())
				}
				if okx && rng.IntN(5) == 0 {
					a.Requeue(x, slot)
					b.Requeue(x, slot)
				}
				if !okx && slot != AnySlot {
					continue
				}
				if !okx {
					break
				}
			}
		}
	}
}

// Calibrated, every ask gets the item with the longest estimate (weight × its
// suite's factor in force then; ties in listing order), whatever the factors
// did meanwhile: the queue against a sort of what is left at each ask.
func TestLPTCalibrated(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	for trial := 0; trial < 300; trial++ {
		n := 1 + rng.IntN(60)
		items := make([]Item, n)
		for i := range items {
			items[i] = Item{ItemID: record.ItemID{Label: fmt.Sprint("s", rng.IntN(1+rng.IntN(6)))}, Weight: float64(1 + rng.IntN(50)), Known: rng.IntN(8) > 0,
				Seq: i}
		}
		bias := []float64{0.2, 1, 3, 0.5, 7, 1}
		cal := NewCalibration(items)
		q := NewLPT(items, cal)
		left := make([]bool, n)
		for i := range left {
			left[i] = true
		}
		for q.Len() > 0 {
			want := -1
			for i, l := range left {
				if !l {
					continue
				}
				if want < 0 || lptBefore(items, cal, i, want) {
					want = i
				}
			}
			got, _ := q.Next(AnySlot)
			if got != want {
				t.Fatalf("trial %d: got item %d (%g × %g), want %d (%g × %g)", trial, got, items[got].Weight, cal.Factor(got), want,
					items[want].Weight, cal.Factor(want))
			}
			left[got] = false
			// What ended meanwhile: some handed-out items, each its suite's bias off.
			for k := rng.IntN(3); k > 0; k-- {
				i := rng.IntN(n)
				if !left[i] {
					cal.Observe(i, items[i].Weight*bias[cal.Suite(i)%len(bias)]*(0.9+0.2*rng.Float64()))
				}
			}
		}
	}
}

// lptBefore is the LPT rule on calibrated estimates: unknown first (listing
// order), then the longest estimate, ties in listing order.
func lptBefore(items []Item, cal *Calibration, a, b int) bool {
	ea, eb := items[a].Estimated(), items[b].Estimated()
	if ea != eb {
		return !ea
	}
	if !ea {
		return items[a].Seq < items[b].Seq
	}
	wa, wb := cal.Estimate(a, items[a].Weight), cal.Estimate(b, items[b].Weight)
	if wa != wb {
		return wa > wb
	}
	return items[a].Seq < items[b].Seq || items[a].Seq == items[b].Seq && a < b
}

// A suite found three times slower than its weights goes ahead of one that runs
// to them.
func TestLPTSlowSuiteFirst(t *testing.T) {
	var items []Item
	for _, x := range []struct {
		label string
		w     float64
	}{{"a", 100}, {"b", 90}, {"a", 50}, {"b", 45}, {"a", 40}, {"b", 35}, {"a", 30}, {"b", 25}, {"b", 20}, {"b", 15}} {
		items = append(items, Item{ItemID: record.ItemID{Label: x.label, Tag: fmt.Sprint(x.w)}, Weight: x.w, Known: true, Seq: len(items)})
	}
	cal := NewCalibration(items)
	q := NewLPT(items, cal)
	var got []string
	take := func() {
		i, _ := q.Next(AnySlot)
		got = append(got, items[i].Key())
	}
	take()
	for _, i := range []int{0, 2, 4} { // a at its weights
		cal.Observe(i, items[i].Weight)
	}
	for _, i := range []int{7, 8, 9} { // b three times slower
		cal.Observe(i, 3*items[i].Weight)
	}
	for q.Len() > 0 {
		take()
	}
	want := []string{"a/100", "b/90", "b/45", "b/35", "b/25", "b/20", "a/50", "b/15", "a/40", "a/30"}
	if !slices.Equal(got, want) {
		t.Errorf("order %v, want %v (factors a %g, b %g)", got, want, cal.Factor(0), cal.Factor(1))
	}
}
