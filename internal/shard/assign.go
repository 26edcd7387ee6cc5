// Package shard splits a run's items over the runners of a job matrix and merges what they did (docs/runners.md).
// An item the plan does not know goes by a stable hash of its key, so shards need no coordination.
package shard

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/rocm/sgpu-queue/internal/schedule"
)

// MaxShards bounds K: a GitHub Actions matrix runs at most 256 jobs.
const MaxShards = 256

// Assignment is items split over shards, and what each shard is predicted to take.
type Assignment struct {
	Shards, GPUs int
	// Of is each item's shard, 0 … Shards−1 (Plan numbers them from 1).
	Of []int
	// By shard: the predicted wall clock (the default policy replayed on the weights), GPU-seconds, items.
	Wall  []float64
	Work  []float64
	Count []int
	// Over all items: GPU-seconds, the longest item, and the bound max(Total/(Shards·GPUs), Largest).
	Total, Largest float64
	LargestItem    int
	Bound          float64
	// Unknown counts the items without a weight or a prior, each planned as Estimate (the others' mean, or 1 s);
	// Priors the items planned by their prior (schedule.WeighUnknown).
	Unknown, Priors int
	Estimate        float64
	// Hashed counts the items put on their HashShard because JSON cannot carry a non-UTF-8 key.
	Hashed int
	// Moves is how many refinement moves and swaps were kept; LPTWall the slowest shard's wall before them.
	Moves   int
	LPTWall float64
}

// Refinement tuning: a gain under minGain of the bound is noise in a real run; replayBudget keeps
// a 100,000-item plan under a second.
const (
	minGain      = 0.001
	replayBudget = 3_000_000
)

// Assign splits items over shards of gpus GPUs each by the rule of docs/runners.md, "The rule": LPT on GPU-seconds,
// each shard's wall predicted by replaying the scheduler, then moves and swaps while they lower the slowest wall.
// An item without an estimate (schedule.Item.Estimated) weighs the others' mean; an item wider than gpus is a *schedule.WidthError. The result depends
// only on the items and their order.
func Assign(items []schedule.Item, shards, gpus int) (*Assignment, error) {
	switch {
	case shards < 1 || shards > MaxShards:
		return nil, fmt.Errorf("%d shards: want from 1 to %d (a job matrix runs at most %d jobs)", shards, MaxShards, MaxShards)
	case gpus < 1:
		return nil, fmt.Errorf("%d GPUs per shard: want at least 1", gpus)
	}
	if err := schedule.CheckWidths(items, gpus); err != nil {
		return nil, err
	}
	a := &Assignment{Shards: shards, GPUs: gpus, Of: make([]int, len(items)), LargestItem: -1}
	sp := newSplit(a, estimated(items, a))
	sp.lpt()
	if err := sp.predict(); err != nil {
		return nil, err
	}
	a.LPTWall = slices.Max(a.Wall)
	if err := sp.refine(); err != nil {
		return nil, err
	}
	return a, nil
}

// estimated gives each item without an estimate the mean estimate; it sets a.Unknown, a.Priors and a.Estimate.
func estimated(items []schedule.Item, a *Assignment) []schedule.Item {
	var sum float64
	known := 0
	for _, it := range items {
		if it.Estimated() {
			sum += it.Weight
			known++
		}
		if !it.Known && it.Estimated() {
			a.Priors++
		}
	}
	a.Estimate = 1
	if known > 0 {
		a.Estimate = sum / float64(known)
	}
	out := slices.Clone(items)
	for i := range out {
		if !out[i].Estimated() {
			out[i].Weight = a.Estimate
			a.Unknown++
		}
		out[i].Known = true
	}
	if a.Unknown == 0 {
		a.Estimate = 0
	}
	return out
}

// split is Assign's working state.
type split struct {
	a       *Assignment
	items   []schedule.Item // every one known
	cost    []float64       // by item: GPU-seconds
	order   []int           // items by cost, largest first
	pinned  []bool          // by item: on its hash shard for good
	members [][]int         // by shard: its items, in order's order
	budget  int             // items the refinement may still replay
}

