package schedule

import (
	"fmt"
	"math"
	"slices"
)

// ByChoice is the planned policy's block order: the candidate order (BlockOrders)
// that ends soonest when Blocks replays it on the weights, improved by a bounded
// search that moves one item to another place in the order (PlanBlocks). No single
// order wins on every table (docs/performance.md), so the planner tries them as the
// single-GPU planner tries its plan against LPT.
const ByChoice = "chosen"

// Candidate is one candidate order's wall clock replayed on the weights.
type Candidate struct {
	By   string
	Wall float64
}

// BlockPlan is the order Blocks follow on a workload with multi-GPU items, and how
// it was chosen.
type BlockPlan struct {
	By    string // the policy's block order: ByDuration for lpt, ByChoice for planned
	Order []int  // indices into the items
	// From is the candidate the order started as; Wall its wall clock replayed on
	// the weights after Moves kept moves (0 with unknown items: nothing to replay).
	From  string
	Wall  float64
	Moves int
	// Tried holds the candidates' walls, in BlockOrders' order (none for lpt, or
	// with unknown items).
	Tried []Candidate
}

// Block planner tuning. searchSteps bounds the search's work in item dispatches
// replayed (a replay of n items costs n), so that planning 100,000 items stays near
// a second; a move is kept only when it shortens the replayed wall clock by minGain
// of the bound, as the single-GPU plan must beat LPT by it.
const searchSteps = 400_000

// choiceOrder is the order candidates are tried in: ties keep the earlier one, and
// widest first was the default before the planner chose.
var choiceOrder = []string{ByWidest, ByGPUSeconds, ByDuration}

// PlanBlocks returns the block order the named policy's Blocks follow on items
// (resolved widths, none wider than gpus): lpt's longest first as it is; planned's
// chosen order. With an unknown item the weights cannot rank orders, and planned
// takes widest first (unknown items lead every order). The result depends only on
// the items, their order and gpus.
func PlanBlocks(policy string, items []Item, gpus int) (BlockPlan, error) {
	if gpus < 1 {
		return BlockPlan{}, fmt.Errorf("%d GPUs: want at least 1", gpus)
	}
	if err := CheckWidths(items, gpus); err != nil {
		return BlockPlan{}, err
	}
	by, err := BlockOrderOf(policy)
	if err != nil {
		return BlockPlan{}, err
	}
	if by != ByChoice {
		return BlockPlan{By: by, From: by, Order: BlockOrder(items, by)}, nil
	}
	for _, it := range items {
		if !it.Known {
			return BlockPlan{By: by, From: ByWidest, Order: BlockOrder(items, ByWidest)}, nil
		}
	}
	s := newSearch(items, gpus)
	p := BlockPlan{By: by}
	for _, c := range choiceOrder {
		order := BlockOrder(items, c)
		w := s.wall(order)
		p.Tried = append(p.Tried, Candidate{By: c, Wall: w})
		if p.Order == nil || w < p.Wall {
			p.Order, p.Wall, p.From = order, w, c
		}
	}
	slices.SortStableFunc(p.Tried, func(x, y Candidate) int {
		return slices.Index(BlockOrders(), x.By) - slices.Index(BlockOrders(), y.By)
	})
	p.Order, p.Wall, p.Moves = s.improve(p.Order, p.Wall)
	return p, nil
}

// search replays orders of one workload on its weights.
type search struct {
	items []Item
	gpus  int
	width []int
	dur   []float64
	bound float64
	steps int // item dispatches replayed so far
}

func newSearch(items []Item, gpus int) *search {
	s := &search{items: items, gpus: gpus, width: Widths(items), dur: make([]float64, len(items))}
	for i, it := range items {
		s.dur[i] = it.Weight
	}
	s.bound = BoundOfWidths(s.dur, s.width, gpus)
	return s
}

// wall replays order on the weights; +Inf if Blocks refuses it (it cannot: the
// widths were checked).
func (s *search) wall(order []int) float64 {
	s.steps += len(order)
	b, err := NewBlocks(s.items, order, s.gpus)
	if err != nil {
		return math.Inf(1)
	}
	t, err := ReplayBlocks(b, s.width, s.dur, s.gpus)
	if err != nil {
		return math.Inf(1)
	}
	return t.Wall
}

// improve is the search: first-improvement over moving the item at place i to
// place j (every i, every j ≠ i, in that order; a move past a neighbour is a swap
// of the two), keeping a move when it shortens the wall clock by minGain of the
// bound, until a full scan keeps none, the wall clock reaches the bound, or the
// budget is spent. It returns the order, its wall clock and the moves kept.
func (s *search) improve(order []int, wall float64) ([]int, float64, int) {
	gain := minGain * s.bound
	n := len(order)
	try := make([]int, n)
	moves := 0
	for wall > s.bound+gain {
		kept := false
	scan:
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				if j == i {
					continue
				}
				if s.steps+n > searchSteps {
					return order, wall, moves
				}
				moveTo(try, order, i, j)
				if w := s.wall(try); w < wall-gain {
					order, try = try, order
					wall, kept = w, true
					moves++
					break scan
				}
			}
		}
		if !kept {
			break
		}
	}
	return order, wall, moves
}

// moveTo writes into dst the order src with its element at i moved to place j.
func moveTo(dst, src []int, i, j int) {
	x := src[i]
	switch {
	case i < j:
		copy(dst[:i], src[:i])
		copy(dst[i:j], src[i+1:j+1])
		copy(dst[j+1:], src[j+1:])
	default:
		copy(dst[:j], src[:j])
		copy(dst[j+1:i+1], src[j:i])
		copy(dst[i+1:], src[i+1:])
	}
	dst[j] = x
}
