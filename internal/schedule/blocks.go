package schedule

import (
	"math"
	"slices"
	"sync"
)

// Blocks is the scheduler of a workload with multi-GPU items: EASY backfilling by
// calibrated estimates (docs/performance.md).
type Blocks struct {
	mu    sync.Mutex // every exported method takes it; the unexported ones run under it
	cal   *Calibration
	fv    view      // cal's factors, as of the last Next
	w     []float64 // by item
	known []bool    // by item: it has an estimate
	pool  gpuPool

	ent     []entryB // the queue: the order, then requeued items
	head    int      // first live entry
	left    int      // live entries
	classes map[int]*class
	widths  []int // the widths with a class, rising

	hold hold

	// scratch, reused by every Next
	free  []bool
	list  []int
	ends  []endCount
	avoid []bool
}

type entryB struct {
	item  int
	avoid []int
	live  bool
	local int // its index in its width's class
}

// class is the queue's entries of one width, to find the first that may backfill
// in O(log n): pos holds their queue positions (rising), t their weights while they
// are queued and known (+Inf otherwise), by index in pos.
type class struct {
	pos []int
	t   *minTree
}

type hold struct {
	item int
	at   float64
	ok   bool
}

type endCount struct {
	at   float64
	n    int
	sure bool // by a known weight not yet reached
}

// NewBlocks returns the block scheduler over items in the given order (indices
// into items, each once) on a pool of gpus GPUs, calibrated as the run goes. An
// item wider than the pool is a *WidthError.
func NewBlocks(items []Item, order []int, gpus int) (*Blocks, error) {
	return newBlocks(items, order, gpus, NewCalibration(items))
}

// newBlocks is NewBlocks with the calibration cal (nil: the weights as they are).
func newBlocks(items []Item, order []int, gpus int, cal *Calibration) (*Blocks, error) {
	pool, err := newPool(items, gpus)
	if err != nil {
		return nil, err
	}
	b := &Blocks{
		cal: cal, fv: newView(cal),
		w: make([]float64, len(items)), known: make([]bool, len(items)),
		pool: pool, classes: map[int]*class{},
		free: make([]bool, gpus), avoid: make([]bool, gpus),
		ent: make([]entryB, 0, len(order)),
	}
	for i, it := range items {
		b.w[i], b.known[i] = it.Weight, it.Estimated()
	}
	count := map[int]int{}
	for _, i := range order {
		count[b.pool.width[i]]++
	}
	for i := range items {
		if wd := b.pool.width[i]; b.classes[wd] == nil {
			b.classes[wd] = &class{pos: make([]int, 0, count[wd]), t: newMinTree(max(count[wd], 1))}
			b.widths = append(b.widths, wd)
		}
	}
	slices.Sort(b.widths)
	for _, i := range order {
		b.push(i, nil)
	}
	return b, nil
}

// push appends an entry for item at the back of the queue.
func (b *Blocks) push(item int, avoid []int) {
	c := b.classes[b.pool.width[item]]
	p := len(b.ent)
	b.ent = append(b.ent, entryB{item: item, avoid: avoid, live: true, local: len(c.pos)})
	b.left++
	c.pos = append(c.pos, p)
	if len(c.pos) > c.t.n {
		// Double the tree and refill it from the class's queued entries.
		c.t = newMinTree(2 * len(c.pos))
		for k, q := range c.pos {
			if e := b.ent[q]; e.live && b.known[e.item] {
				c.t.set(k, b.w[e.item])
			}
		}
	} else if b.known[item] {
		c.t.set(len(c.pos)-1, b.w[item])
	}
}

func (b *Blocks) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.left
}

// Calibration is the run's calibration of the estimates Blocks holds GPUs and
// backfills by: the caller tells it of each complete item.
func (b *Blocks) Calibration() *Calibration { return b.cal }

// est is item's calibrated estimate.
func (b *Blocks) est(item int) float64 { return b.w[item] * b.fv.of(item) }

func (b *Blocks) Hold() (int, float64, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.hold.item, b.hold.at, b.hold.ok
}

func (b *Blocks) Requeue(item int, avoid []int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.pool.fits(item) {
		return false
	}
	b.push(item, slices.Clone(avoid))
	return true
}