func newSplit(a *Assignment, items []schedule.Item) *split {
	sp := &split{a: a, items: items, cost: make([]float64, len(items)), pinned: make([]bool, len(items)), budget: replayBudget}
	for i, it := range items {
		sp.cost[i] = float64(it.Width()) * it.Weight
		a.Total += sp.cost[i]
		if a.LargestItem < 0 || it.Weight > a.Largest {
			a.Largest, a.LargestItem = it.Weight, i
		}
	}
	a.Bound = max(a.Total/float64(a.Shards*a.GPUs), a.Largest)
	sp.order = make([]int, len(items))
	for i := range sp.order {
		sp.order[i] = i
	}
	keys := make([]string, len(items))
	for i, it := range items {
		keys[i] = it.Key()
	}
	slices.SortFunc(sp.order, func(x, y int) int {
		if c := cmp.Compare(sp.cost[y], sp.cost[x]); c != 0 {
			return c
		}
		if c := cmp.Compare(items[y].Weight, items[x].Weight); c != 0 {
			return c
		}
		if c := strings.Compare(keys[x], keys[y]); c != 0 {
			return c
		}
		return cmp.Compare(x, y)
	})
	return sp
}

// lpt is step 1; items a plan cannot carry go to their hash shard first, so the others balance around them.
func (sp *split) lpt() {
	a := sp.a
	a.Work = make([]float64, a.Shards)
	a.Count = make([]int, a.Shards)
	for _, i := range sp.order {
		if key := sp.items[i].Key(); !utf8.ValidString(key) {
			sp.pinned[i] = true
			a.Hashed++
			sp.place(i, HashShard(key, a.Shards)-1)
		}
	}
	for _, i := range sp.order {
		if sp.pinned[i] {
			continue
		}
		best := 0
		for s := 1; s < a.Shards; s++ {
			if a.Work[s] < a.Work[best] {
				best = s
			}
		}
		sp.place(i, best)
	}
	sp.members = make([][]int, a.Shards)
	for _, i := range sp.order {
		s := a.Of[i]
		sp.members[s] = append(sp.members[s], i)
	}
}

func (sp *split) place(i, s int) {
	sp.a.Of[i] = s
	sp.a.Work[s] += sp.cost[i]
	sp.a.Count[s]++
}

// predict sets every shard's Wall by the default policy's replay.
func (sp *split) predict() error {
	sp.a.Wall = make([]float64, sp.a.Shards)
	for s, m := range sp.members {
		w, err := sp.wall(m, schedule.DefaultPolicy)
		if err != nil {
			return err
		}
		sp.a.Wall[s] = w
	}
	return nil
}

// wall replays the items m on one shard under policy, the weights as durations; schedule.Trial skips the
// multi-GPU order search.
func (sp *split) wall(m []int, policy string, opts ...schedule.Option) (float64, error) {
	if len(m) == 0 {
		return 0, nil
	}
	sub := make([]schedule.Item, len(m))
	dur := make([]float64, len(m))
	for k, i := range m {
		sub[k], dur[k] = sp.items[i], sp.items[i].Weight
	}
	setup, err := schedule.NewSetup(policy, sub, sp.a.GPUs, opts...)
	if err != nil {
		return 0, err
	}
	w, err := setup.Wall(dur)
	if err != nil {
		return 0, fmt.Errorf("predicting a shard: %w", err)
	}
	return w, nil
}

// maxRounds bounds the refinement's kept moves and swaps.
const maxRounds = 1000

// refine is step 3: moves and swaps judged on trial walls, kept when the default policy's replay confirms them.
func (sp *split) refine() error {
	a := sp.a
	if a.Shards < 2 || len(sp.items) < 2 {
		return nil
	}
	gain := minGain * a.Bound
	r := &refiner{sp: sp, gain: gain, rank: make([]int, len(sp.items)),
		cur: make([][]int, a.Shards), work: slices.Clone(a.Work), walls: make([]float64, a.Shards)}
	for k, i := range sp.order {
		r.rank[i] = k
	}
	for s, m := range sp.members {
		r.cur[s] = slices.Clone(m)
		w, err := sp.trial(m)
		if err != nil {
			return err
		}
		r.walls[s] = w
	}
	moves := 0
	for moves < maxRounds && sp.budget > 0 {
		hi := slices.Index(r.walls, slices.Max(r.walls)) // the first of equals
		if r.walls[hi] <= a.Bound+gain {
			break
		}
		ok, err := r.improve(hi)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		moves++
	}
	if moves == 0 {
		return nil
	}
	walls := make([]float64, a.Shards)
	for s, m := range r.cur {
		w, err := sp.wall(m, schedule.DefaultPolicy)
		if err != nil {
			return err
		}
		walls[s] = w
	}
	if !(slices.Max(walls) <= slices.Max(a.Wall)-gain) {
		return nil // the trial walls' gain does not survive the real policy
	}
	a.Moves, a.Wall, sp.members = moves, walls, r.cur
	for s, m := range r.cur {
		a.Work[s], a.Count[s] = r.work[s], len(m)
		for _, i := range m {
			a.Of[i] = s
		}
	}
	return nil
}

