package schedule

import (
	"slices"
	"sync"
)

// StrictOrder is the order of TE's current queue (ci/run_queue.sh): most GPUs
// first, then the largest weight (the default weight when unknown), ties in listing order.
func StrictOrder(items []Item) []int { return orderBy(items, strictRank) }

func strictRank(it *Item) rank { return rank{k1: float64(it.Width()), k2: it.Weight, seq: it.Seq} }

// Strict is TE's current dispatch rule, kept as simulate's comparison: the first
// item starts on the lowest free GPUs once enough are free, and nothing behind it
// starts until then (no backfill).
type Strict struct {
	mu    sync.Mutex
	pool  gpuPool
	queue []entryB // live entries only, in order
}

// NewStrict returns the strict scheduler over items in order (indices into items,
// each once) on gpus GPUs. An item wider than the pool is a *WidthError.
func NewStrict(items []Item, order []int, gpus int) (*Strict, error) {
	pool, err := newPool(items, gpus)
	if err != nil {
		return nil, err
	}
	s := &Strict{pool: pool, queue: make([]entryB, 0, len(order))}
	for _, i := range order {
		s.queue = append(s.queue, entryB{item: i, live: true})
	}
	return s, nil
}

func (s *Strict) Next(_ float64, free []int, running []Running) (int, []int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	usable := make([]int, 0, len(free))
	for _, g := range free {
		if s.pool.has(g) && !slices.Contains(usable, g) {
			usable = append(usable, g)
		}
	}
	slices.Sort(usable)
	for k := range s.queue {
		if g := s.pick(&s.queue[k], usable); g != nil {
			item := s.queue[k].item
			s.queue = slices.Delete(s.queue, k, k+1)
			return item, g, true
		}
		if len(running) > 0 {
			return 0, nil, false // strict: the first item waits, and all behind it
		}
		// Nothing runs that could free a GPU (the rest are suspended): start
		// the first item that fits rather than stall.
	}
	return 0, nil, false
}

// pick returns the lowest free GPUs e may take, those it failed on last when enough
// others are free, or nil when too few are free.
func (s *Strict) pick(e *entryB, free []int) []int {
	w := s.pool.width[e.item]
	if w > len(free) {
		return nil
	}
	others := slices.DeleteFunc(slices.Clone(free), func(g int) bool { return slices.Contains(e.avoid, g) })
	if len(others) >= w {
		return others[:w:w]
	}
	return slices.Clone(free[:w])
}

func (s *Strict) Requeue(item int, avoid []int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.pool.fits(item) {
		return false
	}
	s.queue = append(s.queue, entryB{item: item, avoid: slices.Clone(avoid), live: true})
	return true
}

func (s *Strict) Remove(gpu int) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.pool.remove(gpu) {
		return nil
	}
	var unfit []int
	s.queue = slices.DeleteFunc(s.queue, func(e entryB) bool {
		if !s.pool.fits(e.item) {
			unfit = append(unfit, e.item)
			return true
		}
		return false
	})
	return unfit
}

// Hold reports nothing: the strict rule reserves no GPUs, it only waits.
func (s *Strict) Hold() (int, float64, bool) { return 0, 0, false }

// Calibration is nil: TE's rule goes by no estimate once it has its order.
func (s *Strict) Calibration() *Calibration { return nil }

func (s *Strict) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}
