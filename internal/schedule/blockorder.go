package schedule

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Block orders: how a workload with multi-GPU items is ordered before Blocks
// backfills it. Each puts unknown items first, in listing order, as Order does.
const (
	ByDuration   = "duration"    // longest weight first (LPT)
	ByGPUSeconds = "gpu-seconds" // most GPU-seconds (GPUs × weight) first
	ByWidest     = "widest"      // most GPUs first, then longest
)

// BlockOrders lists the fixed block orders: the candidates PlanBlocks tries.
func BlockOrders() []string { return []string{ByDuration, ByGPUSeconds, ByWidest} }

// BlockOrderOf is the block order a run policy uses on a workload with multi-GPU
// items: lpt keeps its meaning (longest first); planned, whose per-GPU plan does not
// apply to blocks, plans the order on the weights (ByChoice, PlanBlocks; docs/performance.md).
func BlockOrderOf(policy string) (string, error) {
	switch policy {
	case PolicyLPT:
		return ByDuration, nil
	case PolicyPlanned, "":
		return ByChoice, nil
	}
	return "", fmt.Errorf("unknown scheduling policy %q: use %s", policy, strings.Join(Policies(), " or "))
}

// BlockOrder returns the indices of items in the block order by (one of
// BlockOrders; anything else is ByDuration, LPTOrder). Ties keep listing order.
func BlockOrder(items []Item, by string) []int {
	if by != ByGPUSeconds && by != ByWidest {
		return LPTOrder(items)
	}
	// Sort keys, larger first: k1, then k2; unknown items before all (+Inf),
	// widest first among themselves when the order is: a first run has no weights,
	// and in listing order its whole-box items would wait behind every narrow one.
	k1 := make([]float64, len(items))
	k2 := make([]float64, len(items))
	for i := range items {
		it := &items[i]
		switch {
		case !it.Estimated() && by == ByWidest:
			k1[i], k2[i] = math.Inf(1), float64(it.Width())
		case !it.Estimated():
			k1[i], k2[i] = math.Inf(1), 0
		case by == ByGPUSeconds:
			k1[i], k2[i] = float64(it.Width())*it.Weight, it.Weight
		default:
			k1[i], k2[i] = float64(it.Width()), it.Weight
		}
	}
	order := make([]int, len(items))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int {
		if c := cmp.Compare(k1[y], k1[x]); c != 0 {
			return c
		}
		if c := cmp.Compare(k2[y], k2[x]); c != 0 {
			return c
		}
		return cmp.Compare(items[x].Seq, items[y].Seq)
	})
	return order
}