// trial predicts a shard cheaply for the refinement: one LPT or widest-first replay instead of the planner's search.
func (sp *split) trial(m []int) (float64, error) {
	sp.budget -= len(m)
	policy := schedule.PolicyLPT
	for _, i := range m {
		if sp.items[i].Width() > 1 {
			policy = schedule.DefaultPolicy
			break
		}
	}
	return sp.wall(m, policy, schedule.Trial)
}

// refiner is the refinement's working split.
type refiner struct {
	sp    *split
	gain  float64
	rank  []int     // by item: its place in sp.order
	cur   [][]int   // by shard: its items, in rank order
	work  []float64 // by shard: GPU-seconds
	walls []float64 // by shard: trial wall
}

// improve makes one move or swap out of shard hi that lowers the larger trial wall by gain; false when none does.
func (r *refiner) improve(hi int) (bool, error) {
	sp, n := r.sp, float64(r.sp.a.GPUs)
	target := r.walls[hi] - r.gain
	// The least busy first; one as slow as hi may still gain from a swap.
	others := make([]int, 0, len(r.cur)-1)
	for s := range r.cur {
		if s != hi {
			others = append(others, s)
		}
	}
	slices.SortStableFunc(others, func(x, y int) int { return cmp.Compare(r.walls[x], r.walls[y]) })
	for _, lo := range others {
		for _, i := range r.cur[hi] {
			if sp.pinned[i] {
				continue
			}
			// j = -1 moves i alone; equal GPU-seconds may still pack better swapped.
			for k := -1; k < len(r.cur[lo]); k++ {
				j, cj := -1, 0.0
				if k >= 0 {
					j, cj = r.cur[lo][k], sp.cost[r.cur[lo][k]]
					if sp.pinned[j] {
						continue
					}
				}
				// No replay when a bound already rules the change out.
				if (r.work[lo]+sp.cost[i]-cj)/n > target || (r.work[hi]-sp.cost[i]+cj)/n > target || sp.items[i].Weight > target || j >= 0 &&
					sp.items[j].Weight > target {
					continue
				}
				if sp.budget <= 0 {
					return false, nil
				}
				ok, err := r.try(hi, lo, i, j, target)
				if ok || err != nil {
					return ok, err
				}
			}
		}
	}
	return false, nil
}

// try moves item i to lo (and j, unless -1, to hi) and keeps it when both shards end by target.
func (r *refiner) try(hi, lo, i, j int, target float64) (bool, error) {
	sp := r.sp
	newHi := r.without(r.cur[hi], i)
	newLo := r.with(r.cur[lo], i)
	if j >= 0 {
		newHi = r.with(newHi, j)
		newLo = r.without(newLo, j)
	}
	wl, err := sp.trial(newLo)
	if err != nil || wl > target {
		return false, err
	}
	wh, err := sp.trial(newHi)
	if err != nil || wh > target {
		return false, err
	}
	cj := 0.0
	if j >= 0 {
		cj = sp.cost[j]
	}
	r.cur[hi], r.cur[lo] = newHi, newLo
	r.walls[hi], r.walls[lo] = wh, wl
	r.work[hi] += cj - sp.cost[i]
	r.work[lo] += sp.cost[i] - cj
	return true, nil
}

// with returns m plus item i, in rank order (a new slice).
func (r *refiner) with(m []int, i int) []int {
	k, _ := slices.BinarySearchFunc(m, r.rank[i], func(x, rank int) int { return cmp.Compare(r.rank[x], rank) })
	return slices.Insert(slices.Clone(m), k, i)
}

// without returns m less item i (a new slice).
func (r *refiner) without(m []int, i int) []int {
	return slices.DeleteFunc(slices.Clone(m), func(x int) bool { return x == i })
}
