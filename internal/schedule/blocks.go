package schedule

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
)

// Running is an item running on its GPUs, as the caller of Scheduler.Next sees it.
type Running struct {
	Item  int
	GPUs  []int   // positions in the pool
	Start float64 // seconds, on the clock Next's now is on
}

// Scheduler hands items to free GPUs, an item of width N taking N GPUs at once. GPUs
// are positions in the pool's list (0 … gpus−1); "adjacent" means next to each other
// in that list. The dispatcher (real time) and the simulator (virtual time) drive the
// same Scheduler, each with its own clock: Next only compares now with the running
// items' starts and the items' weights.
type Scheduler interface {
	// Next returns the item to start now and the GPUs it takes (rising), or ok
	// false when nothing should start on the free GPUs now. free lists the idle
	// usable GPUs (a GPU not in the pool is ignored), running every item still
	// running. The caller starts the item, takes its GPUs out of free, adds it to
	// running and calls again until ok is false. When nothing runs, Next starts
	// whatever fits rather than stall; it returns false with nothing running only
	// when no queued item fits the free GPUs.
	Next(now float64, free []int, running []Running) (item int, gpus []int, ok bool)
	// Requeue queues the item again at the back (a retry); avoid lists the GPUs
	// it failed on, which it avoids while other GPUs of the pool can take it. It
	// returns false, queuing nothing, when the item no longer fits the pool (GPUs
	// were removed while it ran): the caller reports it as not run again.
	Requeue(item int, avoid []int) bool
	// Remove takes a GPU out of the pool for good (quarantine) and returns the
	// queued items that no longer fit in what is left, taken out of the queue: the
	// caller reports them as not run. A GPU suspended for a while is not removed;
	// the caller just leaves it out of free.
	Remove(gpu int) (unfit []int)
	// Hold reports the item that GPUs are held for, and when its reservation
	// completes by the weights (its expected start), as of the last Next that
	// looked at it; ok is false when nothing is held.
	Hold() (item int, at float64, ok bool)
	// Len is the number of items not yet handed out.
	Len() int
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
	return fmt.Sprintf("item %s needs %d GPUs but the pool has %d: give it gpus=%d at most, or run on more GPUs", e.Key, e.Width, e.Pool, e.Pool)
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

// NewScheduler returns the scheduler of the named policy for items on a pool of
// gpus GPUs. A workload of single-GPU items gets exactly the policy's Queue (LPT or
// planned) behind the Scheduler interface; one with multi-GPU items gets Blocks over
// the policy's block order (BlockOrderOf). An item wider than the pool is a
// *WidthError.
func NewScheduler(policy string, items []Item, gpus int) (Scheduler, error) {
	fresh, err := Prepare(policy, items, gpus)
	if err != nil {
		return nil, err
	}
	return fresh(), nil
}

// Prepare plans once what NewScheduler returns and gives a function that makes a
// fresh Scheduler following that plan at each call: a simulation replays many runs
// (or many shards, docs/runners.md) without planning again for each.
func Prepare(policy string, items []Item, gpus int) (func() Scheduler, error) {
	if gpus < 1 {
		return nil, fmt.Errorf("%d GPUs: want at least 1", gpus)
	}
	if err := CheckWidths(items, gpus); err != nil {
		return nil, err
	}
	if !Mixed(items) {
		queue, err := queues(policy, items, gpus)
		if err != nil {
			return nil, err
		}
		return func() Scheduler { return OnSlots(queue(), gpus) }, nil
	}
	by, err := BlockOrderOf(policy)
	if err != nil {
		return nil, err
	}
	order := BlockOrder(items, by)
	return func() Scheduler {
		b, _ := NewBlocks(items, order, gpus) // cannot fail: gpus and widths were checked
		return b
	}, nil
}

// OnSlots drives a single-GPU Queue through the Scheduler interface exactly as the
// dispatcher drives it on its own: each free GPU, in the order given, asks
// q.Next(gpu); when nothing runs and every free GPU was refused, the first free
// GPU takes q.Next(AnySlot).
func OnSlots(q Queue, gpus int) Scheduler {
	return &slots{q: q, gone: make([]bool, gpus), pool: gpus}
}

type slots struct {
	mu   sync.Mutex // guards gone, pool and ids; q has its own lock
	q    Queue
	gone []bool
	pool int
	ids  []int // GPU lists are handed out of this, one allocation per 1024
}

// one returns a list of the one GPU g, capped so that an append cannot reach the next.
func (s *slots) one(g int) []int {
	if len(s.ids) == 0 {
		s.ids = make([]int, 1024)
	}
	l := s.ids[:1:1]
	l[0] = g
	s.ids = s.ids[1:]
	return l
}

func (s *slots) usable(g int) bool { return g >= 0 && g < len(s.gone) && !s.gone[g] }

func (s *slots) Next(now float64, free []int, running []Running) (int, []int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, g := range free {
		if !s.usable(g) {
			continue
		}
		if i, ok := s.q.Next(g); ok {
			return i, s.one(g), true
		}
	}
	if len(running) > 0 {
		return 0, nil, false
	}
	for _, g := range free {
		if s.usable(g) {
			if i, ok := s.q.Next(AnySlot); ok {
				return i, s.one(g), true
			}
			break
		}
	}
	return 0, nil, false
}

func (s *slots) Requeue(item int, avoid []int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pool < 1 {
		return false
	}
	a := AnySlot
	if len(avoid) > 0 {
		a = avoid[0]
	}
	s.q.Requeue(item, a)
	return true
}

func (s *slots) Remove(gpu int) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.usable(gpu) {
		return nil
	}
	s.gone[gpu] = true
	s.pool--
	if s.pool > 0 {
		return nil // every item takes one GPU: all still fit
	}
	var unfit []int
	for s.q.Len() > 0 {
		i, ok := s.q.Next(AnySlot)
		if !ok {
			break
		}
		unfit = append(unfit, i)
	}
	return unfit
}

