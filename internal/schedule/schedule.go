// Package schedule is phase 2: it weighs every work item from the weight table,
// orders the queue longest-first (LPT), computes the lower bound a run is measured
// against, and hands items to free GPUs through a Queue.
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
}

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
	Total   float64 // sum of known weights
	Largest float64
	Known   int
	Unknown int
}

// LowerBound is max(total/N, largest item) over the known items: no schedule on n
// GPUs can finish sooner. Unknown items are counted, not weighed.
func LowerBound(items []Item, n int) Bound {
	var b Bound
	for _, it := range items {
		if !it.Known {
			b.Unknown++
			continue
		}
		b.Known++
		b.Total += it.Weight
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

// BoundOf is the lower bound of durations on n GPUs (all known).
func BoundOf(durations []float64, n int) float64 {
	var total, largest float64
	for _, d := range durations {
		total += d
		if d > largest {
			largest = d
		}
	}
	if n <= 0 {
		return largest
	}
	return max(total/float64(n), largest)
}
