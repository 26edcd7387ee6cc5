package schedule

import (
	"cmp"
	"math"
	"slices"
)

// ByChoice is the planned policy's block order, chosen by PlanBlocks: no single
// order wins on every table (docs/performance.md).
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
	// Tried holds the candidates' walls, in BlockOrders' order (none for lpt, with
	// unknown items, or on a workload too large to compare orders).
	Tried []Candidate
	// Rejected counts the shorter alternatives that lost to widest first under
	// noise.
	Rejected int
}

// Block planner tuning, in item dispatches replayed, so that planning stays near a
// second; a workload too large for both the search and the check is run widest first.
const (
	searchSteps     = 300_000
	blockCheckRuns  = 200
	blockCheckSteps = 200_000
	blockPlanSteps  = 2_000_000
)

// choiceOrder is the order candidates are tried in: ties keep the earlier one, and
// widest first, the default before the planner chose, is the reference an
// alternative must not lose to under noise.
func choiceOrder() []string { return []string{ByWidest, ByGPUSeconds, ByDuration} }

// PlanBlocks returns the block order the named policy's Blocks follow on items,
// deterministically (docs/performance.md).
func PlanBlocks(policy string, items []Item, gpus int) (BlockPlan, error) {
	if _, err := newPool(items, gpus); err != nil {
		return BlockPlan{}, err
	}
	by, err := BlockOrderOf(policy)
	if err != nil {
		return BlockPlan{}, err
	}
	widest := BlockPlan{By: by, From: ByWidest, Order: BlockOrder(items, ByWidest)}
	if by != ByChoice {
		return BlockPlan{By: by, From: by, Order: BlockOrder(items, by)}, nil
	}
	n := len(items)
	if n*(len(choiceOrder())+2*len(checkNoise())*checkMin) > blockPlanSteps {
		return widest, nil
	}
	for _, it := range items {
		if !it.Estimated() {
			return widest, nil
		}
	}
	return newSearch(items, gpus).choose(by), nil
}

// choose is PlanBlocks' choice for a workload of known items.
func (s *search) choose(by string) BlockPlan {
	type alt struct {
		from  string
		order []int
		wall  float64
		moves int
	}
	var alts []alt
	p := BlockPlan{By: by}
	for _, c := range choiceOrder() {
		order := BlockOrder(s.items, c)
		w := s.wall(order)
		p.Tried = append(p.Tried, Candidate{By: c, Wall: w})
		alts = append(alts, alt{from: c, order: order, wall: w})
	}
	best := alts[0]
	for _, a := range alts[1:] {
		if a.wall < best.wall {
			best = a
		}
	}
	if order, wall, moves := s.improve(slices.Clone(best.order), best.wall); moves > 0 {
		alts = append(alts, alt{from: best.from, order: order, wall: wall, moves: moves})
	}
	ref := alts[0] // widest first
	slices.SortStableFunc(alts, func(x, y alt) int { return cmp.Compare(x.wall, y.wall) })
	for _, a := range alts {
		if a.wall >= ref.wall-minGain*s.bound {
			break
		}
		if s.robust(a.order, ref.order) {
			ref = a
			break
		}
		p.Rejected++
	}
	p.Order, p.From, p.Wall, p.Moves = ref.order, ref.from, ref.wall, ref.moves
	slices.SortStableFunc(p.Tried, func(x, y Candidate) int {
		return slices.Index(BlockOrders(), x.By) - slices.Index(BlockOrders(), y.By)
	})
	return p
}

// robust reports whether order's mean wall clock is no longer than ref's on paired
// noisy runs at every level of checkNoise.
func (s *search) robust(order, ref []int) bool {
	_, ok := pairedNoise(s.dur, s.gpus, blockCheckRuns, blockCheckSteps, func(dur []float64) float64 {
		return s.replay(order, dur) - s.replay(ref, dur)
	}, func(mean, _ float64) bool { return mean > 0 })
	return ok
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

// wall replays order on the weights, counting the work against searchSteps.
func (s *search) wall(order []int) float64 {
	s.steps += len(order)
	return s.replay(order, s.dur)
}

// replay is order's wall clock with durations dur (+Inf if Blocks refuses it);
// uncalibrated: on the weights a calibration changes nothing and costs 2–3× the time.
func (s *search) replay(order []int, dur []float64) float64 {
	b, err := newBlocks(s.items, order, s.gpus, nil)
	if err != nil {
		return math.Inf(1)
	}
	w, err := Wall(b, s.width, dur, s.gpus)
	if err != nil {
		return math.Inf(1)
	}
	return w
}

// improve is the search: first-improvement over moving the item at place i to
// place j, kept when it shortens the wall clock by minGain of the bound, within
// searchSteps. It returns the order, its wall clock and the moves kept.
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
