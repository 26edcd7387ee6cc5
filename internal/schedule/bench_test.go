package schedule

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/weights"
)

// benchTable is n items of 6 suites with TE-like weights (lognormal, median 30 s)
// and their weight table.
func benchTable(n int) ([]Item, *weights.Table) {
	rng := rand.New(rand.NewPCG(uint64(n), 1))
	items := make([]Item, n)
	t := weights.New()
	for i := range items {
		items[i] = Item{ItemID: record.ItemID{Label: fmt.Sprintf("suite%d", i%6), Tag: fmt.Sprintf("test_%07d", i)}, Seq: i}
		t.Set(items[i].Key(), math.Round(math.Exp(rng.NormFloat64()*1.2)*30))
	}
	return items, t
}

var benchSizes = []int{10_000, 100_000, 1_000_000}

// BenchmarkPlan is phase 2 on n items for 8 GPUs: weigh from the table, then
// order (lpt) or plan (planned), and make the queue the dispatcher pulls from.
// B/op across sizes shows memory linear in items.
func BenchmarkPlan(b *testing.B) {
	for _, n := range benchSizes {
		items, table := benchTable(n)
		b.Run(fmt.Sprintf("weigh/n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				Weigh(items, table, DefaultWeight)
			}
		})
		for _, policy := range Policies() {
			b.Run(fmt.Sprintf("%s/n=%d", policy, n), func(b *testing.B) {
				b.ReportAllocs()
				for range b.N {
					Weigh(items, table, DefaultWeight)
					if _, err := NewQueue(policy, items, 8); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkPlanChecked is the planner's worst case: a table on which the plan
// beats LPT by far (Graham's table, scaled, under 100,000 short items), so that it
// replays both queues with noise before adopting the plan.
func BenchmarkPlanChecked(b *testing.B) {
	big := []float64{7, 7, 6, 6, 5, 5, 4, 4, 4}
	items := make([]Item, 100_000)
	for i := range items {
		w := 0.001
		if i < len(big) {
			w = 1000 * big[i]
		}
		items[i] = Item{Weight: w, Known: true, Seq: i}
	}
	p := NewPlan(items, 4)
	if !p.Use {
		b.Fatalf("the plan was not adopted: %s", p.Note)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		NewPlanned(items, 4)
	}
}

// BenchmarkReplay is one simulated run of 100,000 items on 8 GPUs per policy:
// the queue alone, and behind the Scheduler interface (what `simulate` does per run
// and policy). lpt is the plain list; lpt-calibrated the LPT queue a run uses,
// which merges the suites' lists by calibrated estimate (its calibration made
// with it, and behind the Scheduler interface fed every item's end).
func BenchmarkReplay(b *testing.B) {
	items, table := benchTable(100_000)
	Weigh(items, table, DefaultWeight)
	dur := make([]float64, len(items))
	for i, it := range items {
		dur[i] = it.Weight
	}
	order := LPTOrder(items)
	plan := NewPlan(items, 8)
	for _, tc := range []struct {
		name string
		q    func() Queue
	}{
		{"lpt", func() Queue { return NewPull(order) }},
		{"lpt-calibrated", func() Queue { return newMerge(items, order, NewCalibration(items), nil) }},
		{"planned", func() Queue { return plan.Queue(items) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := Replay(tc.q(), dur, 8); err != nil {
					b.Fatal(err)
				}
			}
		})
		// The same queue behind the Scheduler interface, as simulate drives it.
		b.Run(tc.name+"/scheduler", func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := ReplayBlocks(OnSlots(tc.q(), 8), nil, dur, 8); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// mixedBench is n items for 8 GPUs: TE-like weights, one in ten taking 2–8 GPUs.
func mixedBench(n int) []Item {
	items, table := benchTable(n)
	Weigh(items, table, DefaultWeight)
	rng := rand.New(rand.NewPCG(uint64(n), 2))
	for i := range items {
		if rng.IntN(10) == 0 {
			items[i].GPUs = 2 + rng.IntN(7)
		}
	}
	return items
}

// BenchmarkBlocks is a workload of 100,000 items, one in ten on 2–8 GPUs, on 8
// GPUs: ordering it and making the scheduler (new), and one simulated run through
// every Next (replay: what `simulate` does per run and order, and the dispatcher's
// work per item, the calibration fed every item's end; replay-uncalibrated without
// it). B/op across sizes shows memory linear in items.
func BenchmarkBlocks(b *testing.B) {
	for _, n := range benchSizes[:2] {
		items := mixedBench(n)
		dur := make([]float64, len(items))
		for i, it := range items {
			dur[i] = it.Weight
		}
		width := Widths(items)
		for _, by := range BlockOrders() {
			b.Run(fmt.Sprintf("new/%s/n=%d", by, n), func(b *testing.B) {
				b.ReportAllocs()
				for range b.N {
					if _, err := NewBlocks(items, BlockOrder(items, by), 8); err != nil {
						b.Fatal(err)
					}
				}
			})
			order := BlockOrder(items, by)
			b.Run(fmt.Sprintf("replay/%s/n=%d", by, n), func(b *testing.B) {
				b.ReportAllocs()
				for range b.N {
					s, _ := NewBlocks(items, order, 8)
					if _, err := ReplayBlocks(s, width, dur, 8); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(fmt.Sprintf("replay-uncalibrated/%s/n=%d", by, n), func(b *testing.B) {
				b.ReportAllocs()
				for range b.N {
					s, _ := newBlocks(items, order, 8, nil)
					if _, err := ReplayBlocks(s, width, dur, 8); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkPlanBlocks is the planned policy's order search (PlanBlocks) on n
// items, one in ten on 2–8 GPUs, for 8 GPUs: the replays of the candidates, the
// moves and the noise check. At n=100 the search spends its budget; larger
// workloads reach the bound sooner.
func BenchmarkPlanBlocks(b *testing.B) {
	for _, n := range []int{100, 1000} {
		items := mixedBench(n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := PlanBlocks(PolicyPlanned, items, 8); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
