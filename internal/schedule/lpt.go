package schedule

// merge is LPT's queue by calibrated estimates, as a merge of the suites' lists:
// one factor scales a whole suite, so a suite keeps its order and a GPU's ask
// costs O(log suites) however the factors change.
type merge struct {
	backlog
	cal     *Calibration
	fv      view // cal's factors, as of the last sync
	w       []float64
	rank    []int // by item: its place in LPTOrder, for ties
	unknown []int // items without an estimate, in listing order
	upos    int
	lists   [][]int // by suite: its items with an estimate, LPT order
	head    []int   // by suite: its next item's place in lists
	byW     *idHeap
	byEst   *idHeap
	cursor  int // into cal's change log
}

// newMerge is LPT's queue over the items not skipped (skip nil: all), calibrated by
// cal (nil: exactly NewPull(lpt)); lpt is LPTOrder(items), kept by a plan.
func newMerge(items []Item, lpt []int, cal *Calibration, skip func(int) bool) *merge {
	q := &merge{cal: cal, fv: newView(cal), w: make([]float64, len(items)), rank: make([]int, len(items))}
	q.lists = make([][]int, cal.Suites())
	for r, i := range lpt {
		if skip != nil && skip(i) {
			continue
		}
		q.w[i], q.rank[i] = items[i].Weight, r
		q.n++
		if !items[i].Estimated() {
			q.unknown = append(q.unknown, i)
			continue
		}
		s := cal.Suite(i)
		q.lists[s] = append(q.lists[s], i)
	}
	q.head = make([]int, len(q.lists))
	q.byW = newIDHeap(len(q.lists), func(a, b int) bool { return q.before(q.next(a), q.next(b), 1, 1) })
	q.byEst = newIDHeap(len(q.lists), func(a, b int) bool { return q.before(q.next(a), q.next(b), q.fv.f[a], q.fv.f[b]) })
	for s, l := range q.lists {
		if len(l) > 0 {
			q.byW.push(s)
		}
	}
	q.sync()
	return q
}

// next is suite s's next item.
func (q *merge) next(s int) int { return q.lists[s][q.head[s]] }

// before reports whether item a (its factor fa) goes before item b (fb): the
// longer estimate, ties as LPTOrder has them (listing order).
func (q *merge) before(a, b int, fa, fb float64) bool {
	ea, eb := q.w[a]*fa, q.w[b]*fb
	if ea != eb {
		return ea > eb
	}
	return q.rank[a] < q.rank[b]
}

// sync follows the calibration's changes: a suite that got a factor of its own
// moves to the heap by estimate; one whose own factor changed is re-ranked.
func (q *merge) sync() {
	if !q.fv.refresh() {
		return
	}
	var ch []int
	ch, q.cursor = q.cal.changes(q.cursor)
	fixed := 0
	for _, s := range ch {
		switch {
		case s < 0 || q.head[s] >= len(q.lists[s]):
		case q.byW.has(s):
			q.byW.remove(s)
			q.byEst.push(s)
			fixed++
		default:
			q.byEst.fix(s)
			fixed++
		}
	}
	if fixed > 1 {
		// Several factors changed at once: rank the whole heap anew rather than
		// trust one fix at a time.
		q.byEst.heapify()
	}
}

func (q *merge) Next(slot int) (int, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.upos < len(q.unknown) {
		q.n--
		q.upos++
		return q.unknown[q.upos-1], true
	}
	q.sync()
	h := q.byW
	if a, b := q.byW.top(), q.byEst.top(); b >= 0 && (a < 0 || q.before(q.next(b), q.next(a), q.fv.f[b], q.fv.f[a])) {
		h = q.byEst
	}
	if s := h.top(); s >= 0 {
		i := q.next(s)
		q.head[s]++
		if q.head[s] == len(q.lists[s]) {
			h.remove(s)
		} else {
			h.fix(s)
		}
		q.n--
		return i, true
	}
	// Retries last, as in the pull.
	return q.tail.take(slot)
}

// calibration is the queue's calibration, for OnSlots.
func (q *merge) calibration() *Calibration { return q.cal }
