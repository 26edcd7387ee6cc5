// Package schedule decides which work item runs next, and on which GPUs. NewSetup
// is the one constructor run, plan and simulate share, so that what simulate
// predicts is what run does.
package schedule

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rocm/sgpu-queue/internal/record"

	"github.com/rocm/sgpu-queue/internal/weights"
)

// DefaultWeight is the estimate of an item the table has never seen: large, so it
// goes first (unknown-last would make the new item the tail of the run).
const DefaultWeight = 999999

// Item is one unit of work: an item of a list suite, or a whole opaque suite.
type Item struct {
	record.ItemID
	Weight float64 // seconds; the default weight when unknown
	Known  bool    // Weight came from the run's own table
	// Prior is the estimate Weight came from when the table lacks the item but
	// another source estimated it (WeighPriors); its Kind is weights.NoPrior
	// otherwise.
	Prior weights.Prior
	Seq   int // position in config/listing order, for stable ties
	// GPUs is how many GPUs the item takes at once; 0 means 1. "All the pool" is
	// resolved to the pool's size before scheduling.
	GPUs int
	// AllGPUs: the item takes the whole pool (gpus=all); ResolveAll sets GPUs to
	// the pool's size once it is known.
	AllGPUs bool
}

// Elem points at an element that the steps before scheduling change in place: an
// Item, or a type embedding one (expand.Item), so that a run carries one list.
type Elem[E any] interface {
	*E
	item() *Item
}

func (it *Item) item() *Item { return it }

// ResolveAll gives every item that takes the whole pool the pool's n GPUs.
func ResolveAll[E any, P Elem[E]](items []E, n int) {
	for i := range items {
		if it := P(&items[i]).item(); it.AllGPUs {
			it.GPUs = n
		}
	}
}

// Width is the number of GPUs the item takes at once (at least 1).
func (it Item) Width() int { return max(it.GPUs, 1) }

// Estimated reports whether the item has an estimate to schedule by: a weight
// from the table, or a prior. Only the table's weight sets its hang deadline and
// its est column (docs/weights.md).
func (it Item) Estimated() bool { return it.Known || it.Prior.Kind != weights.NoPrior }

// Weigh sets Weight and Known of each item from the table.
func Weigh[E any, P Elem[E]](items []E, t *weights.Table, defaultWeight float64) {
	for i := range items {
		it := P(&items[i]).item()
		w, ok := t.Get(it.Key())
		it.Known = ok
		if ok {
			it.Weight = w
		} else {
			it.Weight = defaultWeight
		}
	}
}

// WeighPriors gives each item the table lacks its prior from priors (by key), if
// it has one (weights.Priors).
func WeighPriors[E any, P Elem[E]](items []E, priors map[string]weights.Prior) {
	for i := range items {
		it := P(&items[i]).item()
		if p, ok := priors[it.Key()]; ok && !it.Known {
			it.Weight, it.Prior = p.Seconds, p
		}
	}
}

// WeighUnknown gives each item pool's view lacks its prior, if it has one (weights.Pool.Priors: docs/weights.md,
// "Priors for unknown items"), so that run and plan estimate alike; it returns the warnings. Nothing is read when
// every item is known.
func WeighUnknown[E any, P Elem[E]](items []E, pool *weights.Pool, at weights.Place) []string {
	var keys []string
	for i := range items {
		if it := P(&items[i]).item(); !it.Known {
			keys = append(keys, it.Key())
		}
	}
	if len(keys) == 0 {
		return nil
	}
	priors, warns := pool.Priors(at, keys)
	WeighPriors[E, P](items, priors)
	return warns
}

// Order sorts items for dispatch: items without an estimate first (in listing
// order), then the others longest first; equal weights keep listing order.
func Order[E any, P Elem[E]](items []E) {
	// By index: comparing the elements themselves copies each (an expand.Item is
	// ~450 bytes) to the heap at every comparison.
	sorted := make([]E, 0, len(items))
	for _, i := range orderBy[E, P](items, lptRank) {
		sorted = append(sorted, items[i])
	}
	copy(items, sorted)
}

