package schedule

// queue is a fresh queue that follows p (made by NewPlan from items): the guarded
// plan when p.Use, else LPT's, by estimates calibrated by cal.
func (p Plan) queue(items []Item, cal *Calibration) Queue {
	if !p.Use {
		return newMerge(items, p.lpt, cal, nil)
	}
	q := p.planned()
	q.items, q.cal = items, cal
	return q
}

// planned is the planned queue: the plan's order while the GPUs ask in the plan's
// turn (each GPU follows a planned slot; a gap within tau swaps them), LPT's once
// they drift further, as longest first copes best with durations nobody knows.
type planned struct {
	backlog       // onPlan and take run under its lock
	order   []int // the plan's order
	lpt     []int // LPT's order (the fallback)
	pos     int   // next candidate in order
	lpos    int   // next candidate in lpt
	taken   []bool
	w       []float64
	slot    []int     // by item: planned slot
	pfree   []float64 // by planned slot
	follow  []int     // by GPU: the planned slot it follows
	who     []int     // by planned slot: the GPU following it
	tau     float64
	fell    bool // fell back to LPT's order
	items   []Item
	cal     *Calibration
	rest    *merge // LPT's calibrated queue of what was left when it fell back
}

func (p Plan) planned() *planned {
	q := &planned{
		order: p.Order, lpt: p.lpt, w: p.w, slot: p.slot, tau: p.tau,
		taken:  make([]bool, len(p.w)),
		pfree:  make([]float64, p.slots),
		follow: make([]int, p.slots),
		who:    make([]int, p.slots),
	}
	q.n = len(p.w)
	for s := range q.follow {
		q.follow[s], q.who[s] = s, s
	}
	return q
}

func (q *planned) Next(slot int) (int, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.fell {
		for q.pos < len(q.order) && q.taken[q.order[q.pos]] {
			q.pos++
		}
		if q.pos < len(q.order) {
			i := q.order[q.pos]
			if q.onPlan(slot, q.slot[i]) {
				q.pfree[q.slot[i]] += q.w[i]
				return q.take(i), true
			}
			q.fell = true
		}
	}
	if q.items == nil {
		// The planner's own replays: LPT's order as it is.
		for q.lpos < len(q.lpt) && q.taken[q.lpt[q.lpos]] {
			q.lpos++
		}
		if q.lpos < len(q.lpt) {
			return q.take(q.lpt[q.lpos]), true
		}
	} else {
		if q.rest == nil {
			q.rest = newMerge(q.items, q.lpt, q.cal, func(i int) bool { return q.taken[i] })
		}
		if i, ok := q.rest.Next(slot); ok {
			return q.take(i), true
		}
	}
	// Retries last, as in the pull.
	return q.tail.take(slot)
}

// onPlan reports whether GPU slot may take the next item of the plan, which belongs
// to planned slot want, and makes slot follow want.
func (q *planned) onPlan(slot, want int) bool {
	if slot < 0 || slot >= len(q.follow) {
		return true // AnySlot: nothing else is running, any GPU will do
	}
	have := q.follow[slot]
	if have == want {
		return true
	}
	if gap := q.pfree[have] - q.pfree[want]; gap > q.tau || gap < -q.tau {
		return false
	}
	other := q.who[want]
	q.follow[slot], q.follow[other] = want, have
	q.who[want], q.who[have] = slot, other
	return true
}

func (q *planned) take(i int) int {
	q.taken[i] = true
	q.n--
	return i
}