func (s *slots) Hold() (int, float64, bool) { return 0, 0, false }

func (s *slots) Len() int { return s.q.Len() }

// Block orders: how a workload with multi-GPU items is ordered before Blocks
// backfills it. Each puts unknown items first, in listing order, as Order does.
const (
	ByDuration   = "duration"    // longest weight first (LPT)
	ByGPUSeconds = "gpu-seconds" // most GPU-seconds (GPUs × weight) first
	ByWidest     = "widest"      // most GPUs first, then longest
)

// BlockOrders lists the block orders.
func BlockOrders() []string { return []string{ByDuration, ByGPUSeconds, ByWidest} }

// BlockOrderOf is the block order a run policy uses on a workload with multi-GPU
// items: lpt keeps its meaning (longest first); planned, whose per-GPU plan does not
// apply to blocks, takes the order the simulations chose (docs/performance.md).
func BlockOrderOf(policy string) (string, error) {
	switch policy {
	case PolicyLPT:
		return ByDuration, nil
	case PolicyPlanned, "":
		return ByWidest, nil
	}
	return "", fmt.Errorf("unknown scheduling policy %q: use %s", policy, strings.Join(Policies(), " or "))
}

// BlockOrder returns the indices of items in the block order by (one of
// BlockOrders; anything else is ByDuration). Ties keep listing order.
func BlockOrder(items []Item, by string) []int {
	// Sort keys, larger first: k1, then k2; unknown items before all (+Inf).
	k1 := make([]float64, len(items))
	k2 := make([]float64, len(items))
	for i := range items {
		it := &items[i]
		switch {
		case !it.Known:
			k1[i], k2[i] = math.Inf(1), 0
		case by == ByGPUSeconds:
			k1[i], k2[i] = float64(it.Width())*it.Weight, it.Weight
		case by == ByWidest:
			k1[i], k2[i] = float64(it.Width()), it.Weight
		default:
			k1[i] = it.Weight
		}
	}
	order := make([]int, len(items))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int {
		if c := cmp.Compare(k1[y], k1[x]); c != 0 {
			return c
		}
		if c := cmp.Compare(k2[y], k2[x]); c != 0 {
			return c
		}
		return cmp.Compare(items[x].Seq, items[y].Seq)
	})
	return order
}