// Mixed reports whether any item takes more than one GPU.
func Mixed(items []Item) bool {
	for _, it := range items {
		if it.Width() > 1 {
			return true
		}
	}
	return false
}

// WidthError is an item that needs more GPUs than the pool has.
type WidthError struct {
	Key   string
	Width int
	Pool  int
}

func (e *WidthError) Error() string {
	return fmt.Sprintf("item %s needs %d GPUs but the pool has %d: give it gpus=%d at most, or run on more GPUs",
		e.Key, e.Width, e.Pool, e.Pool)
}

// CheckWidths returns a *WidthError for the first item wider than a pool of gpus.
func CheckWidths(items []Item, gpus int) error {
	for _, it := range items {
		if it.Width() > gpus {
			return &WidthError{Key: it.Key(), Width: it.Width(), Pool: gpus}
		}
	}
	return nil
}

// gpuPool is a scheduler's GPUs and its items' widths: which GPUs quarantine took
// out, and so which items still fit.
type gpuPool struct {
	width []int  // by item
	gone  []bool // by GPU
	n     int    // GPUs still in the pool
}

// newPool checks items against a pool of gpus GPUs: at least one, no item wider
// (a *WidthError).
func newPool(items []Item, gpus int) (gpuPool, error) {
	if gpus < 1 {
		return gpuPool{}, fmt.Errorf("%d GPUs: want at least 1", gpus)
	}
	if err := CheckWidths(items, gpus); err != nil {
		return gpuPool{}, err
	}
	return gpuPool{width: Widths(items), gone: make([]bool, gpus), n: gpus}, nil
}

// has reports whether g is a GPU of the pool.
func (p *gpuPool) has(g int) bool { return g >= 0 && g < len(p.gone) && !p.gone[g] }

// fits reports whether item still fits the pool.
func (p *gpuPool) fits(item int) bool {
	return item >= 0 && item < len(p.width) && p.width[item] <= p.n
}

// remove takes g out of the pool, false when it was not in.
func (p *gpuPool) remove(g int) bool {
	if !p.has(g) {
		return false
	}
	p.gone[g] = true
	p.n--
	return true
}

// Running is an item running on its GPUs, as the caller of Scheduler.Next sees it.
type Running struct {
	Item  int
	GPUs  []int   // positions in the pool
	Start float64 // seconds, on the clock Next's now is on
}

// Scheduler hands items to free GPUs, an item of width N taking N GPUs at once; GPUs
// are positions in the pool's list. The dispatcher and the simulator drive the same
// Scheduler, each with its own clock.
type Scheduler interface {
	// Next returns the item to start now and the GPUs it takes (rising), or ok
	// false when nothing should start; the caller calls again until ok is false.
	// When nothing runs, Next starts whatever fits rather than stall.
	Next(now float64, free []int, running []Running) (item int, gpus []int, ok bool)
	// Requeue queues the item again at the back, avoiding the GPUs avoid while
	// others can take it; false when it no longer fits the pool.
	Requeue(item int, avoid []int) bool
	// Remove takes a GPU out of the pool for good (quarantine) and returns the
	// queued items that no longer fit, taken out of the queue.
	Remove(gpu int) (unfit []int)
	// Hold reports the item that GPUs are held for, and when its reservation
	// completes by the weights (its expected start), as of the last Next that
	// looked at it; ok is false when nothing is held.
	Hold() (item int, at float64, ok bool)
	// Len is the number of items not yet handed out.
	Len() int
	// Calibration is the run's calibration of the estimates, which the caller
	// tells of each complete attempt; nil: the weights as they are.
	Calibration() *Calibration
}

