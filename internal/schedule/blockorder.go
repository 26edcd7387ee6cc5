package schedule

import (
	"fmt"
	"math"
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
	switch by {
	case ByGPUSeconds:
		return orderBy(items, func(it *Item) rank {
			if !it.Estimated() {
				return rank{k1: math.Inf(1), seq: it.Seq}
			}
			return rank{k1: float64(it.Width()) * it.Weight, k2: it.Weight, seq: it.Seq}
		})
	case ByWidest:
		// Unknown items first, widest first among themselves: a first run has no
		// weights, and in listing order its whole-box items would wait behind every narrow one.
		return orderBy(items, func(it *Item) rank {
			if !it.Estimated() {
				return rank{k1: math.Inf(1), k2: float64(it.Width()), seq: it.Seq}
			}
			return strictRank(it)
		})
	}
	return LPTOrder(items)
}
