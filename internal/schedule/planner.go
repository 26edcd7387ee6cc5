package schedule

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
)

// Policy names accepted by NewSetup (the engine's --policy flag).
const (
	// PolicyLPT is the original design's queue: one shared list, unknown items first, then
	// longest first, pulled by whichever GPU goes idle (NewPull).
	PolicyLPT = "lpt"
	// PolicyPlanned is LPT refined by a plan (NewPlan), used only where it beats LPT
	// on the weights and is no worse under noise; otherwise exactly the LPT queue.
	PolicyPlanned = "planned"
)

// DefaultPolicy is the policy of a run that names none.
const DefaultPolicy = PolicyPlanned

// Policies lists the policy names, the default first.
func Policies() []string { return []string{PolicyPlanned, PolicyLPT} }

// rank is an item's place in an order: the larger k1 first, then the larger k2,
// ties in listing order (seq).
type rank struct {
	k1, k2 float64
	seq    int
}

func compareRank(a, b rank) int {
	if c := cmp.Compare(b.k1, a.k1); c != 0 {
		return c
	}
	if c := cmp.Compare(b.k2, a.k2); c != 0 {
		return c
	}
	return cmp.Compare(a.seq, b.seq)
}

// orderBy returns the indices of items by their ranks, leaving items as they are.
func orderBy[E any, P Elem[E]](items []E, rankOf func(*Item) rank) []int {
	ranks := make([]rank, len(items))
	order := make([]int, len(items))
	for i := range items {
		ranks[i], order[i] = rankOf(P(&items[i]).item()), i
	}
	slices.SortStableFunc(order, func(a, b int) int { return compareRank(ranks[a], ranks[b]) })
	return order
}

// lptRank is Order's rule: unknown items first, then the longest, ties in listing
// order.
func lptRank(it *Item) rank {
	if !it.Estimated() {
		return rank{k1: math.Inf(1), seq: it.Seq}
	}
	return rank{k1: it.Weight, seq: it.Seq}
}

// LPTOrder returns the indices of items in Order's order, leaving items as they are.
func LPTOrder(items []Item) []int { return orderBy(items, lptRank) }

// Plan is a planned assignment of the known items to slots, the dispatch order
// that realises it, and whether the planned queue uses it.
type Plan struct {
	// Slots holds each slot's items (indices into the items), longest first.
	Slots [][]int
	// Loads is each slot's planned busy time, the sum of its items' weights.
	Loads []float64
	// Order is the plan's dispatch order: the known items by planned start, so
	// with exact weights every item starts at its planned time.
	Order []int
	// Unknown holds the items without a weight, in listing order.
	Unknown []int
	// Use reports that the planned queue follows the plan; when false it is the
	// LPT queue. Note says which and why, to follow "planned queue ...".
	Use  bool
	Note string
	// Makespan is the planned queue's wall clock with exact weights (replayed);
	// LPTMakespan is the LPT queue's.
	Makespan    float64
	LPTMakespan float64
	// Bound is max(total/slots, largest) over the known items.
	Bound float64

	lpt   []int     // LPT's order of all items
	slot  []int     // by item: planned slot (-1: not planned)
	w     []float64 // by item: weight
	slots int
	tau   float64 // see planned.onPlan
}

// Plan tuning, chosen with the simulator; go test -tags eval ./internal/simulate
// prints the evidence (eval_test.go).
const (
	// minGain: a plan must beat LPT by this fraction of the bound on the weights,
	// or it is not worth leaving LPT's order (every step away from longest-first
	// costs a little once durations are noisy).
	minGain = 0.001
	// tauFrac: the queue follows the plan while a GPU asks at most this fraction of
	// the planned wall clock away from its planned turn; beyond it the estimates
	// are too far off for the plan's fine balance to hold and LPT's order is safer.
	tauFrac = 0.05
	// maxRounds and maxScan bound the local search: rounds of one move or swap,
	// and weights looked at in all (a round looks at the busiest slot's weights
	// and each other slot's once), so that planning stays well under a second.
	maxRounds = 1000
	maxScan   = 30_000_000
	// checkRuns is the number of paired noisy runs per noise level of the check;
	// checkSteps bounds the item dispatches it simulates in all (a large table gets
	// fewer runs, at least checkMin; large tables rarely get that far, LPT being within
	// minGain of the plan).
	checkRuns  = 600
	checkSteps = 6_000_000
)

