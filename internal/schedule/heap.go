package schedule

// idHeap is a heap of ids 0 … n−1 (the merge's suites, the planner's slots), first
// the one less puts first, that can remove or re-rank an id it holds.
type idHeap struct {
	s    []int
	at   []int // by id: its place in s, −1 when not held
	less func(a, b int) bool
}

func newIDHeap(n int, less func(a, b int) bool) *idHeap {
	h := &idHeap{at: make([]int, n), less: less}
	for i := range h.at {
		h.at[i] = -1
	}
	return h
}

func (h *idHeap) has(s int) bool { return h.at[s] >= 0 }

// top is the first id, −1 when empty.
func (h *idHeap) top() int {
	if len(h.s) == 0 {
		return -1
	}
	return h.s[0]
}

func (h *idHeap) push(s int) {
	h.s = append(h.s, s)
	h.at[s] = len(h.s) - 1
	h.up(len(h.s) - 1)
}

func (h *idHeap) remove(s int) {
	i := h.at[s]
	last := len(h.s) - 1
	h.swap(i, last)
	h.s = h.s[:last]
	h.at[s] = -1
	if i < last {
		h.fixAt(i)
	}
}

func (h *idHeap) fix(s int) { h.fixAt(h.at[s]) }

func (h *idHeap) heapify() {
	for i := len(h.s)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *idHeap) fixAt(i int) {
	if !h.up(i) {
		h.down(i)
	}
}

func (h *idHeap) swap(i, j int) {
	h.s[i], h.s[j] = h.s[j], h.s[i]
	h.at[h.s[i]], h.at[h.s[j]] = i, j
}

// up moves place i up while it goes first; it reports whether it moved.
func (h *idHeap) up(i int) bool {
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

func (h *idHeap) down(i int) {
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