// Blocks is the scheduler of a workload with multi-GPU items: one queue in a given
// order whose first item (the head) starts as soon as enough GPUs are free, on
// adjacent GPUs where it can. When too few are free, GPUs are held for the head:
// its reservation completes when, by the running items' weights and starts, enough
// GPUs will be free. Meanwhile a later item may start (backfill) only if it fits the
// free GPUs now and, by its weight, either ends before the reservation completes or
// takes only GPUs the head will not need then (EASY backfilling). Unknown items
// never backfill. A running item past its weight, or unknown, is expected to end
// any moment: it holds the reservation at "now", so nothing backfills on the held
// GPUs while it overruns.
type Blocks struct {
	mu    sync.Mutex // every exported method takes it; the unexported ones run under it
	w     []float64  // by item
	known []bool
	width []int
	gone  []bool // by GPU: out of the pool
	pool  int    // GPUs still in the pool

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
// into items, each once) on a pool of gpus GPUs. An item wider than the pool is a
// *WidthError.
func NewBlocks(items []Item, order []int, gpus int) (*Blocks, error) {
	if gpus < 1 {
		return nil, fmt.Errorf("%d GPUs: want at least 1", gpus)
	}
	if err := CheckWidths(items, gpus); err != nil {
		return nil, err
	}
	b := &Blocks{
		w: make([]float64, len(items)), known: make([]bool, len(items)), width: make([]int, len(items)),
		gone: make([]bool, gpus), pool: gpus, classes: map[int]*class{},
		free: make([]bool, gpus), avoid: make([]bool, gpus),
		ent: make([]entryB, 0, len(order)),
	}
	for i, it := range items {
		b.w[i], b.known[i], b.width[i] = it.Weight, it.Known, it.Width()
	}
	count := map[int]int{}
	for _, i := range order {
		count[b.width[i]]++
	}
	for i := range items {
		if wd := b.width[i]; b.classes[wd] == nil {
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
	c := b.classes[b.width[item]]
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

func (b *Blocks) Hold() (int, float64, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.hold.item, b.hold.at, b.hold.ok
}

func (b *Blocks) Requeue(item int, avoid []int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if item < 0 || item >= len(b.w) || b.width[item] > b.pool {
		return false
	}
	b.push(item, slices.Clone(avoid))
	return true
}

func (b *Blocks) Remove(gpu int) []int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if gpu < 0 || gpu >= len(b.gone) || b.gone[gpu] {
		return nil
	}
	b.gone[gpu] = true
	b.pool--
	var unfit []int
	for p := b.head; p < len(b.ent); p++ {
		if e := b.ent[p]; e.live && b.width[e.item] > b.pool {
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
	b.classes[b.width[e.item]].t.set(e.local, math.Inf(1))
	for b.head < len(b.ent) && !b.ent[b.head].live {
		b.head++
	}
}

func (b *Blocks) Next(now float64, free []int, running []Running) (int, []int, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
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
		if g >= 0 && g < len(b.free) && !b.gone[g] && !b.free[g] {
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
	n := b.pool
	for _, g := range e.avoid {
		if g >= 0 && g < len(b.gone) && !b.gone[g] {
			n--
		}
	}
	return n >= b.width[e.item]
}

// place picks the GPUs entry p would take from the free ones now, or false. It
// avoids the GPUs the entry failed on when enough others are free; when they are
// not, it waits for others if the pool has them, unless force.
func (b *Blocks) place(p, nfree int, force bool) ([]int, bool) {
	e := &b.ent[p]
	w := b.width[e.item]
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

// alloc takes w of the free GPUs (skipping avoided ones when skip): the first w of
// the shortest run of adjacent free GPUs that holds w (lowest first on ties), so
// that longer runs stay whole for wider items; when no run holds w, the longest
// runs first. The caller has checked that w are free.
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

// reserve returns when the head's reservation completes (enough GPUs it may use
// free, by the running items' weights) and how many GPUs free by then it will not
// need (extra). A running item that is unknown or past its weight may end any
// moment: it counts as ending now for when the reservation completes, so nothing
// backfills into the wait for it, but not for extra, so nothing takes a GPU the
// head may need should it run on. +Inf when the running items cannot free
// enough (GPUs left out of free for a while): then nothing is held.
func (b *Blocks) reserve(h int, now float64, running []Running) (float64, int) {
	e := &b.ent[h]
	w := b.width[e.item]
	strict := b.strict(e)
	counts := func(g int) bool {
		return g >= 0 && g < len(b.gone) && !b.gone[g] && !(strict && slices.Contains(e.avoid, g))
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
		ec := endCount{at: now, n: n} // unknown, or past its weight
		if r.Item >= 0 && r.Item < len(b.w) && b.known[r.Item] && r.Start+b.w[r.Item] > now {
			ec.at, ec.sure = r.Start+b.w[r.Item], true
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
// now: known, fits the free GPUs, and by its weight ends before at or takes no more
// than the extra GPUs.
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
			if k := c.t.first(from, lim); k >= 0 && (best < 0 || c.pos[k] < best) {
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

// minTree is a segment tree of the least value over positions, to find the first
// position from lo whose value is at most x in O(log n).
type minTree struct {
	n int       // leaves, a power of two
	v []float64 // v[1] the root; leaves at n … 2n−1
}

func newMinTree(size int) *minTree {
	n := 1
	for n < size {
		n *= 2
	}
	t := &minTree{n: n, v: make([]float64, 2*n)}
	for i := range t.v {
		t.v[i] = math.Inf(1)
	}
	return t
}

func (t *minTree) set(p int, x float64) {
	i := p + t.n
	t.v[i] = x
	for i /= 2; i >= 1; i /= 2 {
		t.v[i] = min(t.v[2*i], t.v[2*i+1])
	}
}

// first returns the least position ≥ lo whose value is ≤ x, or −1.
func (t *minTree) first(lo int, x float64) int {
	if lo >= t.n {
		return -1
	}
	return t.find(1, 0, t.n, lo, x)
}

func (t *minTree) find(node, l, r, lo int, x float64) int {
	if r <= lo || t.v[node] > x {
		return -1
	}
	if r-l == 1 {
		return l
	}
	m := (l + r) / 2
	if p := t.find(2*node, l, m, lo, x); p >= 0 {
		return p
	}
	return t.find(2*node+1, m, r, lo, x)
}
