package schedule

// Bound is the lower bound of a run's wall clock over its items with an estimate.
type Bound struct {
	Seconds float64 // max(total/N, largest)
	Total   float64 // GPU-seconds of the estimated items: Σ gpus × weight
	Largest float64 // the longest estimate (wall seconds)
	Known   int     // items with an estimate: a weight of the table or a prior
	Priors  int     // of those, the items estimated by a prior (docs/weights.md)
	Unknown int
}

// LowerBound is max(total/N, largest item) over the estimated items, total counted in
// GPU-seconds (an item on 4 GPUs for 10 s is 40): no schedule on n GPUs can finish
// sooner. Unknown items are counted, not weighed.
func LowerBound(items []Item, n int) Bound {
	var b Bound
	for _, it := range items {
		if !it.Estimated() {
			b.Unknown++
			continue
		}
		b.Known++
		if !it.Known {
			b.Priors++
		}
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