// Setup is a workload's scheduler, planned once: the policy's plan, the dispatch
// order it intends (for a printed plan and queue.tsv), and a maker of fresh
// Schedulers that follow it, one per run (a simulation replays many).
type Setup struct {
	Policy string
	// Order is the intended dispatch order, indices into the items: the planned
	// queue's when it follows its plan, LPT's otherwise; Blocks' order with
	// multi-GPU items.
	Order []int
	// Plan is the planned policy's single-GPU plan (nil for lpt, and with
	// multi-GPU items); Blocks the plan of a workload with multi-GPU items (nil
	// without).
	Plan   *Plan
	Blocks *BlockPlan
	items  []Item
	width  []int // by item: its GPUs
	gpus   int
	fresh  func(cal *Calibration) Scheduler
	queue  func(cal *Calibration) Queue // a fresh single-GPU queue; nil with multi-GPU items
	trial  bool
}

// Wall replays a fresh Scheduler (Scheduler) on durations dur (by item) and returns
// the wall clock: the one replay behind a report's hindsight, a shard's
// prediction and simulate's rows.
func (s *Setup) Wall(dur []float64) (float64, error) {
	return Wall(s.Scheduler(), s.width, dur, s.gpus)
}

// Scheduler returns a fresh Scheduler following the setup's plan, its estimates
// calibrated as the run goes (a Trial setup's go by the weights).
func (s *Setup) Scheduler() Scheduler {
	if s.trial {
		return s.Uncalibrated()
	}
	return s.fresh(NewCalibration(s.items))
}

// Uncalibrated returns a fresh Scheduler that goes by the weights as they are
// all run long: what calibration changes, for simulate to show.
func (s *Setup) Uncalibrated() Scheduler { return s.fresh(nil) }

// Option changes how NewSetup plans.
type Option int

// Trial is for shard's refinement, which replays thousands of trial workloads: multi-GPU
// items go widest first (no block order search), and its schedulers are uncalibrated.
const Trial Option = 1

// NewSetup plans the scheduler of the named policy ("" is DefaultPolicy) for items
// on gpus GPUs: the policy's Queue behind the Scheduler interface, or Blocks over
// PlanBlocks' order with multi-GPU items. An item wider than the pool is a *WidthError.
func NewSetup(policy string, items []Item, gpus int, opts ...Option) (*Setup, error) {
	if policy == "" {
		policy = DefaultPolicy
	}
	pool, err := newPool(items, gpus)
	if err != nil {
		return nil, err
	}
	s := &Setup{Policy: policy, items: items, width: pool.width, gpus: gpus, trial: slices.Contains(opts, Trial)}
	if Mixed(items) {
		plan := PlanBlocks
		if s.trial {
			plan = trialBlocks
		}
		bp, err := plan(policy, items, gpus)
		if err != nil {
			return nil, err
		}
		s.Blocks, s.Order = &bp, bp.Order
		s.fresh = func(cal *Calibration) Scheduler {
			b, _ := newBlocks(items, bp.Order, gpus, cal) // cannot fail: gpus and widths were checked
			return b
		}
		return s, nil
	}
	switch policy {
	case PolicyLPT:
		s.Order = LPTOrder(items)
		s.queue = func(cal *Calibration) Queue { return newMerge(items, s.Order, cal, nil) }
	case PolicyPlanned:
		p := NewPlan(items, gpus)
		s.Plan, s.Order = &p, p.lpt
		if p.Use {
			s.Order = append(append([]int(nil), p.Unknown...), p.Order...)
		}
		s.queue = func(cal *Calibration) Queue { return p.queue(items, cal) }
	default:
		return nil, fmt.Errorf("unknown scheduling policy %q: use %s", policy, strings.Join(Policies(), " or "))
	}
	s.fresh = func(cal *Calibration) Scheduler { return onSlots(s.queue(cal), gpus, cal) }
	return s, nil
}

// trialBlocks is a Trial setup's multi-GPU plan: the policy's order without the search (widest first).
func trialBlocks(policy string, items []Item, _ int) (BlockPlan, error) {
	by, err := BlockOrderOf(policy)
	if by == ByChoice {
		by = ByWidest
	}
	return BlockPlan{By: by, From: by, Order: BlockOrder(items, by)}, err
}
