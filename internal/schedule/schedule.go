// Package schedule is phase 2: it weighs every work item from the weight table,
// orders the queue longest-first (LPT), computes the lower bound a run is measured
// against, and hands items to free GPUs: single-GPU items through a Queue, and a
// workload with multi-GPU items through a Scheduler that hands each item a block of
// GPUs, holding GPUs for a wide item and backfilling around it (blocks.go).
package schedule

import (
	"sort"

	"github.com/rocm/sgpu-queue/internal/weights"
)

// DefaultWeight is the estimate of an item the table has never seen: large, so it
// goes first (unknown-last would make the new item the tail of the run).
const DefaultWeight = 999999

// Item is one unit of work: an item of a list suite, or a whole opaque suite.
type Item struct {
	Label  string
	Tag    string  // "" for an opaque item
	Weight float64 // seconds; the default weight when unknown
	Known  bool    // Weight came from the table
	Seq    int     // position in config/listing order, for stable ties
	// GPUs is how many GPUs the item takes at once; 0 means 1. "All the pool" is
	// resolved to the pool's size before scheduling.
	GPUs int
	// AllGPUs: the item takes the whole pool (gpus=all); ResolveAll sets GPUs to
	// the pool's size once it is known.
	AllGPUs bool
}

// ResolveAll gives every item that takes the whole pool the pool's n GPUs.
func ResolveAll(items []Item, n int) {
	for i := range items {
		if items[i].AllGPUs {
			items[i].GPUs = n
		}
	}
}

// Width is the number of GPUs the item takes at once (at least 1).
func (it Item) Width() int { return max(it.GPUs, 1) }

// Key is the item's weight-table key.
func (it Item) Key() string { return weights.Key(it.Label, it.Tag) }

// Weigh sets Weight and Known of each item from the table.
func Weigh(items []Item, t *weights.Table, defaultWeight float64) {
	for i := range items {
		w, ok := t.Get(items[i].Key())
		items[i].Known = ok
		if ok {
			items[i].Weight = w
		} else {
			items[i].Weight = defaultWeight
		}
	}
}

// Order sorts items for dispatch: unknown items first (in listing order), then known
// items longest first; equal weights keep listing order.
func Order(items []Item) {
	sort.SliceStable(items, func(i, j int) bool {
		a, b := items[i], items[j]
		if a.Known != b.Known {
			return !a.Known
		}
		if a.Known && a.Weight != b.Weight {
			return a.Weight > b.Weight
		}
		return a.Seq < b.Seq
	})
}

// Bound is the lower bound of a run's wall clock over its known items.
type Bound struct {
	Seconds float64 // max(total/N, largest)
	Total   float64 // GPU-seconds of the known items: Σ gpus × weight
	Largest float64 // the longest known weight (wall seconds)
	Known   int
	Unknown int
}

// LowerBound is max(total/N, largest item) over the known items, total counted in
// GPU-seconds (an item on 4 GPUs for 10 s is 40): no schedule on n GPUs can finish
// sooner. Unknown items are counted, not weighed.
func LowerBound(items []Item, n int) Bound {
	var b Bound
	for _, it := range items {
		if !it.Known {
			b.Unknown++
			continue
		}
		b.Known++
		b.Total += float64(it.Width()) * it.Weight
		if it.Weight > b.Largest {
			b.Largest = it.Weight
		}
	}
	if n > 0 {
		b.Seconds = b.Total / float64(n)
	}
	if b.Largest > b.Seconds {
		b.Seconds = b.Largest
	}
	return b
}

// BoundOf is the lower bound of durations of single-GPU items on n GPUs (all known).
func BoundOf(durations []float64, n int) float64 { return BoundOfWidths(durations, nil, n) }

// BoundOfWidths is the lower bound of durations on n GPUs, item i taking width[i]
// GPUs (nil: one each): max(Σ width·duration / n, longest).
func BoundOfWidths(durations []float64, width []int, n int) float64 {
	var total, largest float64
	for i, d := range durations {
		w := 1
		if width != nil {
			w = max(width[i], 1)
		}
		total += float64(w) * d
		if d > largest {
			largest = d
		}
	}
	if n <= 0 {
		return largest
	}
	return max(total/float64(n), largest)
}
