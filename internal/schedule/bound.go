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
		b.add(it.Width(), it.Weight)
	}
	b.over(n)
	return b
}

// DurationBound is the lower bound of durations on n GPUs, item i taking width[i]
// GPUs (nil: one each), every item known.
func DurationBound(durations []float64, width []int, n int) Bound {
	b := Bound{Known: len(durations)}
	for i, d := range durations {
		w := 1
		if width != nil {
			w = max(width[i], 1)
		}
		b.add(w, d)
	}
	b.over(n)
	return b
}

// BoundOfWidths is DurationBound's seconds.
func BoundOfWidths(durations []float64, width []int, n int) float64 {
	return DurationBound(durations, width, n).Seconds
}

func (b *Bound) add(width int, seconds float64) {
	b.Total += float64(width) * seconds
	if seconds > b.Largest {
		b.Largest = seconds
	}
}

// over sets Seconds for n GPUs: max(total/n, largest), the largest when n < 1.
func (b *Bound) over(n int) {
	b.Seconds = b.Largest
	if n > 0 {
		b.Seconds = max(b.Total/float64(n), b.Largest)
	}
}