// NewPlan plans the known items on slots GPUs: LPT, then a local search that moves
// or swaps items off the most loaded slot. The queue uses the plan only if it beats
// LPT on the weights and is no worse under noise (decide; docs/performance.md).
func NewPlan(items []Item, slots int) Plan {
	slots = max(slots, 1)
	p := Plan{Slots: make([][]int, slots), Loads: make([]float64, slots), slots: slots}
	p.lpt = LPTOrder(items)
	k := 0
	for k < len(p.lpt) && !items[p.lpt[k]].Estimated() {
		k++
	}
	p.Unknown = p.lpt[:k:k]
	known := p.lpt[k:]
	p.w = make([]float64, len(items))
	p.slot = make([]int, len(items))
	for i, it := range items {
		p.w[i], p.slot[i] = it.Weight, -1
	}

	bins := make([]bin, slots)
	load := make([]float64, slots)
	// The least loaded slot first, the lowest on ties.
	least := newIDHeap(slots, func(a, b int) bool { return load[a] < load[b] || load[a] == load[b] && a < b })
	for s := range slots {
		least.push(s)
	}
	var total float64
	for _, i := range known {
		s := least.top()
		bins[s].add(items[i].Weight, i)
		load[s] += items[i].Weight
		least.fix(s)
		total += items[i].Weight
	}
	p.LPTMakespan = maxLoad(load)
	for s := range bins {
		// LPT appended weights in falling order; the search wants them rising.
		slices.Reverse(bins[s].w)
		slices.Reverse(bins[s].idx)
		bins[s].load = load[s]
	}
	if len(known) > 0 {
		p.Bound = max(total/float64(slots), items[known[0]].Weight)
	}
	improve(bins, p.Bound, total)

	start := make([]float64, len(items)) // planned start of each known item
	for s := range bins {
		// Longest first; equal weights in listing order, as in LPT.
		l := bins[s].idx
		slices.SortStableFunc(l, func(a, b int) int { return compareRank(lptRank(&items[a]), lptRank(&items[b])) })
		t := 0.0
		for _, i := range l {
			start[i], p.slot[i] = t, s
			t += items[i].Weight
		}
		p.Slots[s], p.Loads[s] = l, t
	}
	p.Order = slices.Clone(known)
	slices.SortStableFunc(p.Order, func(a, b int) int {
		if c := cmp.Compare(start[a], start[b]); c != 0 {
			return c
		}
		return cmp.Compare(p.slot[a], p.slot[b])
	})
	p.tau = tauFrac * maxLoad(p.Loads)
	p.Makespan = p.LPTMakespan
	p.decide()
	return p
}

// decide sets Use, Note and Makespan: the plan is used only if it pays with exact
// weights and does not cost with noisy ones.
func (p *Plan) decide() {
	switch {
	case len(p.Unknown) > 0:
		p.Note = fmt.Sprintf("is LPT: %d item(s) without a weight, nothing to plan against", len(p.Unknown))
		return
	case p.LPTMakespan-maxLoad(p.Loads) <= max(minGain*p.Bound, 0):
		p.Note = fmt.Sprintf("is LPT: LPT is within %.1f %% of the best plan found", 100*minGain)
		return
	}
	exact, err := replay(p.planned(), p.w, p.slots, nil)
	if err != nil || !(exact < p.LPTMakespan-minGain*p.Bound) {
		p.Note = fmt.Sprintf("is LPT: the plan does not beat it by %.1f %% when replayed", 100*minGain)
		return
	}
	// Paired runs: both queues face the same durations. A loss counts when it
	// stands out of the sampling noise (mean above two standard errors).
	f, ok := pairedNoise(p.w, p.slots, checkRuns, checkSteps, func(dur []float64) float64 {
		a, _ := replay(p.planned(), dur, p.slots, nil)
		b, _ := replay(NewPull(p.lpt), dur, p.slots, nil)
		return a - b
	}, func(mean, se float64) bool { return mean > 2*se })
	if !ok {
		p.Note = fmt.Sprintf("is LPT: the plan beats it on the weights but not with ±%.0f %% noise", 100*f)
		return
	}
	p.Use, p.Makespan = true, exact
	p.Note = fmt.Sprintf("follows a plan: %s s on the weights where LPT takes %s s", trim(exact), trim(p.LPTMakespan))
}

// checkNoise is the noise plans are checked under: each weight times a factor
// uniform in [1−f, 1+f].
func checkNoise() []float64 { return []float64{0.1, 0.2, 0.5} }

// checkMin is the fewest paired runs per noise level of a check.
const checkMin = 8