func (b *Blocks) Remove(gpu int) []int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.pool.remove(gpu) {
		return nil
	}
	var unfit []int
	for p := b.head; p < len(b.ent); p++ {
		if e := b.ent[p]; e.live && !b.pool.fits(e.item) {
			b.drop(p)
			unfit = append(unfit, e.item)
		}
	}
	if b.hold.ok && slices.Contains(unfit, b.hold.item) {
		b.hold = hold{}
	}
	return unfit
}

// drop takes entry p out of the queue.
func (b *Blocks) drop(p int) {
	e := &b.ent[p]
	e.live = false
	b.left--
	b.classes[b.pool.width[e.item]].t.set(e.local, math.Inf(1))
	for b.head < len(b.ent) && !b.ent[b.head].live {
		b.head++
	}
}

func (b *Blocks) Next(now float64, free []int, running []Running) (int, []int, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.fv.refresh()
	nfree := b.markFree(free)
	defer b.clearFree()
	if b.left == 0 {
		b.hold = hold{}
		return 0, nil, false
	}
	if nfree == 0 {
		return 0, nil, false // the hold, if any, stands as last computed
	}
	h := b.head
	if g, ok := b.place(h, nfree, false); ok {
		b.hold = hold{}
		return b.take(h, g)
	}
	at, extra := b.reserve(h, now, running)
	b.hold = hold{item: b.ent[h].item, at: at, ok: !math.IsInf(at, 1)}
	if p, g, ok := b.backfill(h, now, at, extra, nfree); ok {
		return b.take(p, g)
	}
	if len(running) == 0 {
		// Nothing runs that could free a GPU: start the first item that fits,
		// whatever it avoids, rather than stall.
		for p := h; p < len(b.ent); p++ {
			if b.ent[p].live {
				if g, ok := b.place(p, nfree, true); ok {
					b.hold = hold{}
					return b.take(p, g)
				}
			}
		}
	}
	return 0, nil, false
}

// markFree marks the usable GPUs of free (once each) and returns their count.
func (b *Blocks) markFree(free []int) int {
	b.list = b.list[:0]
	for _, g := range free {
		if b.pool.has(g) && !b.free[g] {
			b.free[g] = true
			b.list = append(b.list, g)
		}
	}
	return len(b.list)
}

func (b *Blocks) clearFree() {
	for _, g := range b.list {
		b.free[g] = false
	}
}

func (b *Blocks) take(p int, g []int) (int, []int, bool) {
	item := b.ent[p].item
	b.drop(p)
	return item, g, true
}

// strict reports whether entry e must avoid its GPUs: the pool has enough others.
func (b *Blocks) strict(e *entryB) bool {
	if len(e.avoid) == 0 {
		return false
	}
	n := b.pool.n
	for _, g := range e.avoid {
		if b.pool.has(g) {
			n--
		}
	}
	return n >= b.pool.width[e.item]
}

// place picks the GPUs entry p would take from the free ones now, or false. It
// avoids the GPUs the entry failed on when enough others are free; when they are
// not, it waits for others if the pool has them, unless force.
func (b *Blocks) place(p, nfree int, force bool) ([]int, bool) {
	e := &b.ent[p]
	w := b.pool.width[e.item]
	if w > nfree {
		return nil, false
	}
	if len(e.avoid) > 0 {
		n := nfree
		for _, g := range e.avoid {
			if g >= 0 && g < len(b.free) && b.free[g] && !b.avoid[g] {
				b.avoid[g] = true
				n--
			}
		}
		var g []int
		if n >= w {
			g = b.alloc(w, true)
		}
		for _, a := range e.avoid {
			if a >= 0 && a < len(b.avoid) {
				b.avoid[a] = false
			}
		}
		if g != nil {
			return g, true
		}
		if b.strict(e) && !force {
			return nil, false
		}
	}
	return b.alloc(w, false), true
}

// alloc takes w free GPUs from the shortest run of adjacent ones that holds w, so
// that longer runs stay whole for wider items. The caller has checked w are free.
func (b *Blocks) alloc(w int, skip bool) []int {
	ok := func(g int) bool { return b.free[g] && !(skip && b.avoid[g]) }
	type run struct{ at, n int }
	var runs []run
	best := -1
	for g := 0; g < len(b.free); {
		if !ok(g) {
			g++
			continue
		}
		r := run{at: g}
		for g < len(b.free) && ok(g) {
			g++
			r.n++
		}
		if r.n >= w && (best < 0 || r.n < runs[best].n) {
			best = len(runs)
		}
		runs = append(runs, r)
	}
	out := make([]int, 0, w)
	if best >= 0 {
		for g := runs[best].at; g < runs[best].at+w; g++ {
			out = append(out, g)
		}
		return out
	}
	slices.SortStableFunc(runs, func(x, y run) int { return y.n - x.n })
	for _, r := range runs {
		for g := r.at; g < r.at+r.n && len(out) < w; g++ {
			out = append(out, g)
		}
	}
	slices.Sort(out)
	return out
}

