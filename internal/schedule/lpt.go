package schedule

import "sync"

// merge is LPT's queue by calibrated estimates, as a merge of the suites' lists:
// one factor scales a whole suite, so a suite keeps its order and a GPU's ask
// costs O(log suites) however the factors change.
type merge struct {
	mu      sync.Mutex
	cal     *Calibration
	fv      view // cal's factors, as of the last sync
	w       []float64
	rank    []int // by item: its place in LPTOrder, for ties
	unknown []int // items without an estimate, in listing order
	upos    int
	lists   [][]int // by suite: its items with an estimate, LPT order
	head    []int   // by suite: its next item's place in lists
	byW     *suiteHeap
	byEst   *suiteHeap
	cursor  int  // into cal's change log
	retries list // handed out last
	n       int  // items not yet handed out, retries aside
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
	q.byW = newSuiteHeap(len(q.lists), func(a, b int) bool { return q.before(q.next(a), q.next(b), 1, 1) })
	q.byEst = newSuiteHeap(len(q.lists), func(a, b int) bool { return q.before(q.next(a), q.next(b), q.fv.f[a], q.fv.f[b]) })
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
	return q.retries.take(slot)
}

func (q *merge) Requeue(item, avoid int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.retries.add(item, avoid)
}

func (q *merge) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.n + q.retries.len()
}

// calibration is the queue's calibration, for OnSlots.
func (q *merge) calibration() *Calibration { return q.cal }

// suiteHeap is a heap of suites, first the one less puts first, that can remove
// or re-rank a suite it holds.
type suiteHeap struct {
	s    []int
	at   []int // by suite: its place in s, −1 when not held
	less func(a, b int) bool
}

func newSuiteHeap(suites int, less func(a, b int) bool) *suiteHeap {
	h := &suiteHeap{at: make([]int, suites), less: less}
	for i := range h.at {
		h.at[i] = -1
	}
	return h
}

func (h *suiteHeap) has(s int) bool { return h.at[s] >= 0 }

// top is the first suite, −1 when empty.
func (h *suiteHeap) top() int {
	if len(h.s) == 0 {
		return -1
	}
	return h.s[0]
}

func (h *suiteHeap) push(s int) {
	h.s = append(h.s, s)
	h.at[s] = len(h.s) - 1
	h.up(len(h.s) - 1)
}

func (h *suiteHeap) remove(s int) {
	i := h.at[s]
	last := len(h.s) - 1
	h.swap(i, last)
	h.s = h.s[:last]
	h.at[s] = -1
	if i < last {
		h.fixAt(i)
	}
}

func (h *suiteHeap) fix(s int) { h.fixAt(h.at[s]) }

func (h *suiteHeap) heapify() {
	for i := len(h.s)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *suiteHeap) fixAt(i int) {
	if !h.up(i) {
		h.down(i)
	}
}

func (h *suiteHeap) swap(i, j int) {
	h.s[i], h.s[j] = h.s[j], h.s[i]
	h.at[h.s[i]], h.at[h.s[j]] = i, j
}

// up moves place i up while it goes first; it reports whether it moved.
func (h *suiteHeap) up(i int) bool {
	moved := false
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(h.s[i], h.s[p]) {
			break
		}
		h.swap(i, p)
		i, moved = p, true
	}
	return moved
}

func (h *suiteHeap) down(i int) {
	n := len(h.s)
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if c+1 < n && h.less(h.s[c+1], h.s[c]) {
			c++
		}
		if !h.less(h.s[c], h.s[i]) {
			return
		}
		h.swap(i, c)
		i = c
	}
}