// pairedNoise is a plan's check: at each level of checkNoise, paired runs (a
// fixed seed: the same workload always gets the same answer) of durations drawn
// from the weights w, at most most of them and steps item dispatches in all; diff
// is the plan's wall clock minus the reference's. It returns the first level at
// which lost says the plan loses, given diff's mean and its standard error.
func pairedNoise(w []float64, gpus, most, steps int, diff func(dur []float64) float64,
	lost func(mean, se float64) bool) (level float64, ok bool) {
	n := len(w)
	noise := checkNoise()
	runs := min(most, max(checkMin, steps/(2*len(noise)*max(n, 1))))
	rng := rand.New(rand.NewPCG(uint64(n), uint64(gpus)))
	dur := make([]float64, n)
	for _, f := range noise {
		var sum, sq float64
		for range runs {
			for i, x := range w {
				dur[i] = x * (1 + f*(2*rng.Float64()-1))
			}
			d := diff(dur)
			sum += d
			sq += d * d
		}
		mean := sum / float64(runs)
		if lost(mean, math.Sqrt(max(sq/float64(runs)-mean*mean, 0)/float64(runs))) {
			return f, false
		}
	}
	return 0, true
}

// maxLoad is the largest of l, 0 when empty.
func maxLoad(l []float64) float64 {
	var m float64
	for _, v := range l {
		m = max(m, v)
	}
	return m
}

func trim(v float64) string { return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64) }

// bin is one slot's planned items, weights rising (ties: the order they came in).
type bin struct {
	w    []float64
	idx  []int
	load float64
}

func (b *bin) add(w float64, i int) {
	b.w = append(b.w, w)
	b.idx = append(b.idx, i)
}

// insert keeps w rising.
func (b *bin) insert(w float64, i int) {
	at, _ := slices.BinarySearch(b.w, w)
	b.w = slices.Insert(b.w, at, w)
	b.idx = slices.Insert(b.idx, at, i)
	b.load += w
}

func (b *bin) remove(at int) (float64, int) {
	w, i := b.w[at], b.idx[at]
	b.w = slices.Delete(b.w, at, at+1)
	b.idx = slices.Delete(b.idx, at, at+1)
	b.load -= w
	return w, i
}

// closest returns the position in the rising ws of the value nearest to target, or
// -1 when ws is empty.
func closest(ws []float64, target float64) int {
	if len(ws) == 0 {
		return -1
	}
	at, _ := slices.BinarySearch(ws, target)
	switch {
	case at == len(ws):
		return at - 1
	case at > 0 && target-ws[at-1] <= ws[at]-target:
		return at - 1
	}
	return at
}

// improve is the local search. A move of d seconds (one item, or the difference of
// a swapped pair) from the most loaded slot hi to slot j lowers the larger of their
// loads iff 0 < d < gap = load(hi) − load(j), and best when d is near gap/2.
func improve(bins []bin, bound, total float64) {
	if len(bins) < 2 {
		return
	}
	eps := 1e-9 * max(total, 1)
	scan := 0
	for round := 0; round < maxRounds && scan < maxScan; round++ {
		hi := 0
		for s := range bins {
			if bins[s].load > bins[hi].load {
				hi = s
			}
		}
		top := bins[hi].load
		if top <= bound+eps {
			return // optimal
		}
		best := top - eps // a change must beat this
		var bj, ba, bb int
		found := false
		consider := func(j, a, b int, d float64) {
			gap := top - bins[j].load
			if d <= eps || d >= gap-eps {
				return
			}
			if m := max(top-d, bins[j].load+d); m < best {
				best, bj, ba, bb, found = m, j, a, b, true
			}
		}
		h := &bins[hi]
		for j := range bins {
			if j == hi {
				continue
			}
			gap := top - bins[j].load
			if gap <= eps {
				continue
			}
			// Move one item: a near gap/2.
			if a := closest(h.w, gap/2); a >= 0 {
				consider(j, a, -1, h.w[a])
				if a > 0 {
					consider(j, a-1, -1, h.w[a-1])
				}
			}
			// Swap a (in hi) for b (in j): a − b near gap/2. As a rises the target
			// b = a − gap/2 rises, so one pointer walks j's weights once.
			other := bins[j].w
			scan += len(h.w) + len(other)
			p := 0
			for a, wa := range h.w {
				t := wa - gap/2
				for p < len(other) && other[p] < t {
					p++
				}
				for _, b := range [2]int{p - 1, p} {
					if b >= 0 && b < len(other) {
						consider(j, a, b, wa-other[b])
					}
				}
			}
		}
		if !found {
			return
		}
		wa, ia := bins[hi].remove(ba)
		if bb >= 0 {
			wb, ib := bins[bj].remove(bb)
			bins[hi].insert(wb, ib)
		}
		bins[bj].insert(wa, ia)
	}
}