// reserve returns when the head's reservation completes by the running items'
// estimates (+Inf: they cannot free enough) and how many GPUs free by then it will
// not need (extra). An item unknown or past its estimate ends "now" for the former,
// never for extra, so nothing backfills onto GPUs the head may need.
func (b *Blocks) reserve(h int, now float64, running []Running) (float64, int) {
	e := &b.ent[h]
	w := b.pool.width[e.item]
	strict := b.strict(e)
	counts := func(g int) bool {
		return b.pool.has(g) && !(strict && slices.Contains(e.avoid, g))
	}
	free := 0
	for _, g := range b.list {
		if counts(g) {
			free++
		}
	}
	b.ends = b.ends[:0]
	for _, r := range running {
		n := 0
		for _, g := range r.GPUs {
			if counts(g) {
				n++
			}
		}
		if n == 0 {
			continue
		}
		ec := endCount{at: now, n: n} // unknown, or past its estimate
		if r.Item >= 0 && r.Item < len(b.w) && b.known[r.Item] {
			if end := r.Start + b.est(r.Item); end > now {
				ec.at, ec.sure = end, true
			}
		}
		b.ends = append(b.ends, ec)
	}
	slices.SortFunc(b.ends, func(x, y endCount) int {
		switch {
		case x.at < y.at:
			return -1
		case x.at > y.at:
			return 1
		}
		return 0
	})
	at := math.Inf(1)
	if free >= w {
		at = now
	}
	avail := free
	for i := 0; i < len(b.ends) && avail < w; i++ {
		avail += b.ends[i].n
		at = b.ends[i].at
	}
	// extra: GPUs free when the reservation completes, beyond the head's need,
	// counting only the items sure to have ended by then.
	extra := 0
	if !math.IsInf(at, 1) {
		sure := free
		for _, ec := range b.ends {
			if ec.sure && ec.at <= at {
				sure += ec.n
			}
		}
		extra = max(0, sure-w)
	}
	return at, extra
}

// backfill finds the first entry after the head, in queue order, that may start
// now: known, fits the free GPUs, and by its estimate ends before at or takes no
// more than the extra GPUs.
func (b *Blocks) backfill(h int, now, at float64, extra, nfree int) (int, []int, bool) {
	window := math.Min(at-now, math.MaxFloat64) // +Inf would admit unknown items
	for p := h + 1; ; {
		best := -1
		for _, wd := range b.widths {
			if wd > nfree {
				break
			}
			lim := window
			if wd <= extra {
				lim = math.MaxFloat64
			}
			if lim < 0 {
				continue
			}
			c := b.classes[wd]
			from, _ := slices.BinarySearch(c.pos, p)
			if k := b.firstFit(c, from, lim); k >= 0 && (best < 0 || c.pos[k] < best) {
				best = c.pos[k]
			}
		}
		if best < 0 {
			return 0, nil, false
		}
		if g, ok := b.place(best, nfree, false); ok {
			return best, g, true
		}
		p = best + 1
	}
}

// maxPassed bounds the entries firstFit passes over whose weight fits but whose
// calibrated estimate does not: past it the search gives up, which only leaves a
// GPU idle a while, never delays the head.
const maxPassed = 64

// firstFit is the first index from from in class c whose calibrated estimate is at
// most lim, or −1; the tree holds weights, so it is asked up to lim / the least
// factor and each candidate checked.
func (b *Blocks) firstFit(c *class, from int, lim float64) int {
	if lim == math.MaxFloat64 {
		return c.t.first(from, lim)
	}
	// +Inf would admit unknown items (their weight in the tree is +Inf).
	raw := math.Min(lim/b.fv.least, math.MaxFloat64)
	for passed := 0; passed <= maxPassed; passed++ {
		k := c.t.first(from, raw)
		if k < 0 || b.est(b.ent[c.pos[k]].item) <= lim {
			return k
		}
		from = k + 1
	}
	return -1
}
